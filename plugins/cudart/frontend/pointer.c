/*
 * cudaPointerGetAttributes.  The frontend knows what each address is:
 * device memory it handed out (allocations, managed memory, module
 * globals, IPC mappings) is asked of the backend, which has CUDA's
 * answer and the device; host memory allocated or registered through us
 * is the client's own; anything else is unregistered host memory, which
 * CUDA 11+ reports with success.
 */
#include "fe.h"

#include "cudart_ops.h"

static cudaError_t device_attrs(struct cudaPointerAttributes *out,
                                const void *p)
{
    struct apigen_call c;
    int32_t type = 0, dev = 0;
    uint64_t dptr = 0, hptr = 0;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
    e = cudart_fe_run(&c, CUDART_OP_POINTER_ATTRS, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_i32(&c, &type);
        apigen_get_i32(&c, &dev);
        apigen_get_u64(&c, &dptr);
        apigen_get_u64(&c, &hptr);
    }
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = (struct cudaPointerAttributes){
            .type = (enum cudaMemoryType)type,
            .device = dev,
            .devicePointer = (void *)(uintptr_t)dptr,
            .hostPointer = (void *)(uintptr_t)hptr};
    return e;
}

static cudaError_t pointer_attrs(struct cudaPointerAttributes *out,
                                 const void *p)
{
    struct gvs_client *cl;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    if (fe_is_device_ptr(p))
        return device_attrs(out, p);
    /* The client's page-locked memory has no device alias here
     * (cudaHostGetDevicePointer). */
    if (fe_host_contains(p))
        *out = (struct cudaPointerAttributes){.type = cudaMemoryTypeHost,
                                              .device = fe_thread_device(),
                                              .hostPointer = (void *)p};
    else
        *out = (struct cudaPointerAttributes){
            .type = cudaMemoryTypeUnregistered, .device = -2};
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                     const void *ptr)
{
    return cudart_fe_ret(pointer_attrs(attributes, ptr));
}
