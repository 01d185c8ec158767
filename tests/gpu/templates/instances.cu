// Instantiates some of templates.cu's kernels here too, and has a kernel
// of internal linkage named like one of templates.cu.
#include "templates.h"

template __global__ void axpy<double>(double *, const double *, double, int);
template __global__ void axpy<int>(int *, const int *, int, int);

static __global__ void local_kernel(int *p) { p[0] = 200; }

void run_local_kernel_elsewhere(int *d) { local_kernel<<<1, 1>>>(d); }

void run_reduce(const short *v, int n, int *out)
{
    reduce<short, 4><<<1, 1>>>(v, n, out);
}
