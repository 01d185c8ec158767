/* Tensor maps (cuda.api, TENSOR_MAP_*): encoded by the driver from the
 * client's parameters, over a global address checked to be device
 * memory (the driver reads none of it; the kernels that use the map
 * do), the 128 bytes sent back. */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "gvs/err.h"

#define RANK_MAX 5u

enum { TILED, IM2COL, IM2COL_WIDE };

struct encode {
    uint8_t kind;
    uint32_t type, rank;
    uint64_t addr;
    cuuint64_t dims[RANK_MAX], strides[RANK_MAX];
    cuuint32_t estrides[RANK_MAX], box[RANK_MAX];
    int lower[RANK_MAX], upper[RANK_MAX];
    int32_t lower_w, upper_w;
    uint32_t channels, pixels, mode;
    uint32_t interleave, swizzle, l2, oob;
};

static void get_u64s(struct apigen_call *c, cuuint64_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = 0;
        apigen_get_u64(c, &x);
        v[i] = x;
    }
}

static void get_u32s(struct apigen_call *c, cuuint32_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        apigen_get_u32(c, &v[i]);
}

static void get_i32s(struct apigen_call *c, int *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int32_t x = 0;
        apigen_get_i32(c, &x);
        v[i] = x;
    }
}

/* The request (cuda.api), every array within RANK_MAX. */
static void get_encode(struct apigen_call *c, struct encode *e)
{
    apigen_get_u8(c, &e->kind);
    apigen_get_u32(c, &e->type);
    apigen_get_u32(c, &e->rank);
    apigen_get_u64(c, &e->addr);
    if (c->rc == 0 && (e->kind > IM2COL_WIDE || e->rank == 0 ||
                       e->rank > RANK_MAX || (e->kind != TILED && e->rank < 3)))
        c->rc = GVS_E_RANGE;
    if (c->rc < 0)
        return;
    get_u64s(c, e->dims, e->rank);
    get_u64s(c, e->strides, e->rank - 1);
    get_u32s(c, e->estrides, e->rank);
    if (e->kind == TILED) {
        get_u32s(c, e->box, e->rank);
    } else if (e->kind == IM2COL) {
        get_i32s(c, e->lower, e->rank - 2);
        get_i32s(c, e->upper, e->rank - 2);
    } else {
        apigen_get_i32(c, &e->lower_w);
        apigen_get_i32(c, &e->upper_w);
    }
    if (e->kind != TILED) {
        apigen_get_u32(c, &e->channels);
        apigen_get_u32(c, &e->pixels);
    }
    if (e->kind == IM2COL_WIDE)
        apigen_get_u32(c, &e->mode);
    apigen_get_u32(c, &e->interleave);
    apigen_get_u32(c, &e->swizzle);
    apigen_get_u32(c, &e->l2);
    apigen_get_u32(c, &e->oob);
}

static CUresult encode(const struct encode *e, CUtensorMap *map)
{
    void *a = (void *)(uintptr_t)e->addr;
    CUtensorMapDataType type = (CUtensorMapDataType)e->type;
    CUtensorMapInterleave il = (CUtensorMapInterleave)e->interleave;
    CUtensorMapSwizzle sw = (CUtensorMapSwizzle)e->swizzle;
    CUtensorMapL2promotion l2 = (CUtensorMapL2promotion)e->l2;
    CUtensorMapFloatOOBfill oob = (CUtensorMapFloatOOBfill)e->oob;
    if (e->kind == TILED)
        return CUDA_DRV(cuTensorMapEncodeTiled)(map, type, e->rank, a,
                                                e->dims, e->strides, e->box,
                                                e->estrides, il, sw, l2, oob);
    if (e->kind == IM2COL)
        return CUDA_DRV(cuTensorMapEncodeIm2col)(
            map, type, e->rank, a, e->dims, e->strides, e->lower, e->upper,
            e->channels, e->pixels, e->estrides, il, sw, l2, oob);
    return CUDA_DRV(cuTensorMapEncodeIm2colWide)(
        map, type, e->rank, a, e->dims, e->strides, e->lower_w, e->upper_w,
        e->channels, e->pixels, e->estrides, il,
        (CUtensorMapIm2ColWideMode)e->mode, sw, l2, oob);
}

static void reply_map(struct apigen_call *c, CUresult r,
                      const CUtensorMap *map)
{
    apigen_put_i32(c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_bytes(c, map, sizeof(*map));
}

/* Reply: i32, 128 bytes the map. */
int cuda_be_tensor_map_encode(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct encode e;
    CUtensorMap map;
    memset(&e, 0, sizeof(e));
    memset(&map, 0, sizeof(map));
    get_encode(&c, &e);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(e.addr, 1);
    if (r == CUDA_SUCCESS)
        r = encode(&e, &map);
    reply_map(&c, r, &map);
    return c.rc;
}

/* Request: 128 bytes the map, u64 global address.  Reply: i32, 128
 * bytes the map. */
int cuda_be_tensor_map_replace(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUtensorMap map;
    uint64_t addr;
    apigen_get_bytes(&c, &map, sizeof(map));
    apigen_get_u64(&c, &addr);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(addr, 1);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuTensorMapReplaceAddress)(&map,
                                                (void *)(uintptr_t)addr);
    reply_map(&c, r, &map);
    return c.rc;
}
