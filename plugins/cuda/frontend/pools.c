/* Memory pools and the stream-ordered allocator (cuda.api, docs/driver.md
 * "Pools"): a CUmemoryPool here is the id of the layer's table the
 * backend gave; pool memory is device memory to unified copies and
 * pointer queries (memory.c). */
#include "call.h"

#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"

static CUresult begin(struct apigen_call *c)
{
    CUresult r = cuda_fe_begin(c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    return r;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, uint64_t pool,
                            CUstream s, int per_thread)
{
    struct apigen_call c;
    uint64_t p = 0;
    CUdevice dev = 0;
    if (dptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_stream_wire(s, per_thread));
    apigen_put_u8(&c, 0);
    apigen_put_u64(&c, size);
    apigen_put_u64(&c, pool);
    r = cuda_fe_run_u64(&c, CUDA_OP_MEM_ALLOC_ASYNC, &p);
    if (r != CUDA_SUCCESS)
        return r;
    (void)cuda_fe_ctx_device(&dev);
    cuda_fe_mem_note(p, size, dev);
    *dptr = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
    return alloc_async(dptr, bytesize, 0, s, 0);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                              CUstream s)
{
    return alloc_async(dptr, bytesize, 0, s, 1);
}

/* A NULL pool is no pool: the backend's table has no id 0. */
#define POOL_ID(pool) ((pool) != NULL ? (uint64_t)(uintptr_t)(pool) : ~0ull)

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
                                 CUmemoryPool pool, CUstream s)
{
    return alloc_async(dptr, bytesize, POOL_ID(pool), s, 0);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                      CUmemoryPool pool, CUstream s)
{
    return alloc_async(dptr, bytesize, POOL_ID(pool), s, 1);
}

static CUresult free_async(CUdeviceptr p, CUstream s, int per_thread)
{
    struct apigen_call c;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_stream_wire(s, per_thread));
    apigen_put_u8(&c, 0);
    apigen_put_u64(&c, p);
    r = cuda_fe_run(&c, CUDA_OP_MEM_FREE_ASYNC, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        cuda_fe_mem_forget(p);
    return r;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
    return free_async(dptr, s, 0);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
    return free_async(dptr, s, 1);
}

/* The driver refuses Windows security attributes off Windows. */
CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (pool == NULL || props == NULL ||
        props->win32SecurityAttributes != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(&c, props->allocType);
    apigen_put_i32(&c, props->handleTypes);
    apigen_put_i32(&c, props->location.type);
    apigen_put_i32(&c, props->location.id);
    apigen_put_u64(&c, props->maxSize);
    apigen_put_u32(&c, props->usage);
    r = cuda_fe_run_u64(&c, CUDA_OP_MEMPOOL_CREATE, &id);
    if (r == CUDA_SUCCESS)
        *pool = (CUmemoryPool)(uintptr_t)id;
    return r;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    struct apigen_call c;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, POOL_ID(pool));
    r = cuda_fe_run(&c, CUDA_OP_MEMPOOL_DESTROY, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

/* The attributes the driver reads and writes as an int. */
static int attr_is_int(CUmemPool_attribute a)
{
    return a == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
           a == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC ||
           a == CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

static CUresult attribute(int set, CUmemoryPool pool, CUmemPool_attribute a,
                          void *value)
{
    struct apigen_call c;
    uint64_t v = 0;
    int is_int = attr_is_int(a);
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (set && is_int)
        v = (uint32_t)*(const int *)value;
    else if (set)
        memcpy(&v, value, sizeof(v));
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)set);
    apigen_put_u64(&c, POOL_ID(pool));
    apigen_put_i32(&c, a);
    apigen_put_u64(&c, v);
    r = cuda_fe_run_u64(&c, CUDA_OP_MEMPOOL_ATTRIBUTE, &v);
    if (r == CUDA_SUCCESS && !set && is_int)
        *(int *)value = (int)(uint32_t)v;
    else if (r == CUDA_SUCCESS && !set)
        memcpy(value, &v, sizeof(v));
    return r;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                               void *value)
{
    return attribute(1, pool, attr, value);
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                               void *value)
{
    return attribute(0, pool, attr, value);
}

#define OF_DEVICE_DEFAULT 0
#define OF_DEVICE_CURRENT 1
#define OF_LOCATION_DEFAULT 2
#define OF_LOCATION_CURRENT 3

static CUresult pool_of(uint8_t which, int32_t type, int32_t id,
                        CUmemAllocationType alloc, CUmemoryPool *out)
{
    struct apigen_call c;
    uint64_t pool = 0;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, which);
    apigen_put_i32(&c, type);
    apigen_put_i32(&c, id);
    apigen_put_i32(&c, alloc);
    r = cuda_fe_run_u64(&c, CUDA_OP_MEMPOOL_GET, &pool);
    if (r == CUDA_SUCCESS)
        *out = (CUmemoryPool)(uintptr_t)pool;
    return r;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    return pool_of(OF_DEVICE_DEFAULT, CU_MEM_LOCATION_TYPE_DEVICE, dev,
                   CU_MEM_ALLOCATION_TYPE_PINNED, pool_out);
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    return pool_of(OF_DEVICE_CURRENT, CU_MEM_LOCATION_TYPE_DEVICE, dev,
                   CU_MEM_ALLOCATION_TYPE_PINNED, pool);
}

CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out,
                                CUmemLocation *location,
                                CUmemAllocationType type)
{
    if (location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_of(OF_LOCATION_DEFAULT, location->type, location->id, type,
                   pool_out);
}

CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
                         CUmemAllocationType type)
{
    if (location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_of(OF_LOCATION_CURRENT, location->type, location->id, type,
                   pool);
}

static CUresult set_current(uint8_t which, int32_t type, int32_t id,
                            CUmemAllocationType alloc, CUmemoryPool pool)
{
    struct apigen_call c;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, which);
    apigen_put_i32(&c, type);
    apigen_put_i32(&c, id);
    apigen_put_i32(&c, alloc);
    apigen_put_u64(&c, POOL_ID(pool));
    r = cuda_fe_run(&c, CUDA_OP_MEMPOOL_SET_CURRENT, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    return set_current(0, CU_MEM_LOCATION_TYPE_DEVICE, dev,
                       CU_MEM_ALLOCATION_TYPE_PINNED, pool);
}

CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
                         CUmemoryPool pool)
{
    if (location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return set_current(1, location->type, location->id, type, pool);
}

void cuda_fe_put_access(struct apigen_call *c, const CUmemAccessDesc *map,
                        size_t count)
{
    apigen_put_u32(c, (uint32_t)count);
    for (size_t i = 0; i < count; i++) {
        apigen_put_i32(c, map[i].location.type);
        apigen_put_i32(c, map[i].location.id);
        apigen_put_i32(c, map[i].flags);
    }
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map,
                            size_t count)
{
    struct apigen_call c;
    if ((map == NULL && count > 0) || count > CUDA_FE_ACCESS_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, 1);
    apigen_put_u64(&c, POOL_ID(pool));
    cuda_fe_put_access(&c, map, count);
    r = cuda_fe_run(&c, CUDA_OP_MEMPOOL_ACCESS, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
                            CUmemLocation *location)
{
    struct apigen_call c;
    int32_t f = 0;
    if (flags == NULL || location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, 0);
    apigen_put_u64(&c, POOL_ID(memPool));
    cuda_fe_put_access(&c, &(CUmemAccessDesc){*location, 0}, 1);
    r = cuda_fe_run(&c, CUDA_OP_MEMPOOL_ACCESS, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_i32(&c, &f);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *flags = (CUmemAccess_flags)f;
    return r;
}
