/*
 * Batched copies and prefetches (CUDA 12.8+): each batch is validated as
 * a whole, as natively, then its entries are enqueued one by one on the
 * copy paths of cudaMemcpyAsync, cudaMemcpy3DAsync and
 * cudaMemPrefetchAsync, in order on the stream.  That is stream order
 * for the batch; host sources are read before the call returns, which
 * meets every cudaMemcpySrcAccessOrder.  Location hints and
 * cudaMemcpyFlagPreferOverlapWithCompute are hints: not forwarded.
 */
#include "mem3d.h"

#include "cudart_fe_gen.h"
#include "streams.h"

#pragma GCC visibility push(default)
cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts,
                                      const void *const *srcs,
                                      const size_t *sizes, size_t count,
                                      struct cudaMemcpyAttributes *attrs,
                                      size_t *attrsIdxs, size_t numAttrs,
                                      cudaStream_t stream);
cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps,
                                        struct cudaMemcpy3DBatchOp *opList,
                                        unsigned long long flags,
                                        cudaStream_t stream);
cudaError_t cudaMemPrefetchBatchAsync_ptsz(
    void **dptrs, size_t *sizes, size_t count,
    struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
    size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream);
#pragma GCC visibility pop

/* The legacy stream may not carry a batch; the per-thread entry points'
 * null stream is the thread's own. */
static int stream_ok(cudaStream_t s, int per_thread)
{
    return s != cudaStreamLegacy && (s != NULL || per_thread);
}

static int order_ok(enum cudaMemcpySrcAccessOrder o)
{
    return o == cudaMemcpySrcAccessOrderStream ||
           o == cudaMemcpySrcAccessOrderDuringApiCall ||
           o == cudaMemcpySrcAccessOrderAny;
}

/* Index lists that assign n items to count entries: first 0, strictly
 * increasing, last below count, n at most count. */
static int idxs_ok(const size_t *idxs, size_t n, size_t count)
{
    if (idxs == NULL || n == 0 || n > count || idxs[0] != 0)
        return 0;
    for (size_t k = 1; k < n; k++)
        if (idxs[k] <= idxs[k - 1] || idxs[k] >= count)
            return 0;
    return 1;
}

static cudaError_t memcpy_batch(void *const *dsts, const void *const *srcs,
                                const size_t *sizes, size_t count,
                                const struct cudaMemcpyAttributes *attrs,
                                const size_t *attrsIdxs, size_t numAttrs,
                                cudaStream_t stream, int per_thread)
{
    if (count == 0 || dsts == NULL || srcs == NULL || sizes == NULL ||
        attrs == NULL || !idxs_ok(attrsIdxs, numAttrs, count) ||
        !stream_ok(stream, per_thread))
        return cudaErrorInvalidValue;
    for (size_t k = 0; k < numAttrs; k++)
        if (!order_ok(attrs[k].srcAccessOrder))
            return cudaErrorInvalidValue;
    for (size_t i = 0; i < count; i++) {
        cudaError_t e = fe_copy_async(dsts[i], srcs[i], sizes[i],
                                      cudaMemcpyDefault, stream, per_thread);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs,
                                 const size_t *sizes, size_t count,
                                 struct cudaMemcpyAttributes *attrs,
                                 size_t *attrsIdxs, size_t numAttrs,
                                 cudaStream_t stream)
{
    return cudart_fe_ret(memcpy_batch(dsts, srcs, sizes, count, attrs,
                                      attrsIdxs, numAttrs, stream, 0));
}

cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts,
                                      const void *const *srcs,
                                      const size_t *sizes, size_t count,
                                      struct cudaMemcpyAttributes *attrs,
                                      size_t *attrsIdxs, size_t numAttrs,
                                      cudaStream_t stream)
{
    return cudart_fe_ret(memcpy_batch(dsts, srcs, sizes, count, attrs,
                                      attrsIdxs, numAttrs, stream, 1));
}

/* One operand of a 3D batch copy; elem is its array's element size, 0
 * for a pointer. */
static cudaError_t operand_side(const struct cudaMemcpy3DOperand *o,
                                struct fe_side *out, size_t *elem)
{
    if (o->type == cudaMemcpyOperandTypeArray) {
        uint64_t id;
        cudaError_t e = fe_array_lookup(o->op.array.array, &id, elem);
        if (e != cudaSuccess)
            return e;
        *out = (struct fe_side){FE_SIDE_ARRAY, id, 0, 0, 0,
                                o->op.array.offset.y, o->op.array.offset.z};
        return __builtin_mul_overflow(o->op.array.offset.x, *elem, &out->x)
                   ? cudaErrorInvalidValue
                   : cudaSuccess;
    }
    if (o->type != cudaMemcpyOperandTypePointer || o->op.ptr.ptr == NULL)
        return cudaErrorInvalidValue;
    *elem = 0;
    *out = (struct fe_side){fe_ptr_side(o->op.ptr.ptr, cudaMemcpyDefault, 0),
                            (uint64_t)(uintptr_t)o->op.ptr.ptr,
                            o->op.ptr.rowLength, o->op.ptr.layerHeight,
                            0, 0, 0};
    return cudaSuccess;
}

