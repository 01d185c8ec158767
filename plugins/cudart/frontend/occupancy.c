/* Occupancy queries, answered by the backend's runtime for the calling
 * thread's device.  The templated helpers of cuda_runtime.h
 * (cudaOccupancyMaxPotentialBlockSize and friends) are inline and call
 * these. */
#include "kernels.h"

#include "cudart_ops.h"

/* Starts a request naming func's kernel. */
static cudaError_t begin(struct apigen_call *c, const void *func)
{
    struct fe_func *f;
    uint32_t module;
    cudaError_t e = fe_kernel_resolve(func, &f, &module);
    if (e == cudaSuccess)
        e = cudart_fe_begin(c);
    if (e == cudaSuccess)
        fe_put_kernel(c, f, module);
    return e;
}

/* Sends the request; on success reads one value of `bytes` (4 or 8). */
static cudaError_t finish(struct apigen_call *c, uint16_t op, void *out,
                          size_t bytes)
{
    int32_t v32 = 0;
    uint64_t v64 = 0;
    cudaError_t e = cudart_fe_run(c, op, APIGEN_DEVICE);
    if (e == cudaSuccess && bytes == 4)
        apigen_get_i32(c, &v32);
    else if (e == cudaSuccess)
        apigen_get_u64(c, &v64);
    e = cudart_fe_end(c, e);
    if (e == cudaSuccess && bytes == 4)
        *(int *)out = v32;
    else if (e == cudaSuccess)
        *(size_t *)out = (size_t)v64;
    return e;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
    unsigned int flags)
{
    struct apigen_call c;
    if (numBlocks == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = begin(&c, func);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    apigen_put_i32(&c, blockSize);
    apigen_put_u64(&c, dynamicSMemSize);
    apigen_put_u32(&c, flags);
    return cudart_fe_ret(
        finish(&c, CUDART_OP_OCCUPANCY_BLOCKS, numBlocks, sizeof(int32_t)));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, func, blockSize, dynamicSMemSize, cudaOccupancyDefault);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
                                                      const void *func,
                                                      int numBlocks,
                                                      int blockSize)
{
    struct apigen_call c;
    if (dynamicSmemSize == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = begin(&c, func);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    apigen_put_i32(&c, numBlocks);
    apigen_put_i32(&c, blockSize);
    return cudart_fe_ret(finish(&c, CUDART_OP_OCCUPANCY_DYNAMIC_SMEM,
                                dynamicSmemSize, sizeof(uint64_t)));
}

/* The cluster queries take a whole launch configuration. */
static cudaError_t cluster_query(uint16_t op, int *out, const void *func,
                                 const cudaLaunchConfig_t *cfg)
{
    struct apigen_call c;
    if (out == NULL || cfg == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = begin(&c, func);
    if (e == cudaSuccess)
        e = fe_put_launch_config(&c, cfg, 0);
    if (e != cudaSuccess)
        return e;
    return finish(&c, op, out, sizeof(int32_t));
}

cudaError_t cudaOccupancyMaxPotentialClusterSize(
    int *clusterSize, const void *func, const cudaLaunchConfig_t *launchConfig)
{
    return cudart_fe_ret(cluster_query(CUDART_OP_OCCUPANCY_CLUSTER_SIZE,
                                       clusterSize, func, launchConfig));
}

cudaError_t cudaOccupancyMaxActiveClusters(
    int *numClusters, const void *func, const cudaLaunchConfig_t *launchConfig)
{
    return cudart_fe_ret(cluster_query(CUDART_OP_OCCUPANCY_CLUSTERS,
                                       numClusters, func, launchConfig));
}
