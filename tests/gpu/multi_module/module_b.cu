// Second translation unit, with a kernel of the same shape as module A's
// and a device variable of its own.
#include "../check.h"

__device__ int module_b_value = 1000;

__global__ void scale_b(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = v[i] + module_b_value;
}

void run_module_b(int *d, int n)
{
    scale_b<<<(n + 127) / 128, 128>>>(d, n);
    CHECK(cudaGetLastError());
}

void set_module_b_value(int v)
{
    CHECK(cudaMemcpyToSymbol(module_b_value, &v, sizeof(v)));
}
