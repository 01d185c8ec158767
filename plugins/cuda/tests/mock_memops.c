/*
 * Stream memory operations and tensor maps of the mock driver
 * (mock_driver.h): a write stores its value at once (the mock's streams
 * run everything as it is enqueued), a wait checks what the driver
 * checks and returns (its condition holds in the tests, which write
 * first); a tensor map's 128 bytes are the parameters it was encoded
 * from, which the mock's tests read back.
 */
#include "be.h"
#include "mock_driver.h"

#include <string.h>

/* The checks the driver makes of one operation: a known type, flags of
 * that type, an address aligned to its value. */
CUresult mock_memop_check(const CUstreamBatchMemOpParams *op)
{
    CUdeviceptr a = op->waitValue.address;
    switch (op->operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        if ((op->waitValue.flags & ~(unsigned)CU_STREAM_WAIT_VALUE_FLUSH) >
            CU_STREAM_WAIT_VALUE_NOR)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        if (op->writeValue.flags > CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_STREAM_MEM_OP_BARRIER:
        return op->memoryBarrier.flags <= CU_STREAM_MEMORY_BARRIER_TYPE_GPU
                   ? CUDA_SUCCESS
                   : CUDA_ERROR_INVALID_VALUE;
    default:
        /* No flush of remote writes on the mock's devices. */
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    size_t len = op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
                         op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64
                     ? 8
                     : 4;
    return a != 0 && a % len == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

void mock_memop_run(const CUstreamBatchMemOpParams *op)
{
    void *p = (void *)(uintptr_t)op->writeValue.address;
    if (op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32)
        memcpy(p, &op->writeValue.value, 4);
    else if (op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64)
        memcpy(p, &op->writeValue.value64, 8);
}

static CUresult batch(CUstream s, unsigned int n,
                      CUstreamBatchMemOpParams *ops, unsigned int flags)
{
    (void)s;
    if (flags != 0 || n == 0 || n > 256)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned int i = 0; i < n; i++) {
        CUresult r = mock_memop_check(&ops[i]);
        if (r != CUDA_SUCCESS)
            return r;
    }
    for (unsigned int i = 0; i < n; i++)
        mock_memop_run(&ops[i]);
    return CUDA_SUCCESS;
}

static CUresult one(CUstream s, CUstreamBatchMemOpType type, CUdeviceptr a,
                    cuuint64_t v, unsigned int flags)
{
    CUstreamBatchMemOpParams op;
    memset(&op, 0, sizeof(op));
    op.operation = type;
    op.waitValue.address = a;
    op.waitValue.flags = flags;
    if (type == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
        type == CU_STREAM_MEM_OP_WRITE_VALUE_64)
        op.waitValue.value64 = v;
    else
        op.waitValue.value = (cuuint32_t)v;
    return batch(s, 1, &op, 0);
}

static CUresult wait32(CUstream s, CUdeviceptr a, cuuint32_t v,
                       unsigned int f)
{
    return one(s, CU_STREAM_MEM_OP_WAIT_VALUE_32, a, v, f);
}

static CUresult write32(CUstream s, CUdeviceptr a, cuuint32_t v,
                        unsigned int f)
{
    return one(s, CU_STREAM_MEM_OP_WRITE_VALUE_32, a, v, f);
}

static CUresult wait64(CUstream s, CUdeviceptr a, cuuint64_t v,
                       unsigned int f)
{
    return one(s, CU_STREAM_MEM_OP_WAIT_VALUE_64, a, v, f);
}

static CUresult write64(CUstream s, CUdeviceptr a, cuuint64_t v,
                        unsigned int f)
{
    return one(s, CU_STREAM_MEM_OP_WRITE_VALUE_64, a, v, f);
}

/* The legacy forms of CUDA 8 are another driver function each: the
 * mock's refuse a barrier (only the _v2 API has one), as the header
 * says. */
static CUresult batch_legacy(CUstream s, unsigned int n,
                             CUstreamBatchMemOpParams *ops,
                             unsigned int flags)
{
    for (unsigned int i = 0; i < n && ops != NULL; i++)
        if (ops[i].operation == CU_STREAM_MEM_OP_BARRIER)
            return CUDA_ERROR_INVALID_VALUE;
    return batch(s, n, ops, flags);
}

/* A tensor map: the magic, the address, the rank, the dims. */
#define MAP_MAGIC 0x70616d74u

static CUresult tiled(CUtensorMap *map, CUtensorMapDataType type,
                      cuuint32_t rank, void *addr, const cuuint64_t *dims,
                      const cuuint64_t *strides, const cuuint32_t *box,
                      const cuuint32_t *estrides, CUtensorMapInterleave il,
                      CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                      CUtensorMapFloatOOBfill oob)
{
    (void)type, (void)strides, (void)estrides, (void)il, (void)sw, (void)l2,
        (void)oob;
    if (rank == 0 || rank > 5 || (uintptr_t)addr % 16 != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (cuuint32_t i = 0; i < rank; i++)
        if (dims[i] == 0 || box[i] == 0 || box[i] > 256)
            return CUDA_ERROR_INVALID_VALUE;
    uint64_t w[16] = {MAP_MAGIC, (uint64_t)(uintptr_t)addr, rank};
    for (cuuint32_t i = 0; i < rank; i++)
        w[3 + i] = dims[i];
    memcpy(map, w, sizeof(w));
    return CUDA_SUCCESS;
}

static CUresult im2col(CUtensorMap *map, CUtensorMapDataType type,
                       cuuint32_t rank, void *addr, const cuuint64_t *dims,
                       const cuuint64_t *strides, const int *lower,
                       const int *upper, cuuint32_t channels,
                       cuuint32_t pixels, const cuuint32_t *estrides,
                       CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                       CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    const cuuint32_t box[5] = {channels, pixels, 1, 1, 1};
    (void)lower, (void)upper;
    if (rank < 3)
        return CUDA_ERROR_INVALID_VALUE;
    return tiled(map, type, rank, addr, dims, strides, box, estrides, il, sw,
                 l2, oob);
}

static CUresult im2col_wide(CUtensorMap *map, CUtensorMapDataType type,
                            cuuint32_t rank, void *addr,
                            const cuuint64_t *dims, const cuuint64_t *strides,
                            int lower, int upper, cuuint32_t channels,
                            cuuint32_t pixels, const cuuint32_t *estrides,
                            CUtensorMapInterleave il,
                            CUtensorMapIm2ColWideMode mode,
                            CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                            CUtensorMapFloatOOBfill oob)
{
    (void)lower, (void)upper;
    if (mode > CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128)
        return CUDA_ERROR_INVALID_VALUE;
    return im2col(map, type, rank, addr, dims, strides, NULL, NULL, channels,
                  pixels, estrides, il, sw, l2, oob);
}

static CUresult replace(CUtensorMap *map, void *addr)
{
    uint64_t w[2];
    memcpy(w, map, sizeof(w));
    if (w[0] != MAP_MAGIC || (uintptr_t)addr % 16 != 0)
        return CUDA_ERROR_INVALID_VALUE;
    w[1] = (uint64_t)(uintptr_t)addr;
    memcpy(map, w, sizeof(w));
    return CUDA_SUCCESS;
}

void mock_memops_fill(void)
{
    cuda_be_drv.cuStreamWaitValue32 = wait32;
    cuda_be_drv.cuStreamWaitValue32_v2 = wait32;
    cuda_be_drv.cuStreamWriteValue32 = write32;
    cuda_be_drv.cuStreamWriteValue32_v2 = write32;
    cuda_be_drv.cuStreamWaitValue64 = wait64;
    cuda_be_drv.cuStreamWaitValue64_v2 = wait64;
    cuda_be_drv.cuStreamWriteValue64 = write64;
    cuda_be_drv.cuStreamWriteValue64_v2 = write64;
    cuda_be_drv.cuStreamBatchMemOp = batch_legacy;
    cuda_be_drv.cuStreamBatchMemOp_v2 = batch;
    cuda_be_drv.cuTensorMapEncodeTiled = tiled;
    cuda_be_drv.cuTensorMapEncodeIm2col = im2col;
    cuda_be_drv.cuTensorMapEncodeIm2colWide = im2col_wide;
    cuda_be_drv.cuTensorMapReplaceAddress = replace;
}
