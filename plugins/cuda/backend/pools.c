/* Memory pools and the stream-ordered allocator (cuda.api, docs/driver.md
 * "Pools").  A pool is an id of the layer's table (GVS_RH_MEMPOOL,
 * handle_intern): the same id for the same pool every time, through the
 * runtime plugin too.  Stream-ordered allocations count against the
 * session's quota as they are handed out, whatever the pool reserves
 * around them. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"

CUresult cuda_be_pool(uint64_t wire, CUmemoryPool *out)
{
    CUmemoryPool p =
        gvs_handles_get(cuda_be_remote->handles(), GVS_RH_MEMPOOL, wire);
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *out = p;
    return CUDA_SUCCESS;
}

/* The reply of an op that names a pool: i32 r, then u64 its id. */
static void reply_pool(struct apigen_call *c, CUresult r, CUmemoryPool pool)
{
    uint64_t id = 0;
    if (r == CUDA_SUCCESS &&
        cuda_be_remote->handle_intern(GVS_RH_MEMPOOL, pool, &id) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    cuda_be_reply_id(c, r, id);
}

static CUmemLocation location(int32_t type, int32_t id)
{
    CUmemLocation l;
    l.type = (CUmemLocationType)type;
    l.id = id;
    return l;
}

/* Request: u64 stream, u8 0, u64 size, u64 pool (0: the current pool of
 * the stream's device).  Reply: i32, u64 address. */
int cuda_be_mem_alloc_async(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    CUmemoryPool pool = NULL;
    uint8_t zero = 0;
    uint64_t size, pool_id;
    CUdeviceptr p = 0;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &zero);
    apigen_get_u64(&c, &size);
    apigen_get_u64(&c, &pool_id);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (zero != 0)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS && pool_id != 0)
        r = cuda_be_pool(pool_id, &pool);
    if (r == CUDA_SUCCESS && cuda_be_remote->quota_take(size) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (r == CUDA_SUCCESS) {
        r = pool_id != 0 ? CUDA_DRV(cuMemAllocFromPoolAsync)(
                               &p, (size_t)size, pool, s)
                         : CUDA_DRV(cuMemAllocAsync)(&p, (size_t)size, s);
        cuda_be_remote->quota_settle(r == CUDA_SUCCESS, GVS_RQ_PTR, p,
                                     cuda_be_quota_device(), 0, size, size);
    }
    cuda_be_reply_id(&c, r, p);
    return c.rc;
}

/* Request: u64 stream, u8 0, u64 address.  Reply: i32. */
int cuda_be_mem_free_async(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    uint8_t zero = 0;
    uint64_t p;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &zero);
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (zero != 0)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemFreeAsync)((CUdeviceptr)p, s);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->quota_release(GVS_RQ_PTR, p);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: i32 allocation type, i32 handle types, i32 location type, i32
 * location id, u64 max size, u32 usage.  Reply: i32, u64 pool. */
int cuda_be_mempool_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUmemPoolProps props = {0};
    int32_t type, handles, ltype, lid;
    uint64_t max;
    uint32_t usage;
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &handles);
    apigen_get_i32(&c, &ltype);
    apigen_get_i32(&c, &lid);
    apigen_get_u64(&c, &max);
    apigen_get_u32(&c, &usage);
    if (apigen_end(&c) < 0)
        return c.rc;
    props.allocType = (CUmemAllocationType)type;
    props.handleTypes = (CUmemAllocationHandleType)handles;
    props.location = location(ltype, lid);
    props.maxSize = (size_t)max;
    props.usage = (unsigned short)usage;
    CUmemoryPool pool = NULL;
    CUresult r = usage > 0xffff ? CUDA_ERROR_INVALID_VALUE
                                : cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemPoolCreate)(&pool, &props);
    reply_pool(&c, r, pool);
    return c.rc;
}

/* Request: u64 pool.  Reply: i32. */
int cuda_be_mempool_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    CUmemoryPool pool;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_pool(id, &pool);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemPoolDestroy)(pool);
    if (r == CUDA_SUCCESS)
        (void)cuda_be_remote->handle_forget(GVS_RH_MEMPOOL, id);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* The attributes the driver reads and writes as an int; the others are
 * 64-bit. */
