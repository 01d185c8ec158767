/*
 * Hints and stream attachment of managed and device memory, and the
 * batched discards (api/80-misc.api).  They act on the backend's
 * allocation; the frontend's shadow of managed memory is synchronized as
 * for any other device work (managed.c), so they change where the pages
 * live on the GPU host, never what the program reads.
 */
#include "streams.h"

#include "cudart_fe_gen.h"

#pragma GCC visibility push(default)
cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr,
                                          size_t length, unsigned int flags);
cudaError_t cudaMemDiscardBatchAsync_ptsz(void **dptrs, size_t *sizes,
                                          size_t count,
                                          unsigned long long flags,
                                          cudaStream_t stream);
cudaError_t cudaMemDiscardAndPrefetchBatchAsync_ptsz(
    void **dptrs, size_t *sizes, size_t count,
    struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
    size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream);
#pragma GCC visibility pop

cudaError_t cudaMemAdvise(const void *devPtr, size_t count,
                          enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location)
{
    return cudart_fe_ret(cudart_rpc_MEM_ADVISE((void *)(uintptr_t)devPtr,
                                               count, advice, location.type,
                                               location.id));
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr,
                                     size_t length, unsigned int flags)
{
    return cudart_fe_ret(cudart_rpc_STREAM_ATTACH_MEM(
        fe_stream_wire(stream, 0), devPtr, length, flags));
}

cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr,
                                          size_t length, unsigned int flags)
{
    return cudart_fe_ret(cudart_rpc_STREAM_ATTACH_MEM(
        fe_stream_wire(stream, 1), devPtr, length, flags));
}

/* Each range is one request, in order on the stream; locs NULL for a
 * discard alone.  The batch is validated whole first, as natively. */
static cudaError_t discard_batch(void **dptrs, const size_t *sizes,
                                 size_t count,
                                 const struct cudaMemLocation *locs,
                                 const size_t *idxs, size_t nlocs,
                                 unsigned long long flags,
                                 cudaStream_t stream, int per_thread)
{
    if (count == 0 || dptrs == NULL || sizes == NULL)
        return cudaErrorInvalidValue;
    if (locs != NULL) {
        if (idxs == NULL || nlocs == 0 || nlocs > count || idxs[0] != 0)
            return cudaErrorInvalidValue;
        for (size_t k = 1; k < nlocs; k++)
            if (idxs[k] <= idxs[k - 1] || idxs[k] >= count)
                return cudaErrorInvalidValue;
    }
    uint64_t wire = fe_stream_wire(stream, per_thread);
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        if (locs != NULL && k + 1 < nlocs && idxs[k + 1] == i)
            k++;
        cudaError_t e = cudart_rpc_MEM_DISCARD(
            wire, dptrs[i], sizes[i], locs != NULL,
            locs != NULL ? locs[k].type : cudaMemLocationTypeInvalid,
            locs != NULL ? locs[k].id : 0, flags);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemDiscardBatchAsync(void **dptrs, size_t *sizes, size_t count,
                                     unsigned long long flags,
                                     cudaStream_t stream)
{
    return cudart_fe_ret(discard_batch(dptrs, sizes, count, NULL, NULL, 0,
                                       flags, stream, 0));
}

cudaError_t cudaMemDiscardBatchAsync_ptsz(void **dptrs, size_t *sizes,
                                          size_t count,
                                          unsigned long long flags,
                                          cudaStream_t stream)
{
    return cudart_fe_ret(discard_batch(dptrs, sizes, count, NULL, NULL, 0,
                                       flags, stream, 1));
}

cudaError_t cudaMemDiscardAndPrefetchBatchAsync(
    void **dptrs, size_t *sizes, size_t count,
    struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
    size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream)
{
    if (prefetchLocs == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(discard_batch(dptrs, sizes, count, prefetchLocs,
                                       prefetchLocIdxs, numPrefetchLocs, flags,
                                       stream, 0));
}

cudaError_t cudaMemDiscardAndPrefetchBatchAsync_ptsz(
    void **dptrs, size_t *sizes, size_t count,
    struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
    size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream)
{
    if (prefetchLocs == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(discard_batch(dptrs, sizes, count, prefetchLocs,
                                       prefetchLocIdxs, numPrefetchLocs, flags,
                                       stream, 1));
}
