/*
 * The stream-ordered allocator and memory pools.  Pool handles given to
 * the program are the backend's ids (BE_H_MEMPOOL) cast to pointers.
 * Stream-ordered allocations enter the allocation map (memory.c) like
 * cudaMalloc's, so that cudaMemcpyDefault sees them as device memory.
 */
#include "fe.h"

#include <string.h>

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "streams.h"

#pragma GCC visibility push(default)
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size,
                                 cudaStream_t hStream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
                                         cudaMemPool_t memPool,
                                         cudaStream_t stream);
#pragma GCC visibility pop

static uint64_t pool_wire(cudaMemPool_t p)
{
    return (uint64_t)(uintptr_t)p;
}

/* pool 0: the current device's current pool. */
static cudaError_t malloc_async(void **out, size_t size, uint64_t pool,
                                cudaStream_t stream, int per_thread)
{
    struct apigen_call c;
    uint64_t ptr = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    *out = NULL;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, size);
    apigen_put_u64(&c, pool);
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    e = cudart_fe_run(&c, CUDART_OP_MALLOC_ASYNC, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &ptr);
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    void *p = (void *)(uintptr_t)ptr;
    /* Untracked memory would be misclassified by cudaMemcpyDefault. */
    if (p != NULL && !fe_mem_track(p, size)) {
        (void)cudaFree(p);
        return cudaErrorMemoryAllocation;
    }
    *out = p;
    return cudaSuccess;
}

static cudaError_t free_async(void *p, cudaStream_t stream, int per_thread)
{
    cudaError_t e = cudart_rpc_cudaFreeAsync(p, stream, per_thread);
    if (e == cudaSuccess)
        fe_mem_untrack(p);
    return e;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return cudart_fe_ret(malloc_async(devPtr, size, 0, hStream, 0));
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size,
                                 cudaStream_t hStream)
{
    return cudart_fe_ret(malloc_async(devPtr, size, 0, hStream, 1));
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size,
                                    cudaMemPool_t memPool, cudaStream_t stream)
{
    if (memPool == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(
        malloc_async(ptr, size, pool_wire(memPool), stream, 0));
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
                                         cudaMemPool_t memPool,
                                         cudaStream_t stream)
{
    if (memPool == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(
        malloc_async(ptr, size, pool_wire(memPool), stream, 1));
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return cudart_fe_ret(free_async(devPtr, hStream, 0));
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    return cudart_fe_ret(free_async(devPtr, hStream, 1));
}

/* Pools ------------------------------------------------------------------- */

/* The reply of the calls that hand out a pool: u64 id. */
static cudaError_t take_pool(struct apigen_call *c, cudaError_t e,
                             cudaMemPool_t *out)
{
    uint64_t id = 0;
    if (e == cudaSuccess)
        apigen_get_u64(c, &id);
    e = cudart_fe_end(c, e);
    if (e == cudaSuccess)
        *out = (cudaMemPool_t)(uintptr_t)id;
    return e;
}

static cudaError_t pool_create(cudaMemPool_t *out,
                               const struct cudaMemPoolProps *p)
{
    struct apigen_call c;
    if (out == NULL || p == NULL)
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < sizeof(p->reserved); i++)
        if (p->reserved[i] != 0)
            return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_i32(&c, p->allocType);
    apigen_put_i32(&c, p->handleTypes);
    apigen_put_i32(&c, p->location.type);
    apigen_put_i32(&c, p->location.id);
    apigen_put_u64(&c, p->maxSize);
    apigen_put_u32(&c, p->usage);
    e = cudart_fe_run(&c, CUDART_OP_MEMPOOL_CREATE, APIGEN_DEVICE);
    return take_pool(&c, e, out);
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool,
                              const struct cudaMemPoolProps *poolProps)
{
    return cudart_fe_ret(pool_create(memPool, poolProps));
}

static cudaError_t pool_destroy(cudaMemPool_t pool)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, pool_wire(pool));
    e = cudart_fe_run(&c, CUDART_OP_MEMPOOL_DESTROY, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    return cudart_fe_ret(pool_destroy(memPool));
}

/* Attributes hold an int or a cuuint64_t (driver_types.h). */
static int attr_is_int(enum cudaMemPoolAttr a)
{
    return a == cudaMemPoolReuseFollowEventDependencies ||
           a == cudaMemPoolReuseAllowOpportunistic ||
           a == cudaMemPoolReuseAllowInternalDependencies;
}

static int attr_known(enum cudaMemPoolAttr a)
{
    return attr_is_int(a) || (a >= cudaMemPoolAttrReleaseThreshold &&
                              a <= cudaMemPoolAttrUsedMemHigh);
}

