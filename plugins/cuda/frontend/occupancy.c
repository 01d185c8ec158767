/* Occupancy: the blocks per multiprocessor kept after the backend's
 * answer, and the calls that take a host callback answered here, as the
 * runtime's own templates answer them, from the occupancy for each
 * candidate block size. */
#include "call.h"
#include "kernels.h"

#include <pthread.h>

#include "cuda_fe_gen.h"
#include "gvs/mem.h"

/* The backend's answers of blocks per multiprocessor, kept with a
 * kernel: they depend on the kernel's code, the device, the block size,
 * the dynamic shared memory, the flags and the kernel's settings (its
 * carveout), nothing else.  Libraries ask before launches (41 times in
 * a ResNet-50 training step), the potential block size once per
 * candidate size.  Failures are not kept; a full table is overwritten
 * in turn. */
#define OCC_KEPT 64u

struct cuda_fe_occupancy {
    uint64_t settings;
    CUdevice dev;
    int with_flags;
    unsigned int flags;
    int block;
    size_t smem;
    int blocks;
};

static pthread_mutex_t occ_lock = PTHREAD_MUTEX_INITIALIZER;

static int same(const struct cuda_fe_occupancy *a,
                const struct cuda_fe_occupancy *b)
{
    return a->settings == b->settings && a->dev == b->dev &&
           a->with_flags == b->with_flags && a->flags == b->flags &&
           a->block == b->block && a->smem == b->smem;
}

/* q's answer into *blocks where kept: 1, else 0. */
static int occ_kept(struct cuda_fe_kernel *k,
                    const struct cuda_fe_occupancy *q, int *blocks)
{
    int hit = 0;
    pthread_mutex_lock(&occ_lock);
    for (uint32_t i = 0; i < k->nocc && !hit; i++)
        if (same(&k->occ[i], q)) {
            *blocks = k->occ[i].blocks;
            hit = 1;
        }
    pthread_mutex_unlock(&occ_lock);
    return hit;
}

static void occ_keep(struct cuda_fe_kernel *k,
                     const struct cuda_fe_occupancy *q)
{
    pthread_mutex_lock(&occ_lock);
    if (k->occ == NULL)
        k->occ = gvs_calloc(OCC_KEPT, sizeof(*k->occ));
    if (k->occ != NULL) {
        k->occ[k->occ_next] = *q;
        k->occ_next = (k->occ_next + 1) % OCC_KEPT;
        if (k->nocc < OCC_KEPT)
            k->nocc++;
    }
    pthread_mutex_unlock(&occ_lock);
}

/* Either question: kept where it can be (a kernel or function of the
 * process's, a current context for its device), else asked. */
static CUresult max_blocks(int *numBlocks, CUfunction func, int blockSize,
                           size_t smem, int with_flags, unsigned int flags)
{
    struct cuda_fe_kernel *k = cuda_fe_kernel_find((uint64_t)(uintptr_t)func);
    struct cuda_fe_occupancy q = {.with_flags = with_flags,
                                  .flags = flags,
                                  .block = blockSize,
                                  .smem = smem};
    int keep = numBlocks != NULL && k != NULL && cuda_fe_initialized() &&
               cuda_fe_ctx_device(&q.dev) == CUDA_SUCCESS;
    if (keep) {
        q.settings = cuda_fe_kernel_settings(k);
        if (occ_kept(k, &q, numBlocks))
            return CUDA_SUCCESS;
    }
    CUresult r;
    if (with_flags)
        r = cuda_rpc_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            numBlocks, func, blockSize, smem, flags);
    else
        r = cuda_rpc_cuOccupancyMaxActiveBlocksPerMultiprocessor(
            numBlocks, func, blockSize, smem);
    if (r == CUDA_SUCCESS && keep) {
        q.blocks = *numBlocks;
        occ_keep(k, &q);
    }
    return r;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                     CUfunction func,
                                                     int blockSize,
                                                     size_t dynamicSMemSize)
{
    return max_blocks(numBlocks, func, blockSize, dynamicSMemSize, 0, 0);
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize,
    unsigned int flags)
{
    return max_blocks(numBlocks, func, blockSize, dynamicSMemSize, 1, flags);
}

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
