// Shared between templates.cu and the other translation units.
#pragma once

template <typename T>
__global__ void axpy(T *y, const T *x, T a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}

// Sums n values in steps of Stride (one thread).
template <typename T, int Stride>
__global__ void reduce(const T *v, int n, int *out)
{
    int s = 0;
    for (int i = 0; i < n; i += Stride)
        s += v[i];
    out[0] = s;
}

void run_local_kernel_elsewhere(int *d);
void run_reduce(const short *v, int n, int *out);
