/*
 * CUDA arrays and mipmapped arrays as BE_H_ARRAY / BE_H_MIPMAPPED_ARRAY
 * ids.  A mipmapped array's levels are arrays too, owned by it: each
 * level gets one id, kept until the mipmapped array is freed, and cannot
 * be freed on its own.  So is a multi-planar array's plane, owned by its
 * array.
 */
#include "mem3d.h"

#include <pthread.h>

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "objects.h"

struct be_array {
    cudaArray_t a;
    int level; /* owned by a mipmapped array or, a plane, by an array */
    struct gvs_u64map planes; /* plane -> array id */
};

struct be_mipmap {
    cudaMipmappedArray_t m;
    struct gvs_u64map levels; /* level -> array id */
};

/* Guards the levels of every mipmapped array and the planes of every
 * array. */
static pthread_mutex_t levels_lock = PTHREAD_MUTEX_INITIALIZER;

cudaError_t be_array(uint64_t id, cudaArray_t *out)
{
    struct be_array *a = gvs_handles_get(be_handles(), BE_H_ARRAY, id);
    if (a == NULL)
        return cudaErrorInvalidResourceHandle;
    *out = a->a;
    return cudaSuccess;
}

cudaError_t be_mipmapped(uint64_t id, cudaMipmappedArray_t *out)
{
    struct be_mipmap *m =
        gvs_handles_get(be_handles(), BE_H_MIPMAPPED_ARRAY, id);
    if (m == NULL)
        return cudaErrorInvalidResourceHandle;
    *out = m->m;
    return cudaSuccess;
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

/* The bytes an array of d's elements over x (levels mipmap levels)
 * holds at most, taken from the quota before CUDA makes it: elements of
 * whole bytes (rounded up) over the extent, a missing dimension counting
 * 1, twice that for a mipmapped array (its levels halve, so together
 * they stay under twice the first); UINT64_MAX when it overflows. */
static uint64_t array_bound(const struct cudaChannelFormatDesc *d,
                            struct cudaExtent x, unsigned levels)
{
    long bits = (long)d->x + d->y + d->z + d->w;
    uint64_t n = bits > 0 ? (uint64_t)(bits + 7) / 8 : 1;
    uint64_t dims[] = {x.width, x.height, x.depth, levels > 1 ? 2 : 1};
    for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
        if (__builtin_mul_overflow(n, dims[i] ? dims[i] : 1, &n))
            return UINT64_MAX;
    return n;
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

/* Registers a; a failure to register frees an array of our own. */
static cudaError_t add_array(cudaArray_t a, int level, uint64_t *id,
                             size_t *elem)
{
    struct be_array *o = gvs_malloc(sizeof(*o));
    cudaError_t e = cudaErrorMemoryAllocation;
    *elem = 0;
    if (o != NULL) {
        /* Formats without whole-byte elements can be held, not copied. */
        (void)be_array_elem(a, elem);
        *o = (struct be_array){.a = a, .level = level};
        if (gvs_handles_add(be_handles(), BE_H_ARRAY, o, id) == 0)
            return cudaSuccess;
        gvs_free(o);
    }
    if (!level)
        (void)cudaFreeArray(a);
    return e;
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
            e = add_array(a, 0, &id, &elem);
        }
        be_quota_settle(call, e, BE_QUOTA_ARRAY, id, 0, bound, bytes);
    }
    put_array(&c, e, id, elem);
    return c.rc;
}

/* Unregisters the sub-arrays in ids once their parent is freed: CUDA
 * freed them with it. */
static void drop_sub_arrays(struct gvs_handles *t, struct gvs_u64map *ids)
{
    pthread_mutex_lock(&levels_lock);
    for (size_t i = 0; i < ids->n; i++)
        gvs_free(gvs_handles_remove(t, BE_H_ARRAY,
                                    (uint64_t)(uintptr_t)ids->e[i].val));
    gvs_u64map_clear(ids);
    pthread_mutex_unlock(&levels_lock);
}

