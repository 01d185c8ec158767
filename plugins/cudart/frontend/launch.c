#include "fe.h"

#include <string.h>

#include "cudart_ops.h"

/* <<<...>>> pushes its configuration, the kernel's host stub pops it: a
 * per-thread stack, as deep as launches can nest inside an argument
 * list. */
#define CONFIG_DEPTH 16

struct launch_config {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
};

static _Thread_local struct launch_config configs[CONFIG_DEPTH];
static _Thread_local unsigned nconfigs;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                     size_t sharedMem,
                                     struct CUstream_st *stream)
{
    if (nconfigs == CONFIG_DEPTH)
        return 1;
    configs[nconfigs++] = (struct launch_config){gridDim, blockDim,
                                                 sharedMem, stream};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                       size_t *sharedMem, void *stream)
{
    if (nconfigs == 0)
        return cudaErrorMissingConfiguration;
    const struct launch_config *c = &configs[--nconfigs];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shmem;
    memcpy(stream, &c->stream, sizeof(c->stream));
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (kernel == NULL)
        return cudaErrorInvalidValue;
    struct fe_func *f = fe_func_lookup(hostFun);
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    *kernel = (cudaKernel_t)f;
    return cudaSuccess;
}

/* Only the streams that exist without being created: we create none yet. */
static int stream_known(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

static cudaError_t launch(struct fe_func *f, dim3 grid, dim3 block,
                          void **args, size_t shmem, cudaStream_t stream)
{
    uint8_t params[FE_PARAM_MAX];
    uint32_t mod_id;
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    if (!stream_known(stream))
        return cudaErrorInvalidResourceHandle;
    cudaError_t e = fe_module_ready(f->mod, &mod_id);
    if (e == cudaSuccess)
        e = f->status;
    if (e != cudaSuccess)
        return e;
    if (f->nparams > 0 && args == NULL)
        return cudaErrorInvalidValue;
    /* Padding between parameters travels as zeros. */
    memset(params, 0, f->param_bytes);
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (args[i] == NULL)
            return cudaErrorInvalidValue;
        memcpy(params + f->params[i].offset, args[i], f->params[i].size);
    }
    struct apigen_call c;
    e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u32(&c, mod_id);
    apigen_put_u32(&c, f->index);
    apigen_put_u32(&c, grid.x);
    apigen_put_u32(&c, grid.y);
    apigen_put_u32(&c, grid.z);
    apigen_put_u32(&c, block.x);
    apigen_put_u32(&c, block.y);
    apigen_put_u32(&c, block.z);
    apigen_put_u64(&c, shmem);
    apigen_put_u64(&c, (uint64_t)(uintptr_t)stream);
    apigen_put_blob(&c, params, f->param_bytes);
    e = cudart_fe_run(&c, CUDART_OP_LAUNCH, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

/* The handle is looked up rather than trusted: a module unregistered
 * since __cudaGetKernel leaves the program a dangling one. */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
                               dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    return cudart_fe_ret(launch(fe_func_lookup(kernel), gridDim, blockDim,
                                args, sharedMem, stream));
}

/* Per-thread default stream compilation: stream 0 means this thread's. */
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                    dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    if (stream == NULL)
        stream = cudaStreamPerThread;
    return cudart_fe_ret(launch(fe_func_lookup(kernel), gridDim, blockDim,
                                args, sharedMem, stream));
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                             void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    return cudart_fe_ret(launch(fe_func_lookup(func), gridDim, blockDim,
                                args, sharedMem, stream));
}