/* A pointer operand's row length is in elements; zero means rows packed
 * as the extent is, as is a zero layer height. */
static cudaError_t pack_pointer(struct fe_side *s, size_t elem,
                                const struct fe_box *box)
{
    if (s->kind == FE_SIDE_ARRAY)
        return cudaSuccess;
    if (s->pitch == 0)
        s->pitch = box->w;
    else if (__builtin_mul_overflow(s->pitch, elem, &s->pitch) ||
             s->pitch < box->w)
        return cudaErrorInvalidValue;
    if (s->ysize == 0)
        s->ysize = box->h;
    else if (s->ysize < box->h)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

static cudaError_t batch_op(const struct cudaMemcpy3DBatchOp *op,
                            struct fe_side *d, struct fe_side *s,
                            struct fe_box *box)
{
    size_t de, se;
    const struct cudaExtent *x = &op->extent;
    if (!order_ok(op->srcAccessOrder) || x->width == 0 || x->height == 0 ||
        x->depth == 0)
        return cudaErrorInvalidValue;
    cudaError_t e = operand_side(&op->dst, d, &de);
    if (e == cudaSuccess)
        e = operand_side(&op->src, s, &se);
    if (e != cudaSuccess)
        return e;
    if (de != 0 && se != 0 && de != se)
        return cudaErrorInvalidValue;
    size_t elem = de ? de : (se ? se : 1);
    *box = (struct fe_box){0, x->height, x->depth};
    if (__builtin_mul_overflow(x->width, elem, &box->w))
        return cudaErrorInvalidValue;
    e = pack_pointer(d, elem, box);
    if (e == cudaSuccess)
        e = pack_pointer(s, elem, box);
    return e;
}

static cudaError_t memcpy3d_batch(size_t numOps,
                                  const struct cudaMemcpy3DBatchOp *ops,
                                  unsigned long long flags,
                                  cudaStream_t stream, int per_thread)
{
    if (numOps == 0 || ops == NULL || flags != 0 ||
        !stream_ok(stream, per_thread))
        return cudaErrorInvalidValue;
    struct fe_side d, s;
    struct fe_box box;
    for (size_t i = 0; i < numOps; i++) {
        cudaError_t e = batch_op(&ops[i], &d, &s, &box);
        if (e != cudaSuccess)
            return e;
    }
    uint64_t wire = fe_stream_wire(stream, per_thread);
    for (size_t i = 0; i < numOps; i++) {
        (void)batch_op(&ops[i], &d, &s, &box);
        cudaError_t e = fe_copy3d(&d, &s, &box, 1, wire);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpy3DBatchAsync(size_t numOps,
                                   struct cudaMemcpy3DBatchOp *opList,
                                   unsigned long long flags,
                                   cudaStream_t stream)
{
    return cudart_fe_ret(memcpy3d_batch(numOps, opList, flags, stream, 0));
}

cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps,
                                        struct cudaMemcpy3DBatchOp *opList,
                                        unsigned long long flags,
                                        cudaStream_t stream)
{
    return cudart_fe_ret(memcpy3d_batch(numOps, opList, flags, stream, 1));
}

/* Batched prefetches ------------------------------------------------------ */

static cudaError_t prefetch_batch(void **dptrs, const size_t *sizes,
                                  size_t count,
                                  const struct cudaMemLocation *locs,
                                  const size_t *locIdxs, size_t numLocs,
                                  unsigned long long flags,
                                  cudaStream_t stream, int per_thread)
{
    if (count == 0 || dptrs == NULL || sizes == NULL || locs == NULL ||
        flags != 0 || !idxs_ok(locIdxs, numLocs, count))
        return cudaErrorInvalidValue;
    uint64_t wire = fe_stream_wire(stream, per_thread);
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        if (k + 1 < numLocs && locIdxs[k + 1] == i)
            k++;
        cudaError_t e = cudart_rpc_MEM_PREFETCH_ASYNC(
            wire, dptrs[i], sizes[i], locs[k].type, locs[k].id, 0);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemPrefetchBatchAsync(void **dptrs, size_t *sizes,
                                      size_t count,
                                      struct cudaMemLocation *prefetchLocs,
                                      size_t *prefetchLocIdxs,
                                      size_t numPrefetchLocs,
                                      unsigned long long flags,
                                      cudaStream_t stream)
{
    return cudart_fe_ret(prefetch_batch(dptrs, sizes, count, prefetchLocs,
                                        prefetchLocIdxs, numPrefetchLocs,
                                        flags, stream, 0));
}

cudaError_t cudaMemPrefetchBatchAsync_ptsz(
    void **dptrs, size_t *sizes, size_t count,
    struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
    size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream)
{
    return cudart_fe_ret(prefetch_batch(dptrs, sizes, count, prefetchLocs,
                                        prefetchLocIdxs, numPrefetchLocs,
                                        flags, stream, 1));
}