int cudart_be_array_free(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct gvs_handles *t = be_handles();
    struct be_array *a = gvs_handles_get(t, BE_H_ARRAY, id);
    cudaError_t e = a == NULL ? cudaErrorInvalidResourceHandle
                    : a->level ? cudaErrorInvalidValue
                               : cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaFreeArray(a->a);
    if (e == cudaSuccess && gvs_handles_remove(t, BE_H_ARRAY, id) == a) {
        be_quota_release(BE_QUOTA_ARRAY, id);
        drop_sub_arrays(t, &a->planes);
        gvs_free(a);
    }
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Fetches sub-array key of parent from CUDA: a plane of an array, or a
 * level of a mipmapped array. */
typedef cudaError_t (*sub_array_get)(cudaArray_t *a, void *parent,
                                     uint32_t key);

/* Caller holds levels_lock.  The id of the sub-array key of parent, kept
 * in ids (the parent's planes or levels) and registered on first use. */
static cudaError_t sub_array_id(struct gvs_u64map *ids, sub_array_get get,
                                void *parent, uint32_t key, uint64_t *id,
                                size_t *elem)
{
    void *known = gvs_u64map_get(ids, key);
    cudaArray_t a;
    cudaError_t e;
    if (known != NULL) {
        *id = (uint64_t)(uintptr_t)known;
        e = be_array(*id, &a);
        if (e == cudaSuccess)
            (void)be_array_elem(a, elem);
        return e;
    }
    e = get(&a, parent, key);
    if (e == cudaSuccess)
        e = add_array(a, 1, id, elem);
    if (e == cudaSuccess &&
        gvs_u64map_put(ids, key, (void *)(uintptr_t)*id) < 0) {
        gvs_free(gvs_handles_remove(be_handles(), BE_H_ARRAY, *id));
        e = cudaErrorMemoryAllocation;
    }
    return e;
}

static cudaError_t get_plane(cudaArray_t *a, void *parent, uint32_t plane)
{
    return cudaArrayGetPlane(a, ((struct be_array *)parent)->a, plane);
}

/* Request: u64 array id, u32 plane.  Reply: as ARRAY_MALLOC's; the same
 * plane always has the same id. */
int cudart_be_array_plane(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t aid, id = 0;
    uint32_t plane;
    size_t elem = 0;
    apigen_get_u64(&c, &aid);
    apigen_get_u32(&c, &plane);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct be_array *o = gvs_handles_get(be_handles(), BE_H_ARRAY, aid);
    cudaError_t e = o != NULL ? cudart_be_enter(call)
                              : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess) {
        pthread_mutex_lock(&levels_lock);
        e = sub_array_id(&o->planes, get_plane, o, plane, &id, &elem);
        pthread_mutex_unlock(&levels_lock);
    }
    put_array(&c, e, id, elem);
    return c.rc;
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
    struct be_mipmap *m = gvs_calloc(1, sizeof(*m));
    uint64_t id = 0;
    uint64_t bound = array_bound(&d, x, levels);
    cudaError_t e = m != NULL ? cudart_be_enter(call)
                              : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = be_quota_take(bound);
    if (e == cudaSuccess) {
        e = cudaMallocMipmappedArray(&m->m, &d, x, levels, flags);
        uint64_t bytes = 0;
        if (e == cudaSuccess)
            bytes = array_bytes(call, NULL, m->m, bound);
        if (e == cudaSuccess &&
            gvs_handles_add(be_handles(), BE_H_MIPMAPPED_ARRAY, m, &id) < 0) {
            (void)cudaFreeMipmappedArray(m->m);
            e = cudaErrorMemoryAllocation;
        }
        be_quota_settle(call, e, BE_QUOTA_MIPMAP, id, 0, bound, bytes);
    }
    if (e != cudaSuccess)
        gvs_free(m);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}

static cudaError_t get_level(cudaArray_t *a, void *parent, uint32_t level)
{
    return cudaGetMipmappedArrayLevel(a, ((struct be_mipmap *)parent)->m,
                                      level);
}

/* Request: u64 mipmapped array id, u32 level.  Reply: as ARRAY_MALLOC's;
 * the same level always has the same id. */
int cudart_be_mipmap_level(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t mid, id = 0;
    uint32_t level;
    size_t elem = 0;
    apigen_get_u64(&c, &mid);
    apigen_get_u32(&c, &level);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct be_mipmap *m =
        gvs_handles_get(be_handles(), BE_H_MIPMAPPED_ARRAY, mid);
    cudaError_t e = m != NULL ? cudart_be_enter(call)
                              : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess) {
        pthread_mutex_lock(&levels_lock);
        e = sub_array_id(&m->levels, get_level, m, level, &id, &elem);
        pthread_mutex_unlock(&levels_lock);
    }
    put_array(&c, e, id, elem);
    return c.rc;
}

int cudart_be_mipmap_free(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct gvs_handles *t = be_handles();
    struct be_mipmap *m = gvs_handles_get(t, BE_H_MIPMAPPED_ARRAY, id);
    cudaError_t e = m != NULL ? cudart_be_enter(call)
                              : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess)
        e = cudaFreeMipmappedArray(m->m);
    if (e == cudaSuccess &&
        gvs_handles_remove(t, BE_H_MIPMAPPED_ARRAY, id) == m) {
        be_quota_release(BE_QUOTA_MIPMAP, id);
        drop_sub_arrays(t, &m->levels);
        gvs_free(m);
    }
    apigen_put_i32(&c, e);
    return c.rc;
}
