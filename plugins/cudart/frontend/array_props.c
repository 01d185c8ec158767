/* Memory requirements and sparse properties of arrays and mipmapped
 * arrays (api/80-misc.api ARRAY_PROPS). */
#include "mem3d.h"

#include "cudart_ops.h"

/* kind 0: an array the frontend handed out, 1: a mipmapped array (its
 * handle is the backend's id, checked there). */
static cudaError_t props(int kind, const void *h, int what, int device,
                         struct cudaArrayMemoryRequirements *r,
                         struct cudaArraySparseProperties *p)
{
    struct apigen_call c;
    uint64_t id = (uint64_t)(uintptr_t)h;
    size_t elem;
    if (r == NULL && p == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = kind == 0 ? fe_array_lookup(h, &id, &elem) : cudaSuccess;
    if (e == cudaSuccess)
        e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u8(&c, (uint8_t)kind);
    apigen_put_u64(&c, id);
    apigen_put_u8(&c, (uint8_t)what);
    if (what == 0)
        apigen_put_i32(&c, device);
    e = cudart_fe_run(&c, CUDART_OP_ARRAY_PROPS, APIGEN_DEVICE);
    if (e == cudaSuccess && what == 0) {
        uint64_t size, align;
        apigen_get_u64(&c, &size);
        apigen_get_u64(&c, &align);
        *r = (struct cudaArrayMemoryRequirements){.size = (size_t)size,
                                                  .alignment = (size_t)align};
    } else if (e == cudaSuccess) {
        uint64_t tail;
        *p = (struct cudaArraySparseProperties){0};
        apigen_get_u32(&c, &p->tileExtent.width);
        apigen_get_u32(&c, &p->tileExtent.height);
        apigen_get_u32(&c, &p->tileExtent.depth);
        apigen_get_u32(&c, &p->miptailFirstLevel);
        apigen_get_u64(&c, &tail);
        apigen_get_u32(&c, &p->flags);
        p->miptailSize = tail;
    }
    return cudart_fe_end(&c, e);
}

cudaError_t cudaArrayGetMemoryRequirements(
    struct cudaArrayMemoryRequirements *memoryRequirements, cudaArray_t array,
    int device)
{
    return cudart_fe_ret(
        props(0, array, 0, device, memoryRequirements, NULL));
}

cudaError_t cudaMipmappedArrayGetMemoryRequirements(
    struct cudaArrayMemoryRequirements *memoryRequirements,
    cudaMipmappedArray_t mipmap, int device)
{
    return cudart_fe_ret(
        props(1, mipmap, 0, device, memoryRequirements, NULL));
}

cudaError_t cudaArrayGetSparseProperties(
    struct cudaArraySparseProperties *sparseProperties, cudaArray_t array)
{
    return cudart_fe_ret(props(0, array, 1, 0, NULL, sparseProperties));
}

cudaError_t cudaMipmappedArrayGetSparseProperties(
    struct cudaArraySparseProperties *sparseProperties,
    cudaMipmappedArray_t mipmap)
{
    return cudart_fe_ret(props(1, mipmap, 1, 0, NULL, sparseProperties));
}
