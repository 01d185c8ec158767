// Relocatable device code (-rdc=true, device-linked): kernels call device
// functions of another translation unit and share a __device__ variable
// defined there; each unit's kernels are launched, and the variable is
// written and read by symbol.
#include "check.h"
#include "rdc/rdc.h"

__global__ void apply(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = transform(v[i]);
    if (i == 0)
        atomicAdd(&calls, 1);
}

int main()
{
    const int n = 512;
    int h[n], *d;
    for (int i = 0; i < n; i++)
        h[i] = i;
    CHECK(cudaMalloc(&d, sizeof(h)));
    CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    int scale = 3;
    CHECK(cudaMemcpyToSymbol(factor, &scale, sizeof(scale)));
    apply<<<(n + 127) / 128, 128>>>(d, n);
    CHECK(cudaGetLastError());
    launch_offset(d, n, 5);
    apply<<<(n + 127) / 128, 128>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    printf("v[0] %d v[1] %d v[511] %d\n", h[0], h[1], h[511]);
    int got = 0;
    CHECK(cudaMemcpyFromSymbol(&got, calls, sizeof(got)));
    printf("calls: %d\n", got);
    size_t size = 0;
    CHECK(cudaGetSymbolSize(&size, factor));
    printf("factor: %zu bytes\n", size);
    CHECK(cudaFree(d));
    return 0;
}
