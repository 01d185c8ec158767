/* Tensor maps (cuda.api, TENSOR_MAP_*; docs/driver.md "Tensor maps"):
 * the 128 bytes a kernel's TMA instructions read are the driver's
 * encoding, undocumented, so the backend's driver encodes them from the
 * parameters and the caller's CUtensorMap gets its bytes: a round trip
 * an encoding.  The map is written only on success, as the driver's. */
#include "call.h"

#include <string.h>

#include "cuda_ops.h"

#define RANK_MAX 5u

enum { TILED, IM2COL, IM2COL_WIDE };

/* The request up to the kind's own fields, the arrays of rank entries
 * (strides rank - 1) checked as the driver checks the rank. */
static CUresult begin(struct apigen_call *c, uint8_t kind,
                      CUtensorMapDataType type, cuuint32_t rank,
                      void *addr, const cuuint64_t *dims,
                      const cuuint64_t *strides, const cuuint32_t *estrides,
                      CUtensorMap *map)
{
    if (map == NULL || rank == 0 || rank > RANK_MAX ||
        (kind != TILED && rank < 3) || dims == NULL || estrides == NULL ||
        (rank > 1 && strides == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(c, kind);
    apigen_put_u32(c, (uint32_t)type);
    apigen_put_u32(c, rank);
    apigen_put_u64(c, (uint64_t)(uintptr_t)addr);
    for (cuuint32_t i = 0; i < rank; i++)
        apigen_put_u64(c, dims[i]);
    for (cuuint32_t i = 0; i + 1 < rank; i++)
        apigen_put_u64(c, strides[i]);
    for (cuuint32_t i = 0; i < rank; i++)
        apigen_put_u32(c, estrides[i]);
    return CUDA_SUCCESS;
}

/* The fields every kind ends with, the round trip, the map. */
static CUresult finish(struct apigen_call *c, uint16_t op,
                       const uint32_t tail[4], CUtensorMap *map)
{
    CUtensorMap out;
    for (int i = 0; i < 4; i++)
        apigen_put_u32(c, tail[i]);
    CUresult r = cuda_fe_run(c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_bytes(c, &out, sizeof(out));
    r = cuda_fe_end(c, r);
    if (r == CUDA_SUCCESS)
        *map = out;
    return r;
}

CUresult cuTensorMapEncodeTiled(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill)
{
    struct apigen_call c;
    if (boxDim == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c, TILED, tensorDataType, tensorRank, globalAddress,
                       globalDim, globalStrides, elementStrides, tensorMap);
    if (r != CUDA_SUCCESS)
        return r;
    for (cuuint32_t i = 0; i < tensorRank; i++)
        apigen_put_u32(&c, boxDim[i]);
    const uint32_t tail[4] = {interleave, swizzle, l2Promotion, oobFill};
    return finish(&c, CUDA_OP_TENSOR_MAP_ENCODE, tail, tensorMap);
}

CUresult cuTensorMapEncodeIm2col(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, const int *pixelBoxLowerCorner,
    const int *pixelBoxUpperCorner, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
    struct apigen_call c;
    if (pixelBoxLowerCorner == NULL || pixelBoxUpperCorner == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c, IM2COL, tensorDataType, tensorRank, globalAddress,
                       globalDim, globalStrides, elementStrides, tensorMap);
    if (r != CUDA_SUCCESS)
        return r;
    for (cuuint32_t i = 0; i + 2 < tensorRank; i++)
        apigen_put_i32(&c, pixelBoxLowerCorner[i]);
    for (cuuint32_t i = 0; i + 2 < tensorRank; i++)
        apigen_put_i32(&c, pixelBoxUpperCorner[i]);
    apigen_put_u32(&c, channelsPerPixel);
    apigen_put_u32(&c, pixelsPerColumn);
    const uint32_t tail[4] = {interleave, swizzle, l2Promotion, oobFill};
    return finish(&c, CUDA_OP_TENSOR_MAP_ENCODE, tail, tensorMap);
}

CUresult cuTensorMapEncodeIm2colWide(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, int pixelBoxLowerCornerWidth,
    int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
    CUtensorMapInterleave interleave, CUtensorMapIm2ColWideMode mode,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill)
{
    struct apigen_call c;
    CUresult r = begin(&c, IM2COL_WIDE, tensorDataType, tensorRank,
                       globalAddress, globalDim, globalStrides,
                       elementStrides, tensorMap);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(&c, pixelBoxLowerCornerWidth);
    apigen_put_i32(&c, pixelBoxUpperCornerWidth);
    apigen_put_u32(&c, channelsPerPixel);
    apigen_put_u32(&c, pixelsPerColumn);
    apigen_put_u32(&c, (uint32_t)mode);
    const uint32_t tail[4] = {interleave, swizzle, l2Promotion, oobFill};
    return finish(&c, CUDA_OP_TENSOR_MAP_ENCODE, tail, tensorMap);
}

CUresult cuTensorMapReplaceAddress(CUtensorMap *tensorMap,
                                   void *globalAddress)
{
    struct apigen_call c;
    CUtensorMap out;
    if (tensorMap == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_bytes(&c, tensorMap, sizeof(*tensorMap));
    apigen_put_u64(&c, (uint64_t)(uintptr_t)globalAddress);
    r = cuda_fe_run(&c, CUDA_OP_TENSOR_MAP_REPLACE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_bytes(&c, &out, sizeof(out));
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *tensorMap = out;
    return r;
}
