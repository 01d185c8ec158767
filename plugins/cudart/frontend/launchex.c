/* Launches with a configuration: cudaLaunchKernelExC (behind the
 * templated cudaLaunchKernelEx) with its attribute list, and
 * cudaLaunchCooperativeKernel.  The backend calls the same entry point,
 * so its validation and error codes are CUDA's own. */
#include "kernels.h"

#include "cudart_ops.h"

/* Which runtime function the backend calls. */
enum { ENTRY_EXC = 0, ENTRY_COOPERATIVE = 1 };

/* Request: u8 entry, u32 module, u32 index, the configuration
 * (fe_put_launch_config), blob parameter block.  Reply: i32 result. */
static cudaError_t launch_ex(uint8_t entry, const cudaLaunchConfig_t *cfg,
                             const void *func, void **args, int per_thread)
{
    uint8_t params[FE_PARAM_MAX];
    struct apigen_call c;
    struct fe_func *f;
    uint32_t module;
    if (cfg == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = fe_kernel_resolve(func, &f, &module);
    if (e == cudaSuccess)
        e = fe_kernel_pack(f, args, params);
    if (e == cudaSuccess)
        e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u8(&c, entry);
    fe_put_kernel(&c, f, module);
    e = fe_put_launch_config(&c, cfg, per_thread);
    if (e != cudaSuccess)
        return e;
    apigen_put_blob(&c, params, f->param_bytes);
    e = cudart_fe_run(&c, CUDART_OP_LAUNCH_EX, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config,
                                const void *func, void **args)
{
    return cudart_fe_ret(launch_ex(ENTRY_EXC, config, func, args, 0));
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
                                     const void *func, void **args)
{
    return cudart_fe_ret(launch_ex(ENTRY_EXC, config, func, args, 1));
}

static cudaError_t cooperative(const void *func, dim3 grid, dim3 block,
                               void **args, size_t shmem,
                               cudaStream_t stream, int per_thread)
{
    const cudaLaunchConfig_t cfg = {
        .gridDim = grid,
        .blockDim = block,
        .dynamicSmemBytes = shmem,
        .stream = stream,
    };
    return launch_ex(ENTRY_COOPERATIVE, &cfg, func, args, per_thread);
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim,
                                        dim3 blockDim, void **args,
                                        size_t sharedMem, cudaStream_t stream)
{
    return cudart_fe_ret(
        cooperative(func, gridDim, blockDim, args, sharedMem, stream, 0));
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
                                             dim3 blockDim, void **args,
                                             size_t sharedMem,
                                             cudaStream_t stream)
{
    return cudart_fe_ret(
        cooperative(func, gridDim, blockDim, args, sharedMem, stream, 1));
}
