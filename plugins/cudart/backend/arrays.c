/*
 * CUDA arrays and mipmapped arrays as BE_H_ARRAY / BE_H_MIPMAPPED_ARRAY
 * ids, registered in the layer (remote_be.h, "Arrays"), which the driver
 * plugin's are too.  A mipmapped array's levels are arrays, owned by it,
 * and so is a multi-planar array's plane, owned by its array.
 */
#include "mem3d.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

cudaError_t be_array(uint64_t id, cudaArray_t *out)
{
    *out = be_remote->array_get(BE_H_ARRAY, id, NULL);
    return *out != NULL ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t be_mipmapped(uint64_t id, cudaMipmappedArray_t *out)
{
    *out = be_remote->array_get(BE_H_MIPMAPPED_ARRAY, id, NULL);
    return *out != NULL ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

static size_t desc_elem(const struct cudaChannelFormatDesc *d)
{
    long bits = (long)d->x + d->y + d->z + d->w;
    return bits > 0 && bits % 8 == 0 ? (size_t)(bits / 8) : 0;
}

cudaError_t be_array_elem(cudaArray_t a, size_t *elem)
{
    struct cudaChannelFormatDesc d;
    struct cudaExtent x;
    unsigned flags;
    cudaError_t e = cudaArrayGetInfo(&d, &x, &flags, a);
    if (e != cudaSuccess)
        return e;
    *elem = desc_elem(&d);
    return *elem != 0 ? cudaSuccess : cudaErrorInvalidValue;
}

/* What the quota takes before CUDA makes an array (the layer's
 * bound), elements rounded up to whole bytes. */
static uint64_t array_bound(const struct cudaChannelFormatDesc *d,
                            struct cudaExtent x, unsigned levels)
{
    long bits = (long)d->x + d->y + d->z + d->w;
    return gvs_remote_array_bound(bits > 0 ? (uint64_t)(bits + 7) / 8 : 1,
                                  x.width, x.height, x.depth, levels);
}

/* What CUDA says an array (mipmapped: m) made by call holds on its
 * lane's device, where it says; else bound. */
static uint64_t array_bytes(struct gvs_call *call, cudaArray_t a,
                            cudaMipmappedArray_t m, uint64_t bound)
{
    struct cudaArrayMemoryRequirements r;
    struct be_lane *l = be_lane(call);
    int dev = l != NULL ? l->device : 0;
    cudaError_t e =
        a != NULL ? cudaArrayGetMemoryRequirements(&r, a, dev)
                  : cudaMipmappedArrayGetMemoryRequirements(&r, m, dev);
    if (e == cudaSuccess && r.size > 0)
        return r.size;
    /* Leaves nothing behind for a later cudaGetLastError. */
    (void)cudaGetLastError();
    return bound;
}

/* Registers an array the session made; a failure to register frees
 * it. */
static cudaError_t add_array(cudaArray_t a, uint64_t *id, size_t *elem)
{
    *elem = 0;
    if (be_remote->array_add(BE_H_ARRAY, a, id) == 0) {
        /* Formats without whole-byte elements can be held, not copied. */
        (void)be_array_elem(a, elem);
        return cudaSuccess;
    }
    (void)cudaFreeArray(a);
    return cudaErrorMemoryAllocation;
}

/* Reply of the ops that hand out an array: i32, then u64 id, u32 element
 * size (0 if the format has no whole-byte elements). */
static void put_array(struct apigen_call *c, cudaError_t e, uint64_t id,
                      size_t elem)
{
    apigen_put_i32(c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(c, id);
        apigen_put_u32(c, (uint32_t)elem);
    }
}

static void get_desc(struct apigen_call *c, struct cudaChannelFormatDesc *d)
{
    int32_t f;
    apigen_get_i32(c, &d->x);
    apigen_get_i32(c, &d->y);
    apigen_get_i32(c, &d->z);
    apigen_get_i32(c, &d->w);
    apigen_get_i32(c, &f);
    d->f = (enum cudaChannelFormatKind)f;
}

static void get_extent(struct apigen_call *c, struct cudaExtent *x)
{
    uint64_t w, h, d;
    apigen_get_u64(c, &w);
    apigen_get_u64(c, &h);
    apigen_get_u64(c, &d);
    *x = (struct cudaExtent){(size_t)w, (size_t)h, (size_t)d};
}

/* Request: u8 which (0 cudaMallocArray, 1 cudaMalloc3DArray), channel
 * desc (i32 x, y, z, w, kind), u64 width, height, depth, u32 flags. */
int cudart_be_array_malloc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cudaChannelFormatDesc d;
    struct cudaExtent x;
    uint8_t which;
    uint32_t flags;
    apigen_get_u8(&c, &which);
    get_desc(&c, &d);
    get_extent(&c, &x);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 1)
        return GVS_E_PROTO;
    cudaArray_t a = NULL;
    uint64_t id = 0;
    size_t elem = 0;
    if (which == 0)
        x.depth = 0;
    uint64_t bound = array_bound(&d, x, 1);
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(bound);
    if (e == cudaSuccess) {
        e = which == 0 ? cudaMallocArray(&a, &d, x.width, x.height, flags)
                       : cudaMalloc3DArray(&a, &d, x, flags);
        uint64_t bytes = 0;
        if (e == cudaSuccess) {
            bytes = array_bytes(call, a, NULL, bound);
            e = add_array(a, &id, &elem);
        }
        be_quota_settle(call, e, BE_QUOTA_ARRAY, id, 0, bound, bytes);
    }
    put_array(&c, e, id, elem);
    return c.rc;
}

