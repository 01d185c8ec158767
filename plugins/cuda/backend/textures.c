/* Texture and surface objects (cuda.api, TEXOBJ_*).  Their values are
 * the driver's own: kernels use them on the GPU, so they cannot be ids.
 * The layer keeps the values the session made (remote_be.h), each with
 * the descriptions it was made from, which the queries answer; values it
 * did not make are CUDA_ERROR_INVALID_VALUE and never reach the driver. */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* What the layer keeps of an object: the resource as the client gave it
 * (its array an id), and for a texture its texture and view. */
struct descs {
    CUDA_RESOURCE_DESC res;
    CUDA_TEXTURE_DESC tex;
    CUDA_RESOURCE_VIEW_DESC view;
};

/* The driver's resource of the client's: ids become the session's
 * arrays, and memory a texture reads must be device memory. */
static CUresult resolve(CUDA_RESOURCE_DESC *r)
{
    uint64_t len;
    switch (r->resType) {
    case CU_RESOURCE_TYPE_ARRAY:
        return cuda_be_array((uint64_t)(uintptr_t)r->res.array.hArray,
                             &r->res.array.hArray);
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        return cuda_be_mipmap(
            (uint64_t)(uintptr_t)r->res.mipmap.hMipmappedArray,
            &r->res.mipmap.hMipmappedArray);
    case CU_RESOURCE_TYPE_LINEAR:
        return cuda_be_check_device_range(r->res.linear.devPtr,
                                          r->res.linear.sizeInBytes);
    case CU_RESOURCE_TYPE_PITCH2D:
        if (__builtin_mul_overflow(r->res.pitch2D.pitchInBytes,
                                   r->res.pitch2D.height, &len))
            return CUDA_ERROR_INVALID_VALUE;
        return cuda_be_check_device_range(r->res.pitch2D.devPtr, len);
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult make(int surface, struct descs *d, int has_view,
                     uint64_t *value)
{
    CUDA_RESOURCE_DESC res = d->res;
    CUresult r = resolve(&res);
    if (r != CUDA_SUCCESS)
        return r;
    if (surface) {
        CUsurfObject s = 0;
        r = CUDA_DRV(cuSurfObjectCreate)(&s, &res);
        *value = s;
    } else {
        CUtexObject t = 0;
        r = CUDA_DRV(cuTexObjectCreate)(&t, &res, &d->tex,
                                        has_view ? &d->view : NULL);
        *value = t;
    }
    return r;
}

static int32_t destroy_texture(uint64_t v)
{
    return CUDA_DRV(cuTexObjectDestroy)((CUtexObject)v);
}

static int32_t destroy_surface(uint64_t v)
{
    return CUDA_DRV(cuSurfObjectDestroy)((CUsurfObject)v);
}

/* Request: u8 surface, bytes CUDA_RESOURCE_DESC, for a texture bytes
 * CUDA_TEXTURE_DESC, u8 has view, [bytes CUDA_RESOURCE_VIEW_DESC].
 * Reply: i32, u64 value. */
int cuda_be_texobj_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct descs d;
    uint8_t surface, has_view = 0;
    memset(&d, 0, sizeof(d));
    apigen_get_u8(&c, &surface);
    apigen_get_bytes(&c, &d.res, sizeof(d.res));
    if (c.rc == 0 && !surface) {
        apigen_get_bytes(&c, &d.tex, sizeof(d.tex));
        apigen_get_u8(&c, &has_view);
        if (c.rc == 0 && has_view)
            apigen_get_bytes(&c, &d.view, sizeof(d.view));
    }
    if (apigen_end(&c) < 0)
        return c.rc;
    if (surface > 1 || has_view > 1)
        return GVS_E_PROTO;
    uint64_t value = 0;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = make(surface, &d, has_view, &value);
    if (r == CUDA_SUCCESS &&
        cuda_be_remote->texobj_keep(CUDA_PLUGIN_ID, surface, value,
                                    (const uint8_t *)&d, sizeof(d)) < 0) {
        (void)(surface ? destroy_surface : destroy_texture)(value);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    cuda_be_reply_id(&c, r, value);
    return c.rc;
}

static void get_object(struct apigen_call *c, uint8_t *surface,
                       uint64_t *value)
{
    apigen_get_u8(c, surface);
    apigen_get_u64(c, value);
    if (c->rc == 0 && *surface > 1)
        c->rc = GVS_E_PROTO;
}

/* Request: u8 surface, u64 value.  Reply: i32. */
int cuda_be_texobj_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t surface;
    uint64_t v;
    get_object(&c, &surface, &v);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = (CUresult)cuda_be_remote->texobj_destroy(
            CUDA_PLUGIN_ID, surface, v,
            surface ? destroy_surface : destroy_texture,
            CUDA_ERROR_INVALID_VALUE);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: u8 surface, u64 value.  Reply: i32, bytes
 * CUDA_RESOURCE_DESC, for a texture bytes CUDA_TEXTURE_DESC and
 * CUDA_RESOURCE_VIEW_DESC. */
int cuda_be_texobj_desc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t surface;
    uint64_t v;
    uint8_t *kept = NULL;
    size_t len = 0;
    get_object(&c, &surface, &v);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    int rc = 1;
    if (r == CUDA_SUCCESS)
        rc = cuda_be_remote->texobj_desc(CUDA_PLUGIN_ID, surface, v, &kept,
                                         &len);
    if (rc == GVS_E_NOMEM)
        return rc;
    if (r == CUDA_SUCCESS && (rc != 0 || len != sizeof(struct descs)))
        r = CUDA_ERROR_INVALID_VALUE;
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        const struct descs *d = (const struct descs *)kept;
        apigen_put_bytes(&c, &d->res, sizeof(d->res));
        if (!surface) {
            apigen_put_bytes(&c, &d->tex, sizeof(d->tex));
            apigen_put_bytes(&c, &d->view, sizeof(d->view));
        }
    }
    gvs_free(kept);
    return c.rc;
}
