/* Arrays and mipmapped arrays (cuda.api, ARRAY_*): the program's CUarray
 * and CUmipmappedArray are ids of the session's table; the descriptor
 * and property queries are generated. */
#include "call.h"

#include "cuda_fe_gen.h"
#include "cuda_ops.h"

/* Request: u8 which, u64 width, height, depth, u32 format, u32
 * channels, u32 flags, u32 levels.  Reply: i32, u64 id. */
static CUresult create(uint8_t which, const CUDA_ARRAY3D_DESCRIPTOR *d,
                       unsigned levels, uint64_t *id)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, which);
    apigen_put_u64(&c, d->Width);
    apigen_put_u64(&c, d->Height);
    apigen_put_u64(&c, d->Depth);
    apigen_put_u32(&c, (uint32_t)d->Format);
    apigen_put_u32(&c, d->NumChannels);
    apigen_put_u32(&c, d->Flags);
    apigen_put_u32(&c, levels);
    r = cuda_fe_run(&c, CUDA_OP_ARRAY_CREATE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, id);
    return cuda_fe_end(&c, r);
}

/* Request: u8 which, u64 id (a parent's), [u32 key].  Reply: i32, [u64
 * id]. */
static CUresult by_id(uint16_t op, uint8_t which, uint64_t id, int has_key,
                      uint32_t key, uint64_t *out)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, which);
    apigen_put_u64(&c, id);
    if (has_key)
        apigen_put_u32(&c, key);
    r = cuda_fe_run(&c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS && out != NULL)
        apigen_get_u64(&c, out);
    return cuda_fe_end(&c, r);
}

CUresult cuArrayCreate_v2(CUarray *pHandle,
                          const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
    uint64_t id = 0;
    if (pHandle == NULL || pAllocateArray == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const CUDA_ARRAY3D_DESCRIPTOR d = {
        pAllocateArray->Width, pAllocateArray->Height, 0,
        pAllocateArray->Format, pAllocateArray->NumChannels, 0};
    CUresult r = create(0, &d, 0, &id);
    if (r == CUDA_SUCCESS)
        *pHandle = (CUarray)(uintptr_t)id;
    return r;
}

CUresult cuArray3DCreate_v2(CUarray *pHandle,
                            const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
    uint64_t id = 0;
    if (pHandle == NULL || pAllocateArray == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = create(1, pAllocateArray, 0, &id);
    if (r == CUDA_SUCCESS)
        *pHandle = (CUarray)(uintptr_t)id;
    return r;
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                const CUDA_ARRAY3D_DESCRIPTOR *pDesc,
                                unsigned int numMipmapLevels)
{
    uint64_t id = 0;
    if (pHandle == NULL || pDesc == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = create(2, pDesc, numMipmapLevels, &id);
    if (r == CUDA_SUCCESS)
        *pHandle = (CUmipmappedArray)(uintptr_t)id;
    return r;
}

CUresult cuArrayDestroy(CUarray hArray)
{
    return by_id(CUDA_OP_ARRAY_DESTROY, 0, (uint64_t)(uintptr_t)hArray, 0, 0,
                 NULL);
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    return by_id(CUDA_OP_ARRAY_DESTROY, 1,
                 (uint64_t)(uintptr_t)hMipmappedArray, 0, 0, NULL);
}

static CUresult sub(uint8_t which, uint64_t parent, uint32_t key,
                    CUarray *out)
{
    uint64_t id = 0;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = by_id(CUDA_OP_ARRAY_SUB, which, parent, 1, key, &id);
    if (r == CUDA_SUCCESS)
        *out = (CUarray)(uintptr_t)id;
    return r;
}

CUresult cuMipmappedArrayGetLevel(CUarray *pLevelArray,
                                  CUmipmappedArray hMipmappedArray,
                                  unsigned int level)
{
    return sub(0, (uint64_t)(uintptr_t)hMipmappedArray, level, pLevelArray);
}

CUresult cuArrayGetPlane(CUarray *pPlaneArray, CUarray hArray,
                         unsigned int planeIdx)
{
    return sub(1, (uint64_t)(uintptr_t)hArray, planeIdx, pPlaneArray);
}
