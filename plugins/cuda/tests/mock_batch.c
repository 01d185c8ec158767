/*
 * The mock driver's batched prefetches and discards (mock_driver.c): the
 * batch checked as the driver documents it (no legacy stream, flags 0,
 * location indices that start at 0 and grow below the count), nothing
 * moved: device memory is host memory here.  And its batches of copies,
 * made last first (the driver keeps no order inside a batch), counted
 * for the mock's log (mock_batch_counts).
 */
#include <stdatomic.h>
#include <string.h>

#include "be.h"

#include "mock_driver.h"

static CUresult check(size_t count, unsigned long long flags, CUstream s)
{
    return count == 0 || flags != 0 || s == NULL || s == CU_STREAM_LEGACY
               ? CUDA_ERROR_INVALID_VALUE
               : CUDA_SUCCESS;
}

static CUresult check_locs(size_t count, const size_t *first, size_t n)
{
    if (n == 0 || n > count || first[0] != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 1; i < n; i++)
        if (first[i] <= first[i - 1] || first[i] >= count)
            return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult mock_prefetch(CUdeviceptr *p, size_t *sizes, size_t count,
                              CUmemLocation *locs, size_t *first, size_t n,
                              unsigned long long flags, CUstream s)
{
    (void)p, (void)sizes, (void)locs;
    CUresult r = check(count, flags, s);
    return r == CUDA_SUCCESS ? check_locs(count, first, n) : r;
}

static CUresult mock_discard(CUdeviceptr *p, size_t *sizes, size_t count,
                             unsigned long long flags, CUstream s)
{
    (void)p, (void)sizes;
    return check(count, flags, s);
}

static _Atomic unsigned long long batches, batched;

static CUresult mock_copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                size_t *sizes, size_t count,
                                CUmemcpyAttributes *attrs, size_t *first,
                                size_t n, CUstream s)
{
    if (count == 0 || s == NULL || s == CU_STREAM_LEGACY || n != 1 ||
        first[0] != 0 ||
        attrs[0].srcAccessOrder != CU_MEMCPY_SRC_ACCESS_ORDER_STREAM)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = count; i-- > 0;)
        memcpy((void *)(uintptr_t)dsts[i], (const void *)(uintptr_t)srcs[i],
               sizes[i]);
    atomic_fetch_add(&batches, 1);
    atomic_fetch_add(&batched, count);
    return CUDA_SUCCESS;
}

void mock_batch_counts(unsigned long long *calls, unsigned long long *copies)
{
    *calls = atomic_load(&batches);
    *copies = atomic_load(&batched);
}

void mock_batch_fill(void)
{
    cuda_be_drv.cuMemcpyBatchAsync_v2 = mock_copy_batch;
    cuda_be_drv.cuMemPrefetchBatchAsync = mock_prefetch;
    cuda_be_drv.cuMemDiscardAndPrefetchBatchAsync = mock_prefetch;
    cuda_be_drv.cuMemDiscardBatchAsync = mock_discard;
}
