/* Batches (docs/driver.md "Memory"): cuMemcpyBatchAsync and
 * cuMemcpy3DBatchAsync are their copies one by one on the stream, each
 * through the path of the single copy it is (copy.c), checked as that
 * copy is; the first that fails ends the batch, its index the driver's
 * failIdx (SIZE_MAX for a failure of the batch as a whole).  Batched
 * prefetches and discards of managed memory are the backend driver's
 * own batch calls (MEM_BATCH). */
#include "call.h"

#include <stdint.h>

#include "cuda_ops.h"

#define NO_INDEX SIZE_MAX
#define BATCH_MAX 65536u

/* A batch takes no legacy stream: NULL is it unless per-thread. */
static int legacy(CUstream s, int per_thread)
{
    return s == CU_STREAM_LEGACY || (s == NULL && !per_thread);
}

static int bad_order(CUmemcpySrcAccessOrder o, unsigned int flags)
{
    return o < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
           o > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
           (flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
}

/* First indices that start at 0, grow, and stay below count. */
static int bad_indices(const size_t *first, size_t n, size_t count)
{
    if (n == 0 || n > count || first == NULL || first[0] != 0)
        return 1;
    for (size_t i = 1; i < n; i++)
        if (first[i] <= first[i - 1] || first[i] >= count)
            return 1;
    return 0;
}

static CUresult copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs,
                           size_t *sizes, size_t count,
                           CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                           size_t numAttrs, size_t *failIdx, CUstream s,
                           int per_thread)
{
    if (failIdx != NULL)
        *failIdx = NO_INDEX;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (count == 0 || dsts == NULL || srcs == NULL || sizes == NULL ||
        attrs == NULL || bad_indices(attrsIdxs, numAttrs, count) ||
        legacy(s, per_thread))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < numAttrs; k++)
        if (bad_order(attrs[k].srcAccessOrder, attrs[k].flags))
            return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        CUresult r =
            per_thread ? cuMemcpyAsync_ptsz(dsts[i], srcs[i], sizes[i], s)
                       : cuMemcpyAsync(dsts[i], srcs[i], sizes[i], s);
        if (r != CUDA_SUCCESS) {
            if (failIdx != NULL)
                *failIdx = i;
            return r;
        }
    }
    return CUDA_SUCCESS;
}

/* One side of a 3D batch copy: a pointer, its rows rowLength elements
 * (bytes, between pointers) apart, its layers layerHeight rows; 0 packs
 * them to the extent.  An array side, whose elements are the array's,
 * is not supported yet. */
static CUresult operand(const CUmemcpy3DOperand *o, const CUextent3D *e,
                        CUmemorytype *type, CUdeviceptr *p, size_t *pitch,
                        size_t *height)
{
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER)
        return CUDA_ERROR_INVALID_VALUE;
    size_t row = o->op.ptr.rowLength, layer = o->op.ptr.layerHeight;
    if ((row != 0 && row < e->width) || (layer != 0 && layer < e->height))
        return CUDA_ERROR_INVALID_VALUE;
    *type = CU_MEMORYTYPE_UNIFIED;
    *p = o->op.ptr.ptr;
    *pitch = row != 0 ? row : e->width;
    *height = layer != 0 ? layer : e->height;
    return CUDA_SUCCESS;
}

static CUresult copy3d_op(const CUDA_MEMCPY3D_BATCH_OP *op, CUstream s,
                          int per_thread)
{
    const CUextent3D *e = &op->extent;
    CUDA_MEMCPY3D d = {0};
    if (e->width == 0 || e->height == 0 || e->depth == 0 ||
        bad_order(op->srcAccessOrder, op->flags))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = operand(&op->src, e, &d.srcMemoryType, &d.srcDevice,
                         &d.srcPitch, &d.srcHeight);
    if (r == CUDA_SUCCESS)
        r = operand(&op->dst, e, &d.dstMemoryType, &d.dstDevice,
                    &d.dstPitch, &d.dstHeight);
    if (r != CUDA_SUCCESS)
        return r;
    d.WidthInBytes = e->width;
    d.Height = e->height;
    d.Depth = e->depth;
    return per_thread ? cuMemcpy3DAsync_v2_ptsz(&d, s)
                      : cuMemcpy3DAsync_v2(&d, s);
}

static CUresult copy3d_batch(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                             size_t *failIdx, unsigned long long flags,
                             CUstream s, int per_thread)
{
    if (failIdx != NULL)
        *failIdx = NO_INDEX;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (numOps == 0 || opList == NULL || flags != 0 || legacy(s, per_thread))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numOps; i++) {
        CUresult r = copy3d_op(&opList[i], s, per_thread);
        if (r != CUDA_SUCCESS) {
            if (failIdx != NULL)
                *failIdx = i;
            return r;
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs,
                               size_t *sizes, size_t count,
                               CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                               size_t numAttrs, CUstream hStream)
{
    return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                      NULL, hStream, 0);
}

CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                    size_t *sizes, size_t count,
                                    CUmemcpyAttributes *attrs,
                                    size_t *attrsIdxs, size_t numAttrs,
                                    CUstream hStream)
{
    return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                      NULL, hStream, 1);
}

CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs,
                            size_t *sizes, size_t count,
                            CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                            size_t numAttrs, size_t *failIdx,
                            CUstream hStream)
{
    return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                      failIdx, hStream, 0);
}

CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                 size_t *sizes, size_t count,
                                 CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                 size_t numAttrs, size_t *failIdx,
                                 CUstream hStream)
{
    return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                      failIdx, hStream, 1);
}

CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                 unsigned long long flags, CUstream hStream)
{
    return copy3d_batch(numOps, opList, NULL, flags, hStream, 0);
}

CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps,
                                      CUDA_MEMCPY3D_BATCH_OP *opList,
                                      unsigned long long flags,
                                      CUstream hStream)
{
    return copy3d_batch(numOps, opList, NULL, flags, hStream, 1);
}

CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                              size_t *failIdx, unsigned long long flags,
                              CUstream hStream)
{
    return copy3d_batch(numOps, opList, failIdx, flags, hStream, 0);
}

CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps,
                                   CUDA_MEMCPY3D_BATCH_OP *opList,
                                   size_t *failIdx, unsigned long long flags,
                                   CUstream hStream)
{
    return copy3d_batch(numOps, opList, failIdx, flags, hStream, 1);
}

/* Prefetches and discards ------------------------------------------------ */

enum { PREFETCH, DISCARD, DISCARD_PREFETCH };

/* Request: header (u64 stream, u8 0), u8 kind, u64 flags, u32 count,
 * count x {u64 address, u64 size}, u32 locations, locations x {i32
 * type, i32 id, u64 first index}.  Reply: i32. */
static CUresult mem_batch(uint8_t kind, CUdeviceptr *dptrs, size_t *sizes,
                          size_t count, CUmemLocation *locs, size_t *first,
                          size_t nlocs, unsigned long long flags,
                          uint64_t stream)
{
    struct apigen_call c;
    if ((count > 0 && (dptrs == NULL || sizes == NULL)) ||
        (nlocs > 0 && (locs == NULL || first == NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    if (nlocs > count)
        return CUDA_ERROR_INVALID_VALUE;
    if (count > BATCH_MAX)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = cuda_fe_copy_begin(&c, stream, 0);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, kind);
    apigen_put_u64(&c, flags);
    apigen_put_u32(&c, (uint32_t)count);
    for (size_t i = 0; i < count; i++) {
        apigen_put_u64(&c, dptrs[i]);
        apigen_put_u64(&c, sizes[i]);
    }
    apigen_put_u32(&c, (uint32_t)nlocs);
    for (size_t i = 0; i < nlocs; i++) {
        apigen_put_i32(&c, locs[i].type);
        apigen_put_i32(&c, locs[i].id);
        apigen_put_u64(&c, first[i]);
    }
    return cuda_fe_end(&c, cuda_fe_run(&c, CUDA_OP_MEM_BATCH, APIGEN_DEVICE));
}

CUresult cuMemPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes,
                                 size_t count, CUmemLocation *prefetchLocs,
                                 size_t *prefetchLocIdxs,
                                 size_t numPrefetchLocs,
                                 unsigned long long flags, CUstream hStream)
{
    return mem_batch(PREFETCH, dptrs, sizes, count, prefetchLocs,
                     prefetchLocIdxs, numPrefetchLocs, flags,
                     cuda_fe_stream_wire(hStream, 0));
}

CUresult cuMemPrefetchBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes,
                                      size_t count,
                                      CUmemLocation *prefetchLocs,
                                      size_t *prefetchLocIdxs,
                                      size_t numPrefetchLocs,
                                      unsigned long long flags,
                                      CUstream hStream)
{
    return mem_batch(PREFETCH, dptrs, sizes, count, prefetchLocs,
                     prefetchLocIdxs, numPrefetchLocs, flags,
                     cuda_fe_stream_wire(hStream, 1));
}

CUresult cuMemDiscardBatchAsync(CUdeviceptr *dptrs, size_t *sizes,
                                size_t count, unsigned long long flags,
                                CUstream hStream)
{
    return mem_batch(DISCARD, dptrs, sizes, count, NULL, NULL, 0, flags,
                     cuda_fe_stream_wire(hStream, 0));
}

CUresult cuMemDiscardBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes,
                                     size_t count, unsigned long long flags,
                                     CUstream hStream)
{
    return mem_batch(DISCARD, dptrs, sizes, count, NULL, NULL, 0, flags,
                     cuda_fe_stream_wire(hStream, 1));
}

CUresult cuMemDiscardAndPrefetchBatchAsync(
    CUdeviceptr *dptrs, size_t *sizes, size_t count,
    CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
    size_t numPrefetchLocs, unsigned long long flags, CUstream hStream)
{
    return mem_batch(DISCARD_PREFETCH, dptrs, sizes, count, prefetchLocs,
                     prefetchLocIdxs, numPrefetchLocs, flags,
                     cuda_fe_stream_wire(hStream, 0));
}

CUresult cuMemDiscardAndPrefetchBatchAsync_ptsz(
    CUdeviceptr *dptrs, size_t *sizes, size_t count,
    CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
    size_t numPrefetchLocs, unsigned long long flags, CUstream hStream)
{
    return mem_batch(DISCARD_PREFETCH, dptrs, sizes, count, prefetchLocs,
                     prefetchLocIdxs, numPrefetchLocs, flags,
                     cuda_fe_stream_wire(hStream, 1));
}
