#include "kernels.h"

#include <limits.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

/* The driver's cuLaunchKernel takes a kernel handle as the runtime's
 * cudaLaunchKernel does, for 0.3-0.8 us less a launch (an H200, two
 * runs: 3.4-3.8 against 3.7-4.4 us a call), which launch + synchronize
 * waits for.  Where
 * the driver refuses, or the entry point is missing, the runtime
 * launches, so that a failure is the runtime's own code and state. */
static cudaError_t launch(const struct be_func *f, dim3 grid, dim3 block,
                          void **argv, uint64_t shmem, cudaStream_t s)
{
    be_driver_launch_fn driver_launch = be_driver()->launch;
    if (driver_launch != NULL && shmem <= UINT_MAX &&
        driver_launch((CUfunction)f->kernel, grid.x, grid.y, grid.z, block.x,
                      block.y, block.z, (unsigned)shmem, (CUstream)s, argv,
                      NULL) == CUDA_SUCCESS)
        return cudaSuccess;
    return cudaLaunchKernel((const void *)f->kernel, grid, block, argv,
                            (size_t)shmem, s);
}

/* Request: u32 module id, u32 kernel index, u32 grid x/y/z, u32 block
 * x/y/z, u64 dynamic shared memory, u64 stream, blob parameter block of
 * exactly the kernel's parameter size.  Reply: i32 result. */
int cudart_be_launch(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t mod_id, index;
    dim3 grid, block;
    uint64_t shmem, stream;
    const uint8_t *blob;
    size_t len;
    apigen_get_u32(&c, &mod_id);
    apigen_get_u32(&c, &index);
    apigen_get_u32(&c, &grid.x);
    apigen_get_u32(&c, &grid.y);
    apigen_get_u32(&c, &grid.z);
    apigen_get_u32(&c, &block.x);
    apigen_get_u32(&c, &block.y);
    apigen_get_u32(&c, &block.z);
    apigen_get_u64(&c, &shmem);
    apigen_get_u64(&c, &stream);
    apigen_get_blob(&c, &blob, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct be_module *m = be_module_get(call->state, mod_id);
    if (m == NULL || index >= m->nfuncs)
        return GVS_E_RANGE;
    const struct be_func *f = &m->funcs[index];
    cudaError_t e = f->status;
    if (e == cudaSuccess && len != f->param_bytes)
        return GVS_E_PROTO;
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    cudaStream_t s = NULL;
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    if (e == cudaSuccess && shmem > SIZE_MAX)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        /* An aligned copy: CUDA reads each argument through argv[i]. */
        uint64_t params[(BE_PARAM_MAX + 7) / 8];
        void *stack[BE_ARGV_ON_STACK];
        memcpy(params, blob, len);
        void **argv = be_kernel_argv(f, params, stack);
        e = argv != NULL ? launch(f, grid, block, argv, shmem, s)
                         : cudaErrorMemoryAllocation;
        be_kernel_argv_free(argv, stack);
    }
    if (e != cudaSuccess && call->noreply)
        be_async_error(call, e);
    apigen_put_i32(&c, e);
    return c.rc;
}
