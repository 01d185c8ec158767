// Cooperative launches: a grid-wide sync over the largest grid that fits
// (from the occupancy calculator), through cudaLaunchCooperativeKernel
// and its templated form; a grid too large for it.
#include "check.h"
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Each block writes its index; after the grid sync block 0 sums them all.
__global__ void grid_sum(int *slots, long long *sum)
{
    cg::grid_group g = cg::this_grid();
    if (threadIdx.x == 0)
        slots[blockIdx.x] = blockIdx.x + 1;
    g.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        long long s = 0;
        for (unsigned i = 0; i < gridDim.x; i++)
            s += slots[i];
        *sum = s;
    }
}

int main()
{
    int dev = 0, sms = 0, coop = 0, per_sm = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum,
                                                        256, 0));
    printf("cooperative launch supported: %d\n", coop);
    int blocks = sms * per_sm;
    int *slots;
    long long *sum, h = 0;
    CHECK(cudaMalloc(&slots, blocks * sizeof(int)));
    CHECK(cudaMalloc(&sum, sizeof(*sum)));

    void *args[] = {&slots, &sum};
    CHECK(cudaLaunchCooperativeKernel((const void *)grid_sum, blocks, 256,
                                      args, 0, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
    printf("full grid: sum %s\n",
           h == (long long)blocks * (blocks + 1) / 2 ? "right" : "WRONG");

    CHECK(cudaMemset(sum, 0, sizeof(*sum)));
    CHECK(cudaLaunchCooperativeKernel(grid_sum, dim3(blocks / 2), dim3(256),
                                      args));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
    printf("half grid: sum %s\n",
           h == (long long)(blocks / 2) * (blocks / 2 + 1) / 2 ? "right"
                                                               : "WRONG");

    cudaError_t e = cudaLaunchCooperativeKernel((const void *)grid_sum,
                                                blocks + sms, 256, args, 0, 0);
    printf("grid too large: %s\n", cudaGetErrorName(e));
    printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    CHECK(cudaFree(slots));
    CHECK(cudaFree(sum));
    return 0;
}
