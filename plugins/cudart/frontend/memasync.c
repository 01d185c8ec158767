/*
 * Stream-ordered copies and memsets, memory information, prefetches
 * (docs/cudart.md, "Async copies").
 *
 * H2D: the bytes travel in the requests, so the program's buffer is free
 * again when the call returns, as with CUDA's staging of pageable memory;
 * every piece posted when the tables prove the copy valid.
 * D2H: the reply carries the bytes once the stream has reached the copy,
 * so the call returns with them in the program's buffer, as CUDA does
 * for a pageable destination.
 */
#include "streams.h"

#include <string.h>

#include "bulk.h"
#include "shared.h"
#include "cudart_fe_gen.h"
#include "cudart_ops.h"

cudaError_t fe_copy_async(void *dst, const void *src, size_t count,
                          enum cudaMemcpyKind kind, cudaStream_t stream,
                          int per_thread)
{
    if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (kind == cudaMemcpyDefault) {
        int dd = fe_is_device_ptr(dst), sd = fe_is_device_ptr(src);
        kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                  : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    }
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess || count == 0)
        return e;
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    uint64_t s = fe_stream_wire(stream, per_thread);
    switch (kind) {
    case cudaMemcpyHostToHost:
        /* Synchronous with the host, as natively. */
        memmove(dst, src, count);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        e = fe_shared_try_copy(s, 1, kind, (uint64_t)(uintptr_t)dst,
                               (void *)src, count);
        if (e != cudaErrorNotSupported)
            return e;
        return fe_bulk_h2d(
            &(struct fe_bulk_op){
                CUDART_OP_MEMCPY_ASYNC_H2D, 1, s,
                fe_may_post_copy(s, (uint64_t)(uintptr_t)dst, count)
                    ? CUDART_OP_MEMCPY_ASYNC_H2D_POSTED
                    : 0},
            (uint64_t)(uintptr_t)dst, src, count);
    case cudaMemcpyDeviceToHost:
        e = fe_shared_try_copy(s, 1, kind, (uint64_t)(uintptr_t)src, dst,
                               count);
        if (e != cudaErrorNotSupported)
            return e;
        return fe_bulk_d2h(
            &(struct fe_bulk_op){CUDART_OP_MEMCPY_ASYNC_D2H, 1, s, 0}, dst,
            (uint64_t)(uintptr_t)src, count);
    case cudaMemcpyDeviceToDevice:
        return cudart_rpc_MEMCPY_ASYNC_D2D(s, dst, (void *)(uintptr_t)src,
                                           count);
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return cudart_fe_ret(fe_copy_async(dst, src, count, kind, stream, 0));
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return cudart_fe_ret(fe_copy_async(dst, src, count, kind, stream, 1));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                            cudaStream_t stream)
{
    return cudart_fe_ret(cudart_rpc_MEMSET_ASYNC(fe_stream_wire(stream, 0),
                                                 devPtr, value, count));
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                 cudaStream_t stream)
{
    return cudart_fe_ret(cudart_rpc_MEMSET_ASYNC(fe_stream_wire(stream, 1),
                                                 devPtr, value, count));
}

/* Either pointer may be NULL, as natively. */
cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    size_t f, t;
    cudaError_t e = cudart_rpc_cudaMemGetInfo(&f, &t);
    if (e == cudaSuccess && free != NULL)
        *free = f;
    if (e == cudaSuccess && total != NULL)
        *total = t;
    return cudart_fe_ret(e);
}

static cudaError_t prefetch(const void *devPtr, size_t count,
                            struct cudaMemLocation location,
                            unsigned int flags, cudaStream_t stream,
                            int per_thread)
{
    return cudart_fe_ret(cudart_rpc_MEM_PREFETCH_ASYNC(
        fe_stream_wire(stream, per_thread), (void *)(uintptr_t)devPtr, count,
        location.type, location.id, flags));
}

cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count,
                                 struct cudaMemLocation location,
                                 unsigned int flags, cudaStream_t stream)
{
    return prefetch(devPtr, count, location, flags, stream, 0);
}

cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                      struct cudaMemLocation location,
                                      unsigned int flags, cudaStream_t stream)
{
    return prefetch(devPtr, count, location, flags, stream, 1);
}
