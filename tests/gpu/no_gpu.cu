// Runs every call of the first slice and prints each result without
// stopping, so a run through gvs against a GPU-less backend can be
// compared line by line with a native run on the same machine.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int dev_var;
__global__ void k(int *p) { *p = 1; }

#define SHOW(call) printf("%-40s -> %s\n", #call, cudaGetErrorName(call))

int main()
{
    int count = -1, dev = -1, v = -1, rt = 0;
    cudaDeviceProp prop;
    void *p = nullptr;
    size_t sz = 0;
    int h = 3;
    SHOW(cudaGetDeviceCount(&count));
    printf("count = %d\n", count);
    SHOW(cudaGetDevice(&dev));
    SHOW(cudaSetDevice(0));
    SHOW(cudaGetDeviceProperties(&prop, 0));
    SHOW(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0));
    SHOW(cudaMalloc(&p, 1024));
    SHOW(cudaMemcpy(p, &h, sizeof(h), cudaMemcpyHostToDevice));
    SHOW(cudaMemcpy(&h, p, sizeof(h), cudaMemcpyDeviceToHost));
    SHOW(cudaMemset(p, 0, 4));
    k<<<1, 1>>>((int *)p);
    SHOW(cudaGetLastError());
    SHOW(cudaPeekAtLastError());
    SHOW(cudaMemcpyToSymbol(dev_var, &h, sizeof(h)));
    SHOW(cudaGetSymbolAddress(&p, dev_var));
    SHOW(cudaGetSymbolSize(&sz, dev_var));
    SHOW(cudaDeviceSynchronize());
    SHOW(cudaFree(p));
    SHOW(cudaDeviceReset());
    SHOW(cudaRuntimeGetVersion(&rt));
    printf("runtime = %d\n", rt);
    SHOW(cudaGetLastError());
    printf("%s\n", cudaGetErrorString(cudaErrorInsufficientDriver));
    return 0;
}
