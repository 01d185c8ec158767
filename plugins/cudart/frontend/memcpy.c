#include "bulk.h"
#include "shared.h"

#include <string.h>

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "streams.h"

static cudaError_t copy_d2d(uint64_t dst, uint64_t src, size_t count)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, dst);
    apigen_put_u64(&c, src);
    apigen_put_u64(&c, count);
    e = cudart_fe_run(&c, CUDART_OP_MEMCPY_D2D, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

/* A per-thread default stream's cudaMemcpy that moves the bytes itself:
 * its stream-ordered copy, then that stream waited for, so that it
 * returns once done as cudaMemcpy does. */
static cudaError_t copy_on_own_stream(void *dst, const void *src,
                                      size_t count, enum cudaMemcpyKind kind)
{
    cudaError_t e = fe_copy_async(dst, src, count, kind, NULL, 1);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(cudaStreamPerThread);
    return e;
}

cudaError_t fe_copy(void *dst, const void *src, size_t count,
                    enum cudaMemcpyKind kind, int per_thread)
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
    uint64_t s = fe_stream_wire(NULL, per_thread);
    switch (kind) {
    case cudaMemcpyHostToHost:
        memmove(dst, src, count);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        e = fe_shared_try_copy(s, 0, kind, (uint64_t)(uintptr_t)dst,
                               (void *)src, count);
        if (e != cudaErrorNotSupported)
            return e;
        if (per_thread)
            return copy_on_own_stream(dst, src, count, kind);
        return fe_bulk_h2d(&(struct fe_bulk_op){CUDART_OP_MEMCPY_H2D, 0, 0, 0},
                           (uint64_t)(uintptr_t)dst, src, count);
    case cudaMemcpyDeviceToHost:
        e = fe_shared_try_copy(s, 0, kind, (uint64_t)(uintptr_t)src, dst,
                               count);
        if (e != cudaErrorNotSupported)
            return e;
        if (per_thread)
            return copy_on_own_stream(dst, src, count, kind);
        return fe_bulk_d2h(&(struct fe_bulk_op){CUDART_OP_MEMCPY_D2H, 0, 0, 0},
                           dst, (uint64_t)(uintptr_t)src, count);
    case cudaMemcpyDeviceToDevice:
        if (per_thread)
            return fe_copy_async(dst, src, count, kind, NULL, 1);
        /* The host does not wait for it natively either. */
        if (fe_may_post_d2d(fe_stream_wire(NULL, 0), dst, (void *)src,
                            count, 0))
            return cudart_rpc_MEMCPY_ASYNC_D2D(fe_stream_wire(NULL, 0), dst,
                                               (void *)src, count);
        return copy_d2d((uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src,
                        count);
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(fe_copy(dst, src, count, kind, 0));
}
