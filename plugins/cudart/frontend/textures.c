/*
 * Texture and surface objects.  Their values are CUDA's own, created on
 * the backend and passed to kernels unchanged; the resource descriptions
 * travel field by field, arrays as their ids.  The descriptions a
 * program asks back for are the ones it gave, kept by the backend.
 */
#include "fe.h"

#include <string.h>

#include "cudart_ops.h"
#include "gvs/err.h"

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static void put_channel(struct apigen_call *c,
                        const struct cudaChannelFormatDesc *d)
{
    apigen_put_i32(c, d->x);
    apigen_put_i32(c, d->y);
    apigen_put_i32(c, d->z);
    apigen_put_i32(c, d->w);
    apigen_put_i32(c, d->f);
}

static void get_channel(struct apigen_call *c, struct cudaChannelFormatDesc *d)
{
    int32_t f;
    apigen_get_i32(c, &d->x);
    apigen_get_i32(c, &d->y);
    apigen_get_i32(c, &d->z);
    apigen_get_i32(c, &d->w);
    apigen_get_i32(c, &f);
    d->f = (enum cudaChannelFormatKind)f;
}

/* cudaErrorInvalidValue for a resource type the wire does not carry. */
static cudaError_t put_resource(struct apigen_call *c,
                                const struct cudaResourceDesc *r)
{
    apigen_put_i32(c, r->resType);
    switch (r->resType) {
    case cudaResourceTypeArray:
        apigen_put_u64(c, (uint64_t)(uintptr_t)r->res.array.array);
        break;
    case cudaResourceTypeMipmappedArray:
        apigen_put_u64(c, (uint64_t)(uintptr_t)r->res.mipmap.mipmap);
        break;
    case cudaResourceTypeLinear:
        apigen_put_u64(c, (uint64_t)(uintptr_t)r->res.linear.devPtr);
        put_channel(c, &r->res.linear.desc);
        apigen_put_u64(c, r->res.linear.sizeInBytes);
        break;
    case cudaResourceTypePitch2D:
        apigen_put_u64(c, (uint64_t)(uintptr_t)r->res.pitch2D.devPtr);
        put_channel(c, &r->res.pitch2D.desc);
        apigen_put_u64(c, r->res.pitch2D.width);
        apigen_put_u64(c, r->res.pitch2D.height);
        apigen_put_u64(c, r->res.pitch2D.pitchInBytes);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    apigen_put_u32(c, r->flags);
    return cudaSuccess;
}

static void get_resource(struct apigen_call *c, struct cudaResourceDesc *r)
{
    int32_t type;
    uint64_t p, a, b, d;
    memset(r, 0, sizeof(*r));
    apigen_get_i32(c, &type);
    r->resType = (enum cudaResourceType)type;
    switch (type) {
    case cudaResourceTypeArray:
        apigen_get_u64(c, &p);
        r->res.array.array = (cudaArray_t)(uintptr_t)p;
        break;
    case cudaResourceTypeMipmappedArray:
        apigen_get_u64(c, &p);
        r->res.mipmap.mipmap = (cudaMipmappedArray_t)(uintptr_t)p;
        break;
    case cudaResourceTypeLinear:
        apigen_get_u64(c, &p);
        get_channel(c, &r->res.linear.desc);
        apigen_get_u64(c, &a);
        r->res.linear.devPtr = (void *)(uintptr_t)p;
        r->res.linear.sizeInBytes = (size_t)a;
        break;
    case cudaResourceTypePitch2D:
        apigen_get_u64(c, &p);
        get_channel(c, &r->res.pitch2D.desc);
        apigen_get_u64(c, &a);
        apigen_get_u64(c, &b);
        apigen_get_u64(c, &d);
        r->res.pitch2D.devPtr = (void *)(uintptr_t)p;
        r->res.pitch2D.width = (size_t)a;
        r->res.pitch2D.height = (size_t)b;
        r->res.pitch2D.pitchInBytes = (size_t)d;
        break;
    default:
        if (c->rc == 0)
            c->rc = GVS_E_PROTO;
        return;
    }
    apigen_get_u32(c, &r->flags);
}

static void put_texture(struct apigen_call *c, const struct cudaTextureDesc *t)
{
    for (int i = 0; i < 3; i++)
        apigen_put_i32(c, t->addressMode[i]);
    apigen_put_i32(c, t->filterMode);
    apigen_put_i32(c, t->readMode);
    apigen_put_i32(c, t->sRGB);
    for (int i = 0; i < 4; i++)
        apigen_put_u32(c, float_bits(t->borderColor[i]));
    apigen_put_i32(c, t->normalizedCoords);
    apigen_put_u32(c, t->maxAnisotropy);
    apigen_put_i32(c, t->mipmapFilterMode);
    apigen_put_u32(c, float_bits(t->mipmapLevelBias));
    apigen_put_u32(c, float_bits(t->minMipmapLevelClamp));
    apigen_put_u32(c, float_bits(t->maxMipmapLevelClamp));
    apigen_put_i32(c, t->disableTrilinearOptimization);
    apigen_put_i32(c, t->seamlessCubemap);
}

static void get_texture(struct apigen_call *c, struct cudaTextureDesc *t)
{
    int32_t v;
    uint32_t u;
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < 3; i++) {
        apigen_get_i32(c, &v);
        t->addressMode[i] = (enum cudaTextureAddressMode)v;
    }
    apigen_get_i32(c, &v);
    t->filterMode = (enum cudaTextureFilterMode)v;
    apigen_get_i32(c, &v);
    t->readMode = (enum cudaTextureReadMode)v;
    apigen_get_i32(c, &t->sRGB);
    for (int i = 0; i < 4; i++) {
        apigen_get_u32(c, &u);
        t->borderColor[i] = bits_float(u);
    }
    apigen_get_i32(c, &t->normalizedCoords);
    apigen_get_u32(c, &t->maxAnisotropy);
    apigen_get_i32(c, &v);
    t->mipmapFilterMode = (enum cudaTextureFilterMode)v;
    apigen_get_u32(c, &u);
    t->mipmapLevelBias = bits_float(u);
    apigen_get_u32(c, &u);
    t->minMipmapLevelClamp = bits_float(u);
    apigen_get_u32(c, &u);
    t->maxMipmapLevelClamp = bits_float(u);
    apigen_get_i32(c, &t->disableTrilinearOptimization);
    apigen_get_i32(c, &t->seamlessCubemap);
}

