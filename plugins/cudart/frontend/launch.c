#include "kernels.h"

#include <string.h>

#include "cudart_ops.h"
#include "gvs_remote.h"
#include "streams.h"

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

/* Request: u32 module, u32 kernel index, u32 grid x/y/z, u32 block
 * x/y/z, u64 dynamic shared memory, u64 stream, blob parameter block.
 * Reply: i32 result.  Posted within a configuration the backend accepted
 * for the kernel (gvs_remote.h). */
static cudaError_t launch(const void *func, dim3 grid, dim3 block,
                          void **args, size_t shmem, cudaStream_t stream,
                          int per_thread)
{
    uint8_t params[FE_PARAM_MAX];
    struct apigen_call c;
    struct fe_func *f;
    uint32_t module;
    cudaError_t e = fe_kernel_resolve(func, &f, &module);
    if (e == cudaSuccess)
        e = fe_kernel_pack(f, args, params);
    if (e == cudaSuccess)
        e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    fe_put_kernel(&c, f, module);
    apigen_put_u32(&c, grid.x);
    apigen_put_u32(&c, grid.y);
    apigen_put_u32(&c, grid.z);
    apigen_put_u32(&c, block.x);
    apigen_put_u32(&c, block.y);
    apigen_put_u32(&c, block.z);
    apigen_put_u64(&c, shmem);
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    apigen_put_blob(&c, params, f->param_bytes);
    const uint32_t g[3] = {grid.x, grid.y, grid.z};
    const uint32_t b[3] = {block.x, block.y, block.z};
    uint64_t config = gvs_remote_launch_config(fe_thread_device(), g, b, shmem);
    if (gvs_remote_launch_within(
            config, atomic_load_explicit(&f->ok_config, memory_order_relaxed)))
        return cudart_fe_post(&c, CUDART_OP_LAUNCH, APIGEN_DEVICE);
    e = cudart_fe_run(&c, CUDART_OP_LAUNCH, APIGEN_DEVICE);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess && config != 0)
        atomic_store_explicit(&f->ok_config, config, memory_order_relaxed);
    return e;
}

/* The handle is looked up rather than trusted: a module unregistered
 * since __cudaGetKernel leaves the program a dangling one. */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
                               dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    return cudart_fe_ret(
        launch(kernel, gridDim, blockDim, args, sharedMem, stream, 0));
}

/* Per-thread default stream compilation: stream 0 means this thread's. */
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                    dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    return cudart_fe_ret(
        launch(kernel, gridDim, blockDim, args, sharedMem, stream, 1));
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                             void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    return cudart_fe_ret(
        launch(func, gridDim, blockDim, args, sharedMem, stream, 0));
}