/* Frees a top-level array or mipmapped array (type) with fn, which
 * frees its sub-arrays too. */
static int free_array(struct gvs_call *call, uint16_t type,
                      enum be_quota_kind quota, cudaError_t (*fn)(void *))
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    int sub = 0;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    void *h = be_remote->array_get(type, id, &sub);
    cudaError_t e = h == NULL ? cudaErrorInvalidResourceHandle
                    : sub     ? cudaErrorInvalidValue
                              : cudart_be_enter(call);
    if (e == cudaSuccess)
        e = fn(h);
    if (e == cudaSuccess && be_remote->array_remove(type, id) == 0)
        be_quota_release(quota, id);
    apigen_put_i32(&c, e);
    return c.rc;
}

static cudaError_t free_array_fn(void *h)
{
    return cudaFreeArray(h);
}

static cudaError_t free_mipmap_fn(void *h)
{
    return cudaFreeMipmappedArray(h);
}

int cudart_be_array_free(struct gvs_call *call)
{
    return free_array(call, BE_H_ARRAY, BE_QUOTA_ARRAY, free_array_fn);
}

int cudart_be_mipmap_free(struct gvs_call *call)
{
    return free_array(call, BE_H_MIPMAPPED_ARRAY, BE_QUOTA_MIPMAP,
                      free_mipmap_fn);
}

/* Request: u64 parent id, u32 key.  Reply: as ARRAY_MALLOC's; the same
 * plane or level always has the same id. */
static int sub_array(struct gvs_call *call, uint16_t type,
                     int32_t (*get)(void *parent, uint32_t key, void **sub))
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t pid, id = 0;
    uint32_t key;
    size_t elem = 0;
    apigen_get_u64(&c, &pid);
    apigen_get_u32(&c, &key);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = be_remote->array_get(type, pid, NULL) != NULL
                        ? cudart_be_enter(call)
                        : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess)
        e = (cudaError_t)be_remote->array_sub(
            type, pid, key, get, cudaErrorInvalidResourceHandle,
            cudaErrorMemoryAllocation, &id);
    if (e == cudaSuccess) {
        cudaArray_t a;
        if (be_array(id, &a) == cudaSuccess)
            (void)be_array_elem(a, &elem);
    }
    put_array(&c, e, id, elem);
    return c.rc;
}

static int32_t get_plane(void *parent, uint32_t plane, void **sub)
{
    cudaArray_t a = NULL;
    cudaError_t e = cudaArrayGetPlane(&a, parent, plane);
    *sub = a;
    return e;
}

int cudart_be_array_plane(struct gvs_call *call)
{
    return sub_array(call, BE_H_ARRAY, get_plane);
}

int cudart_be_array_info(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaArray_t a;
    struct cudaChannelFormatDesc d;
    struct cudaExtent x;
    unsigned flags;
    cudaError_t e = be_array(id, &a);
    if (e == cudaSuccess)
        e = cudaArrayGetInfo(&d, &x, &flags, a);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_i32(&c, d.x);
        apigen_put_i32(&c, d.y);
        apigen_put_i32(&c, d.z);
        apigen_put_i32(&c, d.w);
        apigen_put_i32(&c, d.f);
        apigen_put_u64(&c, x.width);
        apigen_put_u64(&c, x.height);
        apigen_put_u64(&c, x.depth);
        apigen_put_u32(&c, flags);
    }
    return c.rc;
}

/* Request: channel desc, u64 width, height, depth, u32 levels, u32 flags.
 * Reply: i32, u64 id. */
int cudart_be_mipmap_malloc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cudaChannelFormatDesc d;
    struct cudaExtent x;
    uint32_t levels, flags;
    get_desc(&c, &d);
    get_extent(&c, &x);
    apigen_get_u32(&c, &levels);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaMipmappedArray_t m = NULL;
    uint64_t id = 0;
    uint64_t bound = array_bound(&d, x, levels);
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(bound);
    if (e == cudaSuccess) {
        e = cudaMallocMipmappedArray(&m, &d, x, levels, flags);
        uint64_t bytes = 0;
        if (e == cudaSuccess)
            bytes = array_bytes(call, NULL, m, bound);
        if (e == cudaSuccess &&
            be_remote->array_add(BE_H_MIPMAPPED_ARRAY, m, &id) < 0) {
            (void)cudaFreeMipmappedArray(m);
            e = cudaErrorMemoryAllocation;
        }
        be_quota_settle(call, e, BE_QUOTA_MIPMAP, id, 0, bound, bytes);
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}

static int32_t get_level(void *parent, uint32_t level, void **sub)
{
    cudaArray_t a = NULL;
    cudaError_t e = cudaGetMipmappedArrayLevel(&a, parent, level);
    *sub = a;
    return e;
}

int cudart_be_mipmap_level(struct gvs_call *call)
{
    return sub_array(call, BE_H_MIPMAPPED_ARRAY, get_level);
}
