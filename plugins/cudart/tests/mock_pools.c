/*
 * Memory pools and the stream-ordered allocator for the host-memory mock
 * of the CUDA runtime (mock_cudart.c): allocations are the mock's
 * cudaMalloc once the stream has drained; a pool keeps its attributes,
 * its access flags and how much it has handed out.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "mock_streams.h"

#define MOCK_DEVICES 2

struct CUmemPoolHandle_st {
    int reuse[3];
    uint64_t release_threshold, used, used_high;
    enum cudaMemAccessFlags access[MOCK_DEVICES];
};

static struct CUmemPoolHandle_st defaults[MOCK_DEVICES];
static cudaMemPool_t current[MOCK_DEVICES];

static cudaMemPool_t current_pool(int dev)
{
    return current[dev] != NULL ? current[dev] : &defaults[dev];
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool,
                                    cudaStream_t stream)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e == cudaSuccess)
        e = cudaMalloc(p, size);
    if (e == cudaSuccess) {
        pool->used += size;
        if (pool->used > pool->used_high)
            pool->used_high = pool->used;
    }
    return e;
}

cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
{
    return cudaMallocFromPoolAsync(p, size,
                                   current_pool(mock_current_device()), stream);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t stream)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    return e == cudaSuccess ? cudaFree(p) : e;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool,
                              const struct cudaMemPoolProps *props)
{
    if (props->allocType != cudaMemAllocationTypePinned ||
        props->location.type != cudaMemLocationTypeDevice ||
        props->location.id < 0 || props->location.id >= MOCK_DEVICES)
        return cudaErrorInvalidValue;
    *pool = calloc(1, sizeof(**pool));
    return *pool != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
}

static int is_default(cudaMemPool_t pool)
{
    return pool >= &defaults[0] && pool < &defaults[MOCK_DEVICES];
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    if (is_default(pool))
        return cudaErrorInvalidValue;
    for (int d = 0; d < MOCK_DEVICES; d++)
        if (current[d] == pool)
            current[d] = NULL;
    free(pool);
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool,
                                    enum cudaMemPoolAttr attr, void *value)
{
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
        pool->reuse[attr - 1] = *(int *)value;
        return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
        pool->release_threshold = *(uint64_t *)value;
        return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
        pool->used_high = *(uint64_t *)value;
        return cudaSuccess;
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool,
                                    enum cudaMemPoolAttr attr, void *value)
{
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
        *(int *)value = pool->reuse[attr - 1];
        return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
        *(uint64_t *)value = pool->release_threshold;
        return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrUsedMemCurrent:
        *(uint64_t *)value = pool->used;
        return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
        *(uint64_t *)value = pool->used_high;
        return cudaSuccess;
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    (void)pool, (void)keep;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    if (device < 0 || device >= MOCK_DEVICES)
        return cudaErrorInvalidDevice;
    *pool = &defaults[device];
    return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    if (device < 0 || device >= MOCK_DEVICES)
        return cudaErrorInvalidDevice;
    *pool = current_pool(device);
    return cudaSuccess;
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
    if (device < 0 || device >= MOCK_DEVICES)
        return cudaErrorInvalidDevice;
    current[device] = pool;
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool,
                                 const struct cudaMemAccessDesc *list,
                                 size_t count)
{
    for (size_t i = 0; i < count; i++) {
        int d = list[i].location.id;
        if (list[i].location.type != cudaMemLocationTypeDevice || d < 0 ||
            d >= MOCK_DEVICES)
            return cudaErrorInvalidValue;
        pool->access[d] = list[i].flags;
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags,
                                 cudaMemPool_t pool,
                                 struct cudaMemLocation *loc)
{
    if (loc->type != cudaMemLocationTypeDevice || loc->id < 0 ||
        loc->id >= MOCK_DEVICES)
        return cudaErrorInvalidValue;
    *flags = pool->access[loc->id];
    return cudaSuccess;
}
