// Uses every call of the first cudart slice, so that its imports are the
// symbols our libcudart.so.13 must export.  Compiled, never run, by
// check_symbols.py.
#include <cstdio>

__device__ int dv[4];
__constant__ float cv[8];

__global__ void k(int *p, int n, double d, char c)
{
    int i = threadIdx.x;
    if (i < n)
        p[i] = i + (int)d + c + dv[0] + (int)cv[0];
}

struct S {
    char a;
    double b;
    int c[3];
};

__global__ void k2(S s, int *out) { out[0] = s.c[2]; }

int main()
{
    int n, v, h[16], *d;
    cudaDeviceProp p;
    void *a, *args[] = {&d};
    size_t sz;
    cudaGetDeviceCount(&n);
    cudaGetDeviceProperties(&p, 0);
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0);
    cudaSetDevice(0);
    cudaGetDevice(&n);
    cudaMalloc(&d, 64);
    cudaMemset(d, 0, 64);
    k<<<1, 16>>>(d, 16, 1.0, 2);
    k2<<<1, 1>>>(S{}, d);
    cudaLaunchKernel((const void *)k2, dim3(1), dim3(1), args, 0, 0);
    cudaMemcpy(h, d, 64, cudaMemcpyDeviceToHost);
    cudaMemcpyToSymbol(dv, h, 4);
    cudaMemcpyFromSymbol(h, cv, 4);
    cudaGetSymbolAddress(&a, dv);
    cudaGetSymbolSize(&sz, dv);
    cudaDeviceSynchronize();
    printf("%s %s\n", cudaGetErrorString(cudaGetLastError()),
           cudaGetErrorName(cudaPeekAtLastError()));
    cudaRuntimeGetVersion(&v);
    cudaDriverGetVersion(&v);
    cudaFree(d);
    cudaDeviceReset();
    return 0;
}
