/* Texture and surface objects (cuda.api, TEXOBJ_*): the values are the
 * backend driver's, which kernels use; the descriptions travel as the
 * driver's structures, an array or mipmapped array in them being the
 * session's id, which is the program's handle. */
#include "call.h"

#include "cuda_fe_gen.h"
#include "cuda_ops.h"

/* Request: u8 surface, bytes the resource, for a texture bytes the
 * texture, u8 has view, [bytes the view].  Reply: i32, u64 value. */
static CUresult create(int surface, const CUDA_RESOURCE_DESC *res,
                       const CUDA_TEXTURE_DESC *tex,
                       const CUDA_RESOURCE_VIEW_DESC *view, uint64_t *value)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)surface);
    apigen_put_bytes(&c, res, sizeof(*res));
    if (!surface) {
        apigen_put_bytes(&c, tex, sizeof(*tex));
        apigen_put_u8(&c, view != NULL);
        if (view != NULL)
            apigen_put_bytes(&c, view, sizeof(*view));
    }
    r = cuda_fe_run(&c, CUDA_OP_TEXOBJ_CREATE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, value);
    return cuda_fe_end(&c, r);
}

static CUresult destroy(int surface, uint64_t value)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)surface);
    apigen_put_u64(&c, value);
    r = cuda_fe_run(&c, CUDA_OP_TEXOBJ_DESTROY, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

/* The description of value that the one of out, res, tex or view not
 * NULL asks for.  Request: u8 surface, u64 value.  Reply: i32, bytes the
 * resource, for a texture bytes the texture and the view. */
static CUresult describe(int surface, uint64_t value, CUDA_RESOURCE_DESC *res,
                         CUDA_TEXTURE_DESC *tex,
                         CUDA_RESOURCE_VIEW_DESC *view)
{
    struct apigen_call c;
    CUDA_RESOURCE_DESC r0;
    CUDA_TEXTURE_DESC t0;
    CUDA_RESOURCE_VIEW_DESC v0;
    if (res == NULL && tex == NULL && view == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)surface);
    apigen_put_u64(&c, value);
    r = cuda_fe_run(&c, CUDA_OP_TEXOBJ_DESC, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_bytes(&c, res != NULL ? res : &r0, sizeof(r0));
        if (!surface) {
            apigen_get_bytes(&c, tex != NULL ? tex : &t0, sizeof(t0));
            apigen_get_bytes(&c, view != NULL ? view : &v0, sizeof(v0));
        }
    }
    return cuda_fe_end(&c, r);
}

CUresult cuTexObjectCreate(CUtexObject *pTexObject,
                           const CUDA_RESOURCE_DESC *pResDesc,
                           const CUDA_TEXTURE_DESC *pTexDesc,
                           const CUDA_RESOURCE_VIEW_DESC *pResViewDesc)
{
    uint64_t v = 0;
    if (pTexObject == NULL || pResDesc == NULL || pTexDesc == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = create(0, pResDesc, pTexDesc, pResViewDesc, &v);
    if (r == CUDA_SUCCESS)
        *pTexObject = (CUtexObject)v;
    return r;
}

CUresult cuSurfObjectCreate(CUsurfObject *pSurfObject,
                            const CUDA_RESOURCE_DESC *pResDesc)
{
    uint64_t v = 0;
    if (pSurfObject == NULL || pResDesc == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = create(1, pResDesc, NULL, NULL, &v);
    if (r == CUDA_SUCCESS)
        *pSurfObject = (CUsurfObject)v;
    return r;
}

CUresult cuTexObjectDestroy(CUtexObject texObject)
{
    return destroy(0, texObject);
}

CUresult cuSurfObjectDestroy(CUsurfObject surfObject)
{
    return destroy(1, surfObject);
}

CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc,
                                    CUtexObject texObject)
{
    return describe(0, texObject, pResDesc, NULL, NULL);
}

CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *pTexDesc,
                                   CUtexObject texObject)
{
    return describe(0, texObject, NULL, pTexDesc, NULL);
}

CUresult cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC *pResViewDesc,
                                        CUtexObject texObject)
{
    return describe(0, texObject, NULL, NULL, pResViewDesc);
}

CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc,
                                     CUsurfObject surfObject)
{
    return describe(1, surfObject, pResDesc, NULL, NULL);
}
