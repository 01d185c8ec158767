/*
 * Texture and surface objects.  Their values are CUDA's own: kernels use
 * them on the GPU, so they cannot be translated.  The layer keeps the
 * set of values the plugin created (remote_be.h); destruction and
 * queries accept only those.  Each keeps the request that created it,
 * which is what the description queries answer.
 */
#include "mem3d.h"

#include <string.h>

#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"
#include "texture_wire.h"

/* Decodes a resource (an unknown type fails c with GVS_E_PROTO) into
 * ids; resolve_resource turns them into CUDA's handles. */
struct wire_resource {
    struct cudaResourceDesc r;
    uint64_t id; /* array or mipmapped array id, or device pointer */
};

static void get_resource(struct apigen_call *c, struct wire_resource *w)
{
    int32_t type;
    uint64_t a, b, d;
    memset(w, 0, sizeof(*w));
    apigen_get_i32(c, &type);
    w->r.resType = (enum cudaResourceType)type;
    apigen_get_u64(c, &w->id);
    switch (type) {
    case cudaResourceTypeArray:
    case cudaResourceTypeMipmappedArray:
        break;
    case cudaResourceTypeLinear:
        cudart_wire_get_channel(c, &w->r.res.linear.desc);
        apigen_get_u64(c, &a);
        w->r.res.linear.sizeInBytes = (size_t)a;
        break;
    case cudaResourceTypePitch2D:
        cudart_wire_get_channel(c, &w->r.res.pitch2D.desc);
        apigen_get_u64(c, &a);
        apigen_get_u64(c, &b);
        apigen_get_u64(c, &d);
        w->r.res.pitch2D.width = (size_t)a;
        w->r.res.pitch2D.height = (size_t)b;
        w->r.res.pitch2D.pitchInBytes = (size_t)d;
        break;
    default:
        if (c->rc == 0)
            c->rc = GVS_E_PROTO;
        return;
    }
    apigen_get_u32(c, &w->r.flags);
}

/* Linear memory a texture reads must be device memory. */
static cudaError_t resolve_resource(struct wire_resource *w)
{
    struct cudaResourceDesc *r = &w->r;
    uint64_t len;
    switch (r->resType) {
    case cudaResourceTypeArray:
        return be_array(w->id, &r->res.array.array);
    case cudaResourceTypeMipmappedArray:
        return be_mipmapped(w->id, &r->res.mipmap.mipmap);
    case cudaResourceTypeLinear:
        r->res.linear.devPtr = (void *)(uintptr_t)w->id;
        return be_check_device_range(w->id, r->res.linear.sizeInBytes);
    default:
        r->res.pitch2D.devPtr = (void *)(uintptr_t)w->id;
        if (__builtin_mul_overflow(r->res.pitch2D.pitchInBytes,
                                   r->res.pitch2D.height, &len))
            return cudaErrorInvalidValue;
        return be_check_device_range(w->id, len);
    }
}

/* Keeps value (a surface or not) with the request that made it;
 * cudaErrorMemoryAllocation if it cannot. */
static cudaError_t remember(int surface, uint64_t value, const uint8_t *desc,
                            size_t len)
{
    return be_remote->texobj_keep(CUDART_PLUGIN_ID, surface, value, desc,
                                  len) == 0
               ? cudaSuccess
               : cudaErrorMemoryAllocation;
}

int cudart_be_texture_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const uint8_t *body = gvs_buf_ptr(call->in);
    size_t body_len = gvs_buf_len(call->in);
    struct wire_resource res;
    struct cudaTextureDesc tex;
    struct cudaResourceViewDesc view;
    uint8_t has_view;
    get_resource(&c, &res);
    cudart_wire_get_texture(&c, &tex);
    apigen_get_u8(&c, &has_view);
    if (has_view)
        cudart_wire_get_view(&c, &view);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (has_view > 1)
        return GVS_E_PROTO;
    cudaTextureObject_t t = 0;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = resolve_resource(&res);
    if (e == cudaSuccess)
        e = cudaCreateTextureObject(&t, &res.r, &tex, has_view ? &view : NULL);
    if (e == cudaSuccess) {
        e = remember(0, t, body, body_len);
        if (e != cudaSuccess)
            (void)cudaDestroyTextureObject(t);
    }
    be_reply_u64(&c, e, t);
    return c.rc;
}

int cudart_be_surface_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const uint8_t *body = gvs_buf_ptr(call->in);
    size_t body_len = gvs_buf_len(call->in);
    struct wire_resource res;
    get_resource(&c, &res);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaSurfaceObject_t s = 0;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = resolve_resource(&res);
    if (e == cudaSuccess)
        e = cudaCreateSurfaceObject(&s, &res.r);
    if (e == cudaSuccess) {
        e = remember(1, s, body, body_len);
        if (e != cudaSuccess)
            (void)cudaDestroySurfaceObject(s);
    }
    be_reply_u64(&c, e, s);
    return c.rc;
}

static int32_t destroy_texture(uint64_t v)
{
    return cudaDestroyTextureObject(v);
}

static int32_t destroy_surface(uint64_t v)
{
    return cudaDestroySurfaceObject(v);
}

/* Destroys one of the session's objects; values it did not create are
 * cudaErrorInvalidValue and never reach CUDA. */
static int destroy(struct gvs_call *call, int surface)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t v;
    apigen_get_u64(&c, &v);
    if (apigen_end(&c) < 0)
        return c.rc;
    apigen_put_i32(&c, be_remote->texobj_destroy(
                           CUDART_PLUGIN_ID, surface, v,
                           surface ? destroy_surface : destroy_texture,
                           cudaErrorInvalidValue));
    return c.rc;
}

int cudart_be_texture_destroy(struct gvs_call *call)
{
    return destroy(call, 0);
}

int cudart_be_surface_destroy(struct gvs_call *call)
{
    return destroy(call, 1);
}

static int describe(struct gvs_call *call, int surface)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t v;
    uint8_t *desc = NULL;
    size_t len = 0;
    apigen_get_u64(&c, &v);
    if (apigen_end(&c) < 0)
        return c.rc;
    int rc = be_remote->texobj_desc(CUDART_PLUGIN_ID, surface, v, &desc,
                                    &len);
    if (rc == GVS_E_NOMEM)
        return rc;
    apigen_put_i32(&c, rc == 0 ? cudaSuccess : cudaErrorInvalidValue);
    if (rc == 0)
        apigen_put_bytes(&c, desc, len);
    gvs_free(desc);
    return c.rc;
}

int cudart_be_texture_desc(struct gvs_call *call)
{
    return describe(call, 0);
}

int cudart_be_surface_desc(struct gvs_call *call)
{
    return describe(call, 1);
}
