/* Occupancy queries for the lane's device (the frontend's occupancy.c). */
#include "kernels.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

/* The kernel's status, then its lane's device made current. */
static cudaError_t enter(struct gvs_call *call, const struct be_func *f)
{
    cudaError_t e = f->status;
    return e == cudaSuccess ? cudart_be_enter(call) : e;
}

/* Request: kernel, i32 block size, u64 dynamic shared memory, u32 flags.
 * Reply: i32 result, on success i32 blocks per multiprocessor. */
int cudart_be_occupancy_blocks(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const struct be_func *f;
    int32_t block;
    uint64_t shmem;
    uint32_t flags;
    int blocks = 0;
    int rc = be_get_kernel(call, &c, &f);
    if (rc < 0)
        return rc;
    apigen_get_i32(&c, &block);
    apigen_get_u64(&c, &shmem);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = enter(call, f);
    if (e == cudaSuccess && shmem > SIZE_MAX)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            &blocks, (const void *)f->kernel, block, (size_t)shmem, flags);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, blocks);
    return c.rc;
}

/* Request: kernel, i32 blocks, i32 block size.  Reply: i32 result, on
 * success u64 dynamic shared memory available per block. */
int cudart_be_occupancy_dynamic_smem(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const struct be_func *f;
    int32_t blocks, block;
    size_t smem = 0;
    int rc = be_get_kernel(call, &c, &f);
    if (rc < 0)
        return rc;
    apigen_get_i32(&c, &blocks);
    apigen_get_i32(&c, &block);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = enter(call, f);
    if (e == cudaSuccess)
        e = cudaOccupancyAvailableDynamicSMemPerBlock(
            &smem, (const void *)f->kernel, blocks, block);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, smem);
    return c.rc;
}

/* Request: kernel, launch configuration.  Reply: i32 result, on success
 * i32 answer. */
static int cluster_query(struct gvs_call *call, int max_size)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaLaunchAttribute attrs[BE_MAX_LAUNCH_ATTRS];
    cudaLaunchConfig_t cfg;
    const struct be_func *f;
    cudaError_t e = cudaSuccess;
    uint64_t stream;
    int answer = 0;
    int rc = be_get_kernel(call, &c, &f);
    if (rc == 0)
        rc = be_get_launch_config(&c, &cfg, attrs, &stream, &e);
    if (rc < 0)
        return rc;
    if (apigen_end(&c) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = enter(call, f);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &cfg.stream);
    if (e == cudaSuccess && max_size)
        e = cudaOccupancyMaxPotentialClusterSize(
            &answer, (const void *)f->kernel, &cfg);
    else if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveClusters(&answer, (const void *)f->kernel,
                                           &cfg);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, answer);
    return c.rc;
}

int cudart_be_occupancy_cluster_size(struct gvs_call *call)
{
    return cluster_query(call, 1);
}

int cudart_be_occupancy_clusters(struct gvs_call *call)
{
    return cluster_query(call, 0);
}
