/* Kernel attributes, on the cudaKernel_t of the session's library
 * (CUDA takes it wherever it takes a kernel's host function). */
#include "kernels.h"

#include <string.h>

#include "cudart_be_gen.h"

/* Request: u32 module, u32 index.  Reply: i32 result, then on success
 * the raw struct cudaFuncAttributes for the lane's device. */
int cudart_be_func_get_attributes(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cudaFuncAttributes attr;
    const struct be_func *f;
    int rc = be_get_kernel(call, &c, &f);
    if (rc < 0 || apigen_end(&c) < 0)
        return rc < 0 ? rc : c.rc;
    memset(&attr, 0, sizeof(attr));
    cudaError_t e = f->status;
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaFuncGetAttributes(&attr, (const void *)f->kernel);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_bytes(&c, &attr, sizeof(attr));
    return c.rc;
}

/* The setters: u32 module, u32 index, i32 a, i32 b; reply i32 result. */
enum setter { SET_ATTRIBUTE, SET_CACHE_CONFIG, SET_SHARED_MEM_CONFIG };

/* Deprecated in CUDA 13, not gone. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static cudaError_t set_bank_size(const void *k, int32_t config)
{
    return cudaFuncSetSharedMemConfig(k, (enum cudaSharedMemConfig)config);
}
#pragma GCC diagnostic pop

static int setter(struct gvs_call *call, enum setter which)
{
    struct apigen_call c = {call->out, call->in, 0};
    const struct be_func *f;
    int32_t a, b;
    int rc = be_get_kernel(call, &c, &f);
    if (rc < 0)
        return rc;
    apigen_get_i32(&c, &a);
    apigen_get_i32(&c, &b);
    if (apigen_end(&c) < 0)
        return c.rc;
    const void *k = (const void *)f->kernel;
    cudaError_t e = f->status;
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess && which == SET_ATTRIBUTE)
        e = cudaFuncSetAttribute(k, (enum cudaFuncAttribute)a, b);
    else if (e == cudaSuccess && which == SET_CACHE_CONFIG)
        e = cudaFuncSetCacheConfig(k, (enum cudaFuncCache)a);
    else if (e == cudaSuccess)
        e = set_bank_size(k, a);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: kernel, i32 attribute, i32 value. */
int cudart_be_func_set_attribute(struct gvs_call *call)
{
    return setter(call, SET_ATTRIBUTE);
}

/* Request: kernel, i32 cache configuration, i32 0. */
int cudart_be_func_set_cache_config(struct gvs_call *call)
{
    return setter(call, SET_CACHE_CONFIG);
}

/* Request: kernel, i32 bank size configuration, i32 0. */
int cudart_be_func_set_shared_mem_config(struct gvs_call *call)
{
    return setter(call, SET_SHARED_MEM_CONFIG);
}

/* Request: kernel, i32 attribute, i32 value, i32 device.  Reply: i32
 * result.  CUDA checks the device. */
int cudart_be_kernel_set_attribute_for_device(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const struct be_func *f;
    int32_t attr, value, device;
    int rc = be_get_kernel(call, &c, &f);
    if (rc < 0)
        return rc;
    apigen_get_i32(&c, &attr);
    apigen_get_i32(&c, &value);
    apigen_get_i32(&c, &device);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = f->status;
    if (e == cudaSuccess)
        e = cudaKernelSetAttributeForDevice(
            f->kernel, (enum cudaFuncAttribute)attr, value, device);
    apigen_put_i32(&c, e);
    return c.rc;
}
