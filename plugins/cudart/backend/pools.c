/*
 * Memory pools as BE_H_MEMPOOL ids, and the stream-ordered allocator.
 * Every pool gets its id from the layer (handle_intern): a pool the
 * session did not create (a device's default pool, or whatever pool is
 * current) the first time it is named, the same id every time, through
 * the driver API too.
 */
#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

#define ACCESS_MAX 1024u

cudaError_t be_pool(uint64_t id, cudaMemPool_t *out)
{
    cudaMemPool_t p = gvs_handles_get(be_handles(), BE_H_MEMPOOL, id);
    if (p == NULL)
        return cudaErrorInvalidValue;
    *out = p;
    return cudaSuccess;
}

/* The id of pool, the layer's: the same through the driver API. */
static cudaError_t id_of(cudaMemPool_t pool, uint64_t *id)
{
    return be_remote->handle_intern(BE_H_MEMPOOL, pool, id) == 0
               ? cudaSuccess
               : cudaErrorMemoryAllocation;
}

int cudart_be_malloc_async(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t size, pool_id, stream;
    apigen_get_u64(&c, &size);
    apigen_get_u64(&c, &pool_id);
    apigen_get_u64(&c, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s;
    cudaMemPool_t pool = NULL;
    void *p = NULL;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    if (e == cudaSuccess && pool_id != 0)
        e = be_pool(pool_id, &pool);
    /* Counted as it is handed out, whatever the pool reserves around it
     * (docs/cudart.md, "Memory quota"). */
    if (e == cudaSuccess)
        e = be_quota_take(size);
    if (e == cudaSuccess) {
        e = pool_id != 0 ? cudaMallocFromPoolAsync(&p, size, pool, s)
                         : cudaMallocAsync(&p, size, s);
        be_quota_settle(call, e, BE_QUOTA_PTR, (uint64_t)(uintptr_t)p, 0,
                        size, size);
    }
    be_reply_u64(&c, e, (uint64_t)(uintptr_t)p);
    return c.rc;
}

int cudart_be_mempool_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cudaMemPoolProps props = {0};
    int32_t type, handles, ltype;
    uint64_t max;
    uint32_t usage;
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &handles);
    apigen_get_i32(&c, &ltype);
    apigen_get_i32(&c, &props.location.id);
    apigen_get_u64(&c, &max);
    apigen_get_u32(&c, &usage);
    if (apigen_end(&c) < 0)
        return c.rc;
    props.allocType = (enum cudaMemAllocationType)type;
    props.handleTypes = (enum cudaMemAllocationHandleType)handles;
    props.location.type = (enum cudaMemLocationType)ltype;
    props.maxSize = (size_t)max;
    props.usage = (unsigned short)usage;
    cudaMemPool_t pool = NULL;
    uint64_t id = 0;
    cudaError_t e = usage > 0xffff ? cudaErrorInvalidValue
                                   : cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemPoolCreate(&pool, &props);
    if (e == cudaSuccess) {
        e = id_of(pool, &id);
        if (e != cudaSuccess)
            (void)cudaMemPoolDestroy(pool);
    }
    be_reply_u64(&c, e, id);
    return c.rc;
}

int cudart_be_mempool_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaMemPool_t pool;
    cudaError_t e = be_pool(id, &pool);
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemPoolDestroy(pool);
    if (e == cudaSuccess)
        (void)be_remote->handle_forget(BE_H_MEMPOOL, id);
    apigen_put_i32(&c, e);
    return c.rc;
}

static int attr_is_int(int32_t a)
{
    return a == cudaMemPoolReuseFollowEventDependencies ||
           a == cudaMemPoolReuseAllowOpportunistic ||
           a == cudaMemPoolReuseAllowInternalDependencies;
}

static int attr_known(int32_t a)
{
    return attr_is_int(a) || (a >= cudaMemPoolAttrReleaseThreshold &&
                              a <= cudaMemPoolAttrUsedMemHigh);
}

