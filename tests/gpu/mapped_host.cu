// Mapped host memory (issue 11, item 3): a kernel reads and writes
// page-locked memory through cudaHostGetDevicePointer where the device
// can map host memory, and the program's fallback (copies) where it
// cannot, as a program written for both kinds of device does.  Natively
// and through gvs over shm and unix (which share the memory with the
// worker) the device maps it; over tcp (which cannot share it) gvs
// reports a device that cannot, and the fallback runs.  The printed
// results are the same either way; which path ran is not printed.
#include "check.h"

__global__ void scale(float *p, int n, float k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * k + 1.0f;
}

int main()
{
    const int n = 1 << 20;
    int can_map = 0;
    CHECK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.canMapHostMemory != can_map) {
        printf("FAIL canMapHostMemory %d, attribute %d\n", prop.canMapHostMemory, can_map);
        return 1;
    }
    float *h;
    CHECK(cudaHostAlloc((void **)&h, n * sizeof(float), cudaHostAllocMapped));
    for (int i = 0; i < n; i++)
        h[i] = (float)(i % 1000);
    for (int round = 0; round < 3; round++) {
        if (can_map) {
            float *dp;
            CHECK(cudaHostGetDevicePointer((void **)&dp, h, 0));
            scale<<<(n + 255) / 256, 256>>>(dp, n, 0.5f);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
        } else {
            float *d;
            CHECK(cudaMalloc((void **)&d, n * sizeof(float)));
            CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
            scale<<<(n + 255) / 256, 256>>>(d, n, 0.5f);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
            CHECK(cudaFree(d));
        }
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += h[i];
        printf("round %d: h[7] %.4f h[999] %.4f sum %.1f\n", round, h[7], h[999], sum);
    }
    CHECK(cudaFreeHost(h));
    printf("mapped_host ok\n");
    return 0;
}
