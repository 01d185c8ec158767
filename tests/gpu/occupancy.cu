// Occupancy: blocks per multiprocessor by block size and dynamic shared
// memory, the shared memory left per block, the templated helpers of
// cuda_runtime.h built on them, and cluster occupancy on sm_90 and later.
#include "check.h"

__global__ void light(float *p) { p[threadIdx.x] *= 2; }

__global__ void heavy(float *p)
{
    extern __shared__ float s[];
    float acc[32];
    for (int i = 0; i < 32; i++)
        acc[i] = p[threadIdx.x + i] * s[i];
    float t = 0;
    for (int i = 0; i < 32; i++)
        t += acc[i] * acc[(i * 7) % 32];
    p[threadIdx.x] = t;
}

__global__ void CLUSTER_DIMS(4, 1, 1) in_clusters(float *p) { p[blockIdx.x] = 1; }

static size_t smem_for(int block) { return (size_t)block * 16; }

int main()
{
    const int blocks[] = {32, 64, 128, 256, 512, 1024};
    for (int b : blocks) {
        int nl = -1, nh = -1, nf = -1;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &nl, (const void *)light, b, 0));
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &nh, (const void *)heavy, b, 16384));
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            &nf, (const void *)heavy, b, 16384,
            cudaOccupancyDisableCachingOverride));
        printf("block %4d: light %d heavy %d heavy/flags %d\n", b, nl, nh, nf);
    }
    size_t avail = 0;
    CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&avail,
                                                    (const void *)heavy, 4,
                                                    256));
    printf("dynamic shared memory for 4 blocks of 256: %zu\n", avail);
    int n = -1;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &n, (const void *)light, 4096, 0);
    printf("block of 4096: %s %d\n", cudaGetErrorName(e),
           e == cudaSuccess ? n : -1);
    cudaGetLastError();

    int grid = 0, block = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, light));
    printf("potential block size of light: grid %d block %d\n", grid, block);
    CHECK(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, heavy,
                                                         smem_for));
    printf("potential block size of heavy: grid %d block %d\n", grid, block);
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, heavy, 128,
                                                        0));
    printf("heavy at 128 through the template: %d\n", per_sm);

    if (!built_for_clusters((const void *)in_clusters)) {
        printf("clusters: not in the code this GPU runs\n");
        return 0;
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr;
    cfg.gridDim = dim3(64);
    cfg.blockDim = dim3(128);
    int v = -1;
    CHECK(cudaOccupancyMaxPotentialClusterSize(&v, (const void *)light, &cfg));
    printf("potential cluster size: %d\n", v);
    CHECK(cudaOccupancyMaxActiveClusters(&v, (const void *)in_clusters, &cfg));
    printf("active clusters of 4 (compiled in): %d\n", v);
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CHECK(cudaOccupancyMaxActiveClusters(&v, (const void *)light, &cfg));
    printf("active clusters of 2 (attribute): %d\n", v);
    return 0;
}