int cudart_be_mempool_set_attr(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, v;
    int32_t attr;
    apigen_get_u64(&c, &id);
    apigen_get_i32(&c, &attr);
    apigen_get_u64(&c, &v);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaMemPool_t pool;
    int iv = (int)(uint32_t)v;
    uint64_t uv = v;
    cudaError_t e = attr_known(attr) ? be_pool(id, &pool)
                                     : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemPoolSetAttribute(pool, (enum cudaMemPoolAttr)attr,
                                    attr_is_int(attr) ? (void *)&iv
                                                      : (void *)&uv);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_mempool_get_attr(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    int32_t attr;
    apigen_get_u64(&c, &id);
    apigen_get_i32(&c, &attr);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaMemPool_t pool;
    int iv = 0;
    uint64_t uv = 0;
    cudaError_t e = attr_known(attr) ? be_pool(id, &pool)
                                     : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemPoolGetAttribute(pool, (enum cudaMemPoolAttr)attr,
                                    attr_is_int(attr) ? (void *)&iv
                                                      : (void *)&uv);
    be_reply_u64(&c, e, attr_is_int(attr) ? (uint64_t)(uint32_t)iv : uv);
    return c.rc;
}

int cudart_be_device_get_mempool(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    int32_t dev;
    apigen_get_u8(&c, &which);
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 1)
        return GVS_E_PROTO;
    cudaMemPool_t pool = NULL;
    uint64_t id = 0;
    cudaError_t e = which == 0 ? cudaDeviceGetDefaultMemPool(&pool, dev)
                               : cudaDeviceGetMemPool(&pool, dev);
    if (e == cudaSuccess)
        e = id_of(pool, &id);
    be_reply_u64(&c, e, id);
    return c.rc;
}

int cudart_be_mem_get_pool(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    int32_t type, dev, alloc;
    apigen_get_u8(&c, &which);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &dev);
    apigen_get_i32(&c, &alloc);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 1)
        return GVS_E_PROTO;
    struct cudaMemLocation loc = {(enum cudaMemLocationType)type, dev};
    enum cudaMemAllocationType t = (enum cudaMemAllocationType)alloc;
    cudaMemPool_t pool = NULL;
    uint64_t id = 0;
    cudaError_t e = which == 0 ? cudaMemGetDefaultMemPool(&pool, &loc, t)
                               : cudaMemGetMemPool(&pool, &loc, t);
    if (e == cudaSuccess)
        e = id_of(pool, &id);
    be_reply_u64(&c, e, id);
    return c.rc;
}

int cudart_be_mem_set_pool(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t type, dev, alloc;
    uint64_t id;
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &dev);
    apigen_get_i32(&c, &alloc);
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cudaMemLocation loc = {(enum cudaMemLocationType)type, dev};
    cudaMemPool_t pool;
    cudaError_t e = be_pool(id, &pool);
    if (e == cudaSuccess)
        e = cudaMemSetMemPool(&loc, (enum cudaMemAllocationType)alloc, pool);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_mempool_set_access(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t n;
    struct cudaMemAccessDesc list[ACCESS_MAX];
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &n);
    if (c.rc == 0 && n > ACCESS_MAX)
        return GVS_E_RANGE;
    for (uint32_t i = 0; i < n && c.rc == 0; i++) {
        int32_t type, flags;
        apigen_get_i32(&c, &type);
        apigen_get_i32(&c, &list[i].location.id);
        apigen_get_i32(&c, &flags);
        list[i].location.type = (enum cudaMemLocationType)type;
        list[i].flags = (enum cudaMemAccessFlags)flags;
    }
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaMemPool_t pool;
    cudaError_t e = be_pool(id, &pool);
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemPoolSetAccess(pool, list, n);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_mempool_get_access(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    int32_t type;
    struct cudaMemLocation loc;
    apigen_get_u64(&c, &id);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &loc.id);
    if (apigen_end(&c) < 0)
        return c.rc;
    loc.type = (enum cudaMemLocationType)type;
    cudaMemPool_t pool;
    enum cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    cudaError_t e = be_pool(id, &pool);
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemPoolGetAccess(&flags, pool, &loc);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, flags);
    return c.rc;
}