static int attr_is_int(int32_t a)
{
    return a == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
           a == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC ||
           a == CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

static int attr_known(int32_t a)
{
    return attr_is_int(a) || (a >= CU_MEMPOOL_ATTR_RELEASE_THRESHOLD &&
                              a <= CU_MEMPOOL_ATTR_USED_MEM_HIGH);
}

/* Request: u8 set, u64 pool, i32 attribute, u64 value (an int's as u64;
 * 0 for a get).  Reply: i32, u64 value. */
int cuda_be_mempool_attribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t set;
    uint64_t id, v;
    int32_t attr;
    CUmemoryPool pool;
    apigen_get_u8(&c, &set);
    apigen_get_u64(&c, &id);
    apigen_get_i32(&c, &attr);
    apigen_get_u64(&c, &v);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (set > 1)
        return GVS_E_PROTO;
    int iv = (int)(uint32_t)v;
    void *value = attr_is_int(attr) ? (void *)&iv : (void *)&v;
    CUresult r = attr_known(attr) ? cuda_be_enter(call)
                                  : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = cuda_be_pool(id, &pool);
    if (r == CUDA_SUCCESS)
        r = set ? CUDA_DRV(cuMemPoolSetAttribute)(
                      pool, (CUmemPool_attribute)attr, value)
                : CUDA_DRV(cuMemPoolGetAttribute)(
                      pool, (CUmemPool_attribute)attr, value);
    cuda_be_reply_id(&c, r, attr_is_int(attr) ? (uint64_t)(uint32_t)iv : v);
    return c.rc;
}

#define OF_DEVICE_DEFAULT 0
#define OF_DEVICE_CURRENT 1
#define OF_LOCATION_DEFAULT 2
#define OF_LOCATION_CURRENT 3

/* Request: u8 which (0 a device's default pool, 1 its current one, 2 a
 * location's default, 3 its current), i32 location type, i32 location
 * id (the device for 0 and 1), i32 allocation type.  Reply: i32, u64
 * pool. */
int cuda_be_mempool_get(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    int32_t type, id, alloc;
    apigen_get_u8(&c, &which);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &id);
    apigen_get_i32(&c, &alloc);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > OF_LOCATION_CURRENT)
        return GVS_E_PROTO;
    CUmemLocation loc = location(type, id);
    CUmemAllocationType t = (CUmemAllocationType)alloc;
    CUmemoryPool pool = NULL;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && which == OF_DEVICE_DEFAULT)
        r = CUDA_DRV(cuDeviceGetDefaultMemPool)(&pool, id);
    else if (r == CUDA_SUCCESS && which == OF_DEVICE_CURRENT)
        r = CUDA_DRV(cuDeviceGetMemPool)(&pool, id);
    else if (r == CUDA_SUCCESS && which == OF_LOCATION_DEFAULT)
        r = CUDA_DRV(cuMemGetDefaultMemPool)(&pool, &loc, t);
    else if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemGetMemPool)(&pool, &loc, t);
    reply_pool(&c, r, pool);
    return c.rc;
}

/* Request: u8 which (0 a device's current pool, 1 a location's), i32
 * location type, i32 location id (the device for 0), i32 allocation
 * type, u64 pool.  Reply: i32. */
int cuda_be_mempool_set_current(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    int32_t type, id, alloc;
    uint64_t pool_id;
    CUmemoryPool pool;
    apigen_get_u8(&c, &which);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &id);
    apigen_get_i32(&c, &alloc);
    apigen_get_u64(&c, &pool_id);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 1)
        return GVS_E_PROTO;
    CUmemLocation loc = location(type, id);
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_pool(pool_id, &pool);
    if (r == CUDA_SUCCESS)
        r = which == 0 ? CUDA_DRV(cuDeviceSetMemPool)(id, pool)
                       : CUDA_DRV(cuMemSetMemPool)(
                             &loc, (CUmemAllocationType)alloc, pool);
    apigen_put_i32(&c, r);
    return c.rc;
}

int cuda_be_get_access(struct apigen_call *c, int set, CUmemAccessDesc **out,
                       uint32_t *n)
{
    static _Thread_local CUmemAccessDesc list[CUDA_BE_ACCESS_MAX];
    apigen_get_u32(c, n);
    if (c->rc == 0 && (*n > CUDA_BE_ACCESS_MAX || (!set && *n != 1)))
        c->rc = GVS_E_PROTO;
    for (uint32_t i = 0; i < *n && c->rc == 0; i++) {
        int32_t type, lid, flags;
        apigen_get_i32(c, &type);
        apigen_get_i32(c, &lid);
        apigen_get_i32(c, &flags);
        list[i].location = location(type, lid);
        list[i].flags = (CUmemAccess_flags)flags;
    }
    *out = list;
    return c->rc;
}

/* Request: u8 set, u64 pool, the access list.  Reply: i32, i32 the flags
 * (get). */
int cuda_be_mempool_access(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t set;
    uint64_t id;
    uint32_t n;
    CUmemAccessDesc *list;
    apigen_get_u8(&c, &set);
    apigen_get_u64(&c, &id);
    if (c.rc == 0 && set > 1)
        return GVS_E_PROTO;
    if (cuda_be_get_access(&c, set, &list, &n) < 0 || apigen_end(&c) < 0)
        return c.rc;
    CUmemoryPool pool;
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_pool(id, &pool);
    if (r == CUDA_SUCCESS)
        r = set ? CUDA_DRV(cuMemPoolSetAccess)(pool, list, n)
                : CUDA_DRV(cuMemPoolGetAccess)(&flags, pool,
                                               &list[0].location);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS && !set)
        apigen_put_i32(&c, flags);
    return c.rc;
}