static void put_view(struct apigen_call *c,
                     const struct cudaResourceViewDesc *v)
{
    apigen_put_i32(c, v->format);
    apigen_put_u64(c, v->width);
    apigen_put_u64(c, v->height);
    apigen_put_u64(c, v->depth);
    apigen_put_u32(c, v->firstMipmapLevel);
    apigen_put_u32(c, v->lastMipmapLevel);
    apigen_put_u32(c, v->firstLayer);
    apigen_put_u32(c, v->lastLayer);
}

static void get_view(struct apigen_call *c, struct cudaResourceViewDesc *v)
{
    int32_t f;
    uint64_t w, h, d;
    memset(v, 0, sizeof(*v));
    apigen_get_i32(c, &f);
    apigen_get_u64(c, &w);
    apigen_get_u64(c, &h);
    apigen_get_u64(c, &d);
    apigen_get_u32(c, &v->firstMipmapLevel);
    apigen_get_u32(c, &v->lastMipmapLevel);
    apigen_get_u32(c, &v->firstLayer);
    apigen_get_u32(c, &v->lastLayer);
    v->format = (enum cudaResourceViewFormat)f;
    v->width = (size_t)w;
    v->height = (size_t)h;
    v->depth = (size_t)d;
}

/* Creation: the encoded descriptions out, the object's value back. */
static cudaError_t create(uint16_t op, unsigned long long *out,
                          const struct cudaResourceDesc *res,
                          const struct cudaTextureDesc *tex,
                          const struct cudaResourceViewDesc *view)
{
    struct apigen_call c;
    uint64_t v = 0;
    if (out == NULL || res == NULL ||
        (op == CUDART_OP_TEXTURE_CREATE && tex == NULL))
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    e = put_resource(&c, res);
    if (e != cudaSuccess)
        return e;
    if (op == CUDART_OP_TEXTURE_CREATE) {
        put_texture(&c, tex);
        apigen_put_u8(&c, view != NULL);
        if (view != NULL)
            put_view(&c, view);
    }
    e = cudart_fe_run(&c, op, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &v);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = v;
    return e;
}

static cudaError_t destroy(uint16_t op, uint64_t obj)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, obj);
    e = cudart_fe_run(&c, op, 0);
    return cudart_fe_end(&c, e);
}

/* The descriptions an object was created with; any of the outputs may
 * be NULL. */
static cudaError_t query(uint16_t op, uint64_t obj,
                         struct cudaResourceDesc *res,
                         struct cudaTextureDesc *tex,
                         struct cudaResourceViewDesc *view)
{
    struct apigen_call c;
    struct cudaResourceDesc r;
    struct cudaTextureDesc t;
    struct cudaResourceViewDesc v;
    uint8_t has_view = 0;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, obj);
    e = cudart_fe_run(&c, op, 0);
    memset(&v, 0, sizeof(v));
    if (e == cudaSuccess) {
        get_resource(&c, &r);
        if (op == CUDART_OP_TEXTURE_DESC) {
            get_texture(&c, &t);
            apigen_get_u8(&c, &has_view);
            if (has_view)
                get_view(&c, &v);
        }
    }
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    if (res != NULL)
        *res = r;
    if (tex != NULL)
        *tex = t;
    if (view != NULL)
        *view = v;
    return cudaSuccess;
}

cudaError_t cudaCreateTextureObject(
    cudaTextureObject_t *pTexObject, const struct cudaResourceDesc *pResDesc,
    const struct cudaTextureDesc *pTexDesc,
    const struct cudaResourceViewDesc *pResViewDesc)
{
    return cudart_fe_ret(create(CUDART_OP_TEXTURE_CREATE, pTexObject,
                                pResDesc, pTexDesc, pResViewDesc));
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject)
{
    return cudart_fe_ret(destroy(CUDART_OP_TEXTURE_DESTROY, texObject));
}

cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                             cudaTextureObject_t texObject)
{
    if (pResDesc == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(
        query(CUDART_OP_TEXTURE_DESC, texObject, pResDesc, NULL, NULL));
}

cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *pTexDesc,
                                            cudaTextureObject_t texObject)
{
    if (pTexDesc == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(
        query(CUDART_OP_TEXTURE_DESC, texObject, NULL, pTexDesc, NULL));
}

cudaError_t cudaGetTextureObjectResourceViewDesc(
    struct cudaResourceViewDesc *pResViewDesc, cudaTextureObject_t texObject)
{
    if (pResViewDesc == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(
        query(CUDART_OP_TEXTURE_DESC, texObject, NULL, NULL, pResViewDesc));
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject,
                                    const struct cudaResourceDesc *pResDesc)
{
    return cudart_fe_ret(
        create(CUDART_OP_SURFACE_CREATE, pSurfObject, pResDesc, NULL, NULL));
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject)
{
    return cudart_fe_ret(destroy(CUDART_OP_SURFACE_DESTROY, surfObject));
}

cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                             cudaSurfaceObject_t surfObject)
{
    if (pResDesc == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(
        query(CUDART_OP_SURFACE_DESC, surfObject, pResDesc, NULL, NULL));
}
