#include "rdc.h"

__device__ int factor = 1;
__device__ int calls = 0;

__device__ int transform(int x) { return x * factor + 1; }

__global__ void offset(int *v, int n, int by)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = transform(v[i]) + by;
    if (i == 0)
        atomicAdd(&calls, 1);
}

void launch_offset(int *v, int n, int by)
{
    offset<<<(n + 127) / 128, 128>>>(v, n, by);
}
