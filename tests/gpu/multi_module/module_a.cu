// First of two translation units: two fatbins, two modules in one program.
#include "../check.h"

__device__ int module_a_value = 11;

__global__ void scale_a(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = v[i] * 2 + module_a_value;
}

void run_module_a(int *d, int n)
{
    scale_a<<<(n + 127) / 128, 128>>>(d, n);
    CHECK(cudaGetLastError());
}
