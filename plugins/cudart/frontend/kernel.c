/* Kernel lookup and parameter packing, shared by every launch path and by
 * the attribute and occupancy calls. */
#include "kernels.h"

#include <string.h>

cudaError_t fe_kernel_resolve(const void *func, struct fe_func **out,
                              uint32_t *module)
{
    struct fe_func *f = fe_func_lookup(func);
    if (f == NULL)
        return cudaErrorInvalidResourceHandle;
    cudaError_t e = fe_module_ready(f->mod, module);
    if (e == cudaSuccess)
        e = f->status;
    if (e == cudaSuccess)
        *out = f;
    return e;
}

cudaError_t fe_kernel_pack(const struct fe_func *f, void **args,
                           uint8_t *params)
{
    if (f->nparams > 0 && args == NULL)
        return cudaErrorInvalidValue;
    memset(params, 0, f->param_bytes);
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (args[i] == NULL)
            return cudaErrorInvalidValue;
        memcpy(params + f->params[i].offset, args[i], f->params[i].size);
    }
    return cudaSuccess;
}

void fe_put_kernel(struct apigen_call *c, const struct fe_func *f,
                   uint32_t module)
{
    apigen_put_u32(c, module);
    apigen_put_u32(c, f->index);
}

/* The handle is the kernel's record here, as __cudaGetKernel gives it. */
cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    if (kernelPtr == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    struct fe_func *f = fe_func_lookup(entryFuncAddr);
    if (f == NULL)
        return cudart_fe_ret(cudaErrorInvalidDeviceFunction);
    *kernelPtr = (cudaKernel_t)f;
    return cudaSuccess;
}

/* A driver function handle is of no use without the driver; the kernel's
 * record stands for it, and is accepted back wherever a kernel is. */
cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr,
                                const void *symbolPtr)
{
    if (functionPtr == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    struct fe_func *f = fe_func_lookup(symbolPtr);
    if (f == NULL)
        return cudart_fe_ret(cudaErrorInvalidDeviceFunction);
    *functionPtr = (cudaFunction_t)f;
    return cudaSuccess;
}