static cudaError_t set_attr(cudaMemPool_t pool, enum cudaMemPoolAttr attr,
                            const void *value)
{
    struct apigen_call c;
    if (value == NULL || !attr_known(attr))
        return cudaErrorInvalidValue;
    uint64_t v;
    if (attr_is_int(attr))
        v = (uint64_t)(uint32_t)*(const int *)value;
    else
        memcpy(&v, value, sizeof(v));
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, pool_wire(pool));
    apigen_put_i32(&c, attr);
    apigen_put_u64(&c, v);
    e = cudart_fe_run(&c, CUDART_OP_MEMPOOL_SET_ATTR, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

static cudaError_t get_attr(cudaMemPool_t pool, enum cudaMemPoolAttr attr,
                            void *value)
{
    struct apigen_call c;
    uint64_t v = 0;
    if (value == NULL || !attr_known(attr))
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, pool_wire(pool));
    apigen_put_i32(&c, attr);
    e = cudart_fe_run(&c, CUDART_OP_MEMPOOL_GET_ATTR, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &v);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess && attr_is_int(attr))
        *(int *)value = (int)(uint32_t)v;
    else if (e == cudaSuccess)
        memcpy(value, &v, sizeof(v));
    return e;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                    enum cudaMemPoolAttr attr, void *value)
{
    return cudart_fe_ret(set_attr(memPool, attr, value));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool,
                                    enum cudaMemPoolAttr attr, void *value)
{
    return cudart_fe_ret(get_attr(memPool, attr, value));
}

/* which: 0 the device's default pool, 1 its current pool. */
static cudaError_t device_pool(cudaMemPool_t *out, int device, uint8_t which)
{
    struct apigen_call c;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u8(&c, which);
    apigen_put_i32(&c, device);
    e = cudart_fe_run(&c, CUDART_OP_DEVICE_GET_MEMPOOL, 0);
    return take_pool(&c, e, out);
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    return cudart_fe_ret(device_pool(memPool, device, 0));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    return cudart_fe_ret(device_pool(memPool, device, 1));
}

/* The location-based pool API (CUDA 13): the same pool ids. */
static cudaError_t location_pool(cudaMemPool_t *out,
                                 const struct cudaMemLocation *loc,
                                 enum cudaMemAllocationType type, uint8_t which)
{
    struct apigen_call c;
    if (out == NULL || loc == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u8(&c, which);
    apigen_put_i32(&c, loc->type);
    apigen_put_i32(&c, loc->id);
    apigen_put_i32(&c, type);
    e = cudart_fe_run(&c, CUDART_OP_MEM_GET_POOL, 0);
    return take_pool(&c, e, out);
}

cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *memPool,
                                     struct cudaMemLocation *location,
                                     enum cudaMemAllocationType type)
{
    return cudart_fe_ret(location_pool(memPool, location, type, 0));
}

cudaError_t cudaMemGetMemPool(cudaMemPool_t *memPool,
                              struct cudaMemLocation *location,
                              enum cudaMemAllocationType type)
{
    return cudart_fe_ret(location_pool(memPool, location, type, 1));
}

static cudaError_t set_location_pool(const struct cudaMemLocation *loc,
                                     enum cudaMemAllocationType type,
                                     cudaMemPool_t pool)
{
    struct apigen_call c;
    if (loc == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_i32(&c, loc->type);
    apigen_put_i32(&c, loc->id);
    apigen_put_i32(&c, type);
    apigen_put_u64(&c, pool_wire(pool));
    e = cudart_fe_run(&c, CUDART_OP_MEM_SET_POOL, 0);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaMemSetMemPool(struct cudaMemLocation *location,
                              enum cudaMemAllocationType type,
                              cudaMemPool_t memPool)
{
    return cudart_fe_ret(set_location_pool(location, type, memPool));
}

/* As many descriptors as one request carries. */
#define ACCESS_MAX 1024u

static cudaError_t set_access(cudaMemPool_t pool,
                              const struct cudaMemAccessDesc *list,
                              size_t count)
{
    struct apigen_call c;
    if ((list == NULL && count != 0) || count > ACCESS_MAX)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, pool_wire(pool));
    apigen_put_u32(&c, (uint32_t)count);
    for (size_t i = 0; i < count; i++) {
        apigen_put_i32(&c, list[i].location.type);
        apigen_put_i32(&c, list[i].location.id);
        apigen_put_i32(&c, list[i].flags);
    }
    e = cudart_fe_run(&c, CUDART_OP_MEMPOOL_SET_ACCESS, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool,
                                 const struct cudaMemAccessDesc *descList,
                                 size_t count)
{
    return cudart_fe_ret(set_access(memPool, descList, count));
}

static cudaError_t get_access(enum cudaMemAccessFlags *flags,
                              cudaMemPool_t pool,
                              const struct cudaMemLocation *loc)
{
    struct apigen_call c;
    int32_t f = 0;
    if (flags == NULL || loc == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, pool_wire(pool));
    apigen_put_i32(&c, loc->type);
    apigen_put_i32(&c, loc->id);
    e = cudart_fe_run(&c, CUDART_OP_MEMPOOL_GET_ACCESS, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_i32(&c, &f);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *flags = (enum cudaMemAccessFlags)f;
    return e;
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags,
                                 cudaMemPool_t memPool,
                                 struct cudaMemLocation *location)
{
    return cudart_fe_ret(get_access(flags, memPool, location));
}
