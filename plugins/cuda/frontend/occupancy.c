/* The occupancy calls that take a host callback: answered here, as the
 * runtime's own templates answer them, from the backend's occupancy for
 * each candidate block size. */
#include "call.h"

#include "cuda_fe_gen.h"

static CUresult potential(int *minGridSize, int *blockSize, CUfunction func,
                          CUoccupancyB2DSize smem_of, size_t dynamicSMemSize,
                          int blockSizeLimit, unsigned int flags)
{
    int max_threads = 0, sms = 0, warp = 0;
    CUdevice dev;
    if (minGridSize == NULL || blockSize == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_ctx_device(&dev);
    if (r == CUDA_SUCCESS)
        r = cuFuncGetAttribute(&max_threads,
                               CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                 dev);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (warp <= 0)
        return CUDA_ERROR_UNKNOWN;
    int limit = blockSizeLimit > 0 && blockSizeLimit < max_threads
                    ? blockSizeLimit
                    : max_threads;
    int best_blocks = 0, best_size = 0, best = 0;
    for (int bs = limit - limit % warp; bs > 0; bs -= warp) {
        int blocks = 0;
        size_t smem = smem_of != NULL ? smem_of(bs) : dynamicSMemSize;
        r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            &blocks, func, bs, smem, flags);
        if (r != CUDA_SUCCESS)
            return r;
        if (blocks * bs > best) {
            best = blocks * bs;
            best_blocks = blocks;
            best_size = bs;
        }
    }
    *minGridSize = best_blocks * sms;
    *blockSize = best_size;
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
                                          CUfunction func,
                                          CUoccupancyB2DSize smem_of,
                                          size_t dynamicSMemSize,
                                          int blockSizeLimit)
{
    return potential(minGridSize, blockSize, func, smem_of, dynamicSMemSize,
                     blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
    int *minGridSize, int *blockSize, CUfunction func,
    CUoccupancyB2DSize smem_of, size_t dynamicSMemSize, int blockSizeLimit,
    unsigned int flags)
{
    return potential(minGridSize, blockSize, func, smem_of, dynamicSMemSize,
                     blockSizeLimit, flags);
}
