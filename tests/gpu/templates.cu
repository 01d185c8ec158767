// Kernels as C++ gives them: templates instantiated in several translation
// units, overloads, kernels in namespaces, kernels of internal linkage
// with the same name in two units, launched with <<<>>>, cudaLaunchKernel
// and cudaLaunchKernelEx, with their names and parameter layouts.
#include "check.h"
#include "templates/templates.h"
#include <cstring>

template __global__ void axpy<float>(float *, const float *, float, int);

__global__ void mark(int *p) { p[0] = 1; }
__global__ void mark(int *p, int v) { p[0] = v; }
__global__ void mark(int *p, int a, int b) { p[0] = a * b; }

namespace outer {
namespace inner {
__global__ void mark(int *p) { p[0] = 42; }
} // namespace inner
} // namespace outer

static __global__ void local_kernel(int *p) { p[0] = 100; }

static void show(const char *what, const void *f)
{
    const char *name = NULL;
    CHECK(cudaFuncGetName(&name, f));
    printf("%s: %s,", what, name);
    for (size_t i = 0;; i++) {
        size_t off, size;
        if (cudaFuncGetParamInfo(f, i, &off, &size) != cudaSuccess)
            break;
        printf(" %zu+%zu", off, size);
    }
    cudaGetLastError();
    printf("\n");
}

static int read_int(int *d)
{
    int h;
    CHECK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
    return h;
}

template <typename T> static void run_axpy(const char *what)
{
    const int n = 1000;
    T hx[n], hy[n];
    for (int i = 0; i < n; i++) {
        hx[i] = (T)i;
        hy[i] = (T)1;
    }
    T *x, *y;
    CHECK(cudaMalloc(&x, sizeof(hx)));
    CHECK(cudaMalloc(&y, sizeof(hy)));
    CHECK(cudaMemcpy(x, hx, sizeof(hx), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(y, hy, sizeof(hy), cudaMemcpyHostToDevice));
    axpy<T><<<(n + 127) / 128, 128>>>(y, x, (T)2, n);
    CHECK(cudaGetLastError());
    T a = (T)3;
    int nn = n;
    void *args[] = {&y, &x, &a, &nn};
    CHECK(cudaLaunchKernel((const void *)axpy<T>, (n + 127) / 128, 128, args,
                           0, 0));
    CHECK(cudaMemcpy(hy, y, sizeof(hy), cudaMemcpyDeviceToHost));
    printf("axpy<%s>: y[0] %g y[999] %g\n", what, (double)hy[0],
           (double)hy[999]);
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
}

int main()
{
    run_axpy<float>("float");
    run_axpy<double>("double");
    run_axpy<int>("int");
    show("axpy<float>", (const void *)axpy<float>);
    show("axpy<double>", (const void *)axpy<double>);
    show("axpy<int>", (const void *)axpy<int>);
    show("reduce<short, 4>", (const void *)reduce<short, 4>);

    int *d;
    CHECK(cudaMalloc(&d, sizeof(int)));
    mark<<<1, 1>>>(d);
    printf("mark(p): %d\n", read_int(d));
    mark<<<1, 1>>>(d, 7);
    printf("mark(p, v): %d\n", read_int(d));
    mark<<<1, 1>>>(d, 6, 7);
    printf("mark(p, a, b): %d\n", read_int(d));
    outer::inner::mark<<<1, 1>>>(d);
    printf("outer::inner::mark: %d\n", read_int(d));
    local_kernel<<<1, 1>>>(d);
    printf("local_kernel here: %d\n", read_int(d));
    run_local_kernel_elsewhere(d);
    printf("local_kernel in the other unit: %d\n", read_int(d));
    void (*three)(int *, int, int) = mark;
    show("mark(int*, int, int)", (const void *)three);
    show("outer::inner::mark", (const void *)outer::inner::mark);

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(1);
    CHECK(cudaLaunchKernelEx(&cfg, three, d, 5, 9));
    printf("mark(p, a, b) through cudaLaunchKernelEx: %d\n", read_int(d));

    short hs[64];
    for (int i = 0; i < 64; i++)
        hs[i] = (short)i;
    short *ds;
    CHECK(cudaMalloc(&ds, sizeof(hs)));
    CHECK(cudaMemcpy(ds, hs, sizeof(hs), cudaMemcpyHostToDevice));
    run_reduce(ds, 64, d);
    printf("reduce<short, 4> from the other unit: %d\n", read_int(d));
    reduce<short, 4><<<1, 1>>>(ds, 64, d);
    printf("reduce<short, 4> from here: %d\n", read_int(d));
    CHECK(cudaFree(ds));
    CHECK(cudaFree(d));
    return 0;
}
