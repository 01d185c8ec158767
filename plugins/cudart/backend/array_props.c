/*
 * Memory requirements and sparse properties of arrays and mipmapped
 * arrays (api/80-misc.api ARRAY_PROPS): plain queries on ids of the
 * handle table.
 */
#include "mem3d.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"

static cudaError_t mem_requirements(uint8_t kind, uint64_t id, int device,
                                    struct cudaArrayMemoryRequirements *r)
{
    cudaArray_t a;
    cudaMipmappedArray_t m;
    cudaError_t e = kind == 0 ? be_array(id, &a) : be_mipmapped(id, &m);
    if (e != cudaSuccess)
        return e;
    return kind == 0 ? cudaArrayGetMemoryRequirements(r, a, device)
                     : cudaMipmappedArrayGetMemoryRequirements(r, m, device);
}

static cudaError_t sparse_properties(uint8_t kind, uint64_t id,
                                     struct cudaArraySparseProperties *p)
{
    cudaArray_t a;
    cudaMipmappedArray_t m;
    cudaError_t e = kind == 0 ? be_array(id, &a) : be_mipmapped(id, &m);
    if (e != cudaSuccess)
        return e;
    return kind == 0 ? cudaArrayGetSparseProperties(p, a)
                     : cudaMipmappedArrayGetSparseProperties(p, m);
}

/* Reply: i32, then the memory requirements as u64 size, u64 alignment,
 * or the sparse properties as u32 tile width, height, depth, u32 first
 * mip tail level, u64 mip tail size, u32 flags. */
int cudart_be_array_props(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t kind, what;
    uint64_t id;
    int32_t device = 0;
    apigen_get_u8(&c, &kind);
    apigen_get_u64(&c, &id);
    apigen_get_u8(&c, &what);
    if (c.rc == 0 && what == 0)
        apigen_get_i32(&c, &device);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (kind > 1 || what > 1)
        return GVS_E_PROTO;
    struct cudaArrayMemoryRequirements r = {0};
    struct cudaArraySparseProperties p = {0};
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = what == 0 ? mem_requirements(kind, id, device, &r)
                      : sparse_properties(kind, id, &p);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess && what == 0) {
        apigen_put_u64(&c, r.size);
        apigen_put_u64(&c, r.alignment);
    } else if (e == cudaSuccess) {
        apigen_put_u32(&c, p.tileExtent.width);
        apigen_put_u32(&c, p.tileExtent.height);
        apigen_put_u32(&c, p.tileExtent.depth);
        apigen_put_u32(&c, p.miptailFirstLevel);
        apigen_put_u64(&c, p.miptailSize);
        apigen_put_u32(&c, p.flags);
    }
    return c.rc;
}
