/*
 * Page-locked host memory (cudaMallocHost, cudaHostAlloc,
 * cudaHostRegister).  The client and the GPU are in different processes,
 * possibly on different machines.  When the connection can share memory
 * (shm://), allocations are shared with the backend, which pins them:
 * copies from and to them are one DMA there, and the GPU can reach them
 * (shared.h).  Otherwise, and for registered memory, such memory is
 * ordinary client memory, tracked by the layer (gvs_remote.h, one table
 * with the driver frontend's), so that the calls that ask about it answer
 * as natively, and copies from and to it are ordinary transfers; the GPU
 * cannot reach it: cudaHostGetDevicePointer answers cudaErrorNotSupported
 * (docs/cudart.md, "Host memory").
 */
#include "shared.h"

#include "cudart_ops.h"
#include "remote_be.h"

static cudaError_t code(enum gvs_remote_host_rc rc)
{
    switch (rc) {
    case GVS_RHOST_OK:
        return cudaSuccess;
    case GVS_RHOST_NOMEM:
        return cudaErrorMemoryAllocation;
    case GVS_RHOST_REGISTERED:
        return cudaErrorHostMemoryAlreadyRegistered;
    case GVS_RHOST_NOT_REGISTERED:
        return cudaErrorHostMemoryNotRegistered;
    default:
        return cudaErrorInvalidValue;
    }
}

/* Every entry point starts the runtime, as natively: without a backend
 * they fail with its code. */
static cudaError_t runtime(void)
{
    struct gvs_client *cl;
    return fe_client(&cl);
}

const struct gvs_remote_shared fe_shared = {
    &fe_remote_api, CUDART_OP_HOSTMEM_SHARE, CUDART_OP_HOSTMEM_UNSHARE,
    CUDART_OP_MEMCPY_SHARED, cudaErrorNotSupported, CUDART_OP_MEMCPY_POSTED,
    CUDART_OP_MEMCPY_SHARED_POSTED};

cudaError_t fe_shared_try_copy(uint64_t stream, int async,
                               enum cudaMemcpyKind kind, uint64_t dev,
                               void *host, size_t len)
{
    /* A synchronous copy the tables prove valid is ordered on its
     * default stream and waited for there; one they cannot prove goes
     * the way CUDA's would, for CUDA's own error: cudaMemcpy's on the
     * legacy stream, a per-thread one's on that stream. */
    unsigned flags = async ? GVS_REMOTE_SHARED_ON_STREAM
                     : stream == 0
                         ? 0
                         : GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT;
    if (fe_may_post_copy(stream, dev, len))
        flags = (async ? GVS_REMOTE_SHARED_ON_STREAM
                       : GVS_REMOTE_SHARED_ON_STREAM |
                             GVS_REMOTE_SHARED_WAIT) |
                GVS_REMOTE_SHARED_PROVEN;
    return (cudaError_t)gvs_remote_shared_try_copy(
        &fe_shared, stream, flags, kind == cudaMemcpyHostToDevice, dev, host,
        len);
}

static cudaError_t host_alloc(void **pHost, size_t size, unsigned int flags)
{
    if (pHost == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = runtime();
    if (e == cudaSuccess)
        e = code(gvs_remote_host_alloc(pHost, size, flags, &fe_shared));
    return e;
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    return cudart_fe_ret(host_alloc(pHost, size, flags));
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudart_fe_ret(host_alloc(ptr, size, cudaHostAllocDefault));
}

static cudaError_t free_host(void *ptr)
{
    cudaError_t e = runtime();
    int32_t unmapped = cudaSuccess;
    if (e != cudaSuccess || ptr == NULL)
        return e;
    e = code(gvs_remote_host_free(ptr, &fe_shared, &unmapped));
    return e == cudaSuccess ? (cudaError_t)unmapped : e;
}

cudaError_t cudaFreeHost(void *ptr)
{
    return cudart_fe_ret(free_host(ptr));
}

static cudaError_t host_register(void *ptr, size_t size, unsigned int flags)
{
    cudaError_t e = runtime();
    return e == cudaSuccess ? code(gvs_remote_host_register(ptr, size, flags))
                            : e;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    return cudart_fe_ret(host_register(ptr, size, flags));
}

static cudaError_t host_unregister(void *ptr)
{
    cudaError_t e = runtime();
    return e == cudaSuccess ? code(gvs_remote_host_unregister(ptr)) : e;
}

cudaError_t cudaHostUnregister(void *ptr)
{
    return cudart_fe_ret(host_unregister(ptr));
}

static cudaError_t host_get_flags(unsigned int *pFlags, void *pHost)
{
    struct gvs_remote_host h;
    uint64_t base;
    if (pFlags == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = runtime();
    if (e != cudaSuccess)
        return e;
    if (!gvs_remote_host_find(pHost, &base, &h))
        return cudaErrorInvalidValue;
    *pFlags = h.flags;
    return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    return cudart_fe_ret(host_get_flags(pFlags, pHost));
}

static cudaError_t host_get_device_pointer(void **pDevice, void *pHost,
                                           unsigned int flags)
{
    struct gvs_remote_host h;
    uint64_t base;
    if (pDevice == NULL || flags != 0)
        return cudaErrorInvalidValue;
    cudaError_t e = runtime();
    if (e != cudaSuccess)
        return e;
    if (!gvs_remote_host_find(pHost, &base, &h))
        return cudaErrorInvalidValue;
    if (h.dev == 0)
        return cudaErrorNotSupported;
    *pDevice = (void *)(uintptr_t)(h.dev + ((uintptr_t)pHost - base));
    return cudaSuccess;
}

int fe_host_contains(const void *p)
{
    struct gvs_remote_host h;
    uint64_t base;
    return gvs_remote_host_find(p, &base, &h);
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
                                     unsigned int flags)
{
    return cudart_fe_ret(host_get_device_pointer(pDevice, pHost, flags));
}
