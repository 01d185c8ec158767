/* Kernel attributes.  Queries and settings go to the backend's
 * cudaKernel_t; the name and the parameter layout were learnt with the
 * module's upload and are answered here. */
#include "kernels.h"

#include "cudart_ops.h"
#include "gvs_remote.h"

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
                                  const void *func)
{
    struct cudaFuncAttributes got;
    struct apigen_call c;
    struct fe_func *f;
    uint32_t module;
    if (attr == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = fe_kernel_resolve(func, &f, &module);
    if (e == cudaSuccess)
        e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    fe_put_kernel(&c, f, module);
    e = cudart_fe_run(&c, CUDART_OP_FUNC_GET_ATTRIBUTES, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_bytes(&c, &got, sizeof(got));
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *attr = got;
    return cudart_fe_ret(e);
}

/* One request of a kernel and two 32-bit values, answered by a result. */
static cudaError_t set_call(uint16_t op, const void *func, int32_t a,
                            int32_t b)
{
    struct apigen_call c;
    struct fe_func *f;
    uint32_t module;
    cudaError_t e = fe_kernel_resolve(func, &f, &module);
    if (e == cudaSuccess)
        e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    /* A smaller shared-memory allowance can make a configuration that
     * launched before fail now. */
    fe_kernel_forget_config(f);
    gvs_remote_kernel_settings_change();
    fe_put_kernel(&c, f, module);
    apigen_put_i32(&c, a);
    apigen_put_i32(&c, b);
    e = cudart_fe_run(&c, op, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaFuncSetAttribute(const void *func,
                                 enum cudaFuncAttribute attr, int value)
{
    return cudart_fe_ret(
        set_call(CUDART_OP_FUNC_SET_ATTRIBUTE, func, attr, value));
}

cudaError_t cudaFuncSetCacheConfig(const void *func,
                                   enum cudaFuncCache cacheConfig)
{
    return cudart_fe_ret(
        set_call(CUDART_OP_FUNC_SET_CACHE_CONFIG, func, cacheConfig, 0));
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func,
                                       enum cudaSharedMemConfig config)
{
    return cudart_fe_ret(
        set_call(CUDART_OP_FUNC_SET_SHARED_MEM_CONFIG, func, config, 0));
}

/* The name nvcc registered, the mangled one, as CUDA gives it. */
cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    struct fe_func *f;
    uint32_t module;
    if (name == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = fe_kernel_resolve(func, &f, &module);
    if (e == cudaSuccess)
        *name = f->name;
    return cudart_fe_ret(e);
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t paramIndex,
                                 size_t *paramOffset, size_t *paramSize)
{
    struct fe_func *f;
    uint32_t module;
    if (paramOffset == NULL || paramSize == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = fe_kernel_resolve(func, &f, &module);
    if (e == cudaSuccess && paramIndex >= f->nparams)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        *paramOffset = f->params[paramIndex].offset;
        *paramSize = f->params[paramIndex].size;
    }
    return cudart_fe_ret(e);
}

cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel,
                                            enum cudaFuncAttribute attr,
                                            int value, int device)
{
    struct apigen_call c;
    struct fe_func *f;
    uint32_t module;
    cudaError_t e = fe_kernel_resolve(kernel, &f, &module);
    if (e == cudaSuccess)
        e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    fe_put_kernel(&c, f, module);
    apigen_put_i32(&c, attr);
    apigen_put_i32(&c, value);
    apigen_put_i32(&c, device);
    e = cudart_fe_run(&c, CUDART_OP_KERNEL_SET_ATTRIBUTE_FOR_DEVICE, 0);
    return cudart_fe_ret(cudart_fe_end(&c, e));
}
