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
#include "texture_wire.h"

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
        cudart_wire_put_channel(c, &r->res.linear.desc);
        apigen_put_u64(c, r->res.linear.sizeInBytes);
        break;
    case cudaResourceTypePitch2D:
        apigen_put_u64(c, (uint64_t)(uintptr_t)r->res.pitch2D.devPtr);
        cudart_wire_put_channel(c, &r->res.pitch2D.desc);
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
        cudart_wire_get_channel(c, &r->res.linear.desc);
        apigen_get_u64(c, &a);
        r->res.linear.devPtr = (void *)(uintptr_t)p;
        r->res.linear.sizeInBytes = (size_t)a;
        break;
    case cudaResourceTypePitch2D:
        apigen_get_u64(c, &p);
        cudart_wire_get_channel(c, &r->res.pitch2D.desc);
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
        cudart_wire_put_texture(&c, tex);
        apigen_put_u8(&c, view != NULL);
        if (view != NULL)
            cudart_wire_put_view(&c, view);
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
            cudart_wire_get_texture(&c, &t);
            apigen_get_u8(&c, &has_view);
            if (has_view)
                cudart_wire_get_view(&c, &v);
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
