// A failing device assert: the synchronizing call returns
// cudaErrorAssert, the error is sticky for every later call until the
// device is reset, and the assert's message goes to stderr (not compared:
// it names this file's path).  Every code is printed for comparison.
// Release builds define NDEBUG; this test needs its asserts.
#undef NDEBUG
#include "check.h"
#include <cassert>

__global__ void check_positive(const int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        assert(v[i] > 0);
}

static void code(const char *what, cudaError_t e)
{
    printf("%s: %d %s\n", what, (int)e, cudaGetErrorName(e));
}

int main()
{
    const int n = 256;
    int h[n], *d;
    for (int i = 0; i < n; i++)
        h[i] = i + 1;
    CHECK(cudaMalloc(&d, sizeof(h)));
    CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    check_positive<<<2, 128>>>(d, n);
    code("all positive", cudaDeviceSynchronize());

    h[200] = -1;
    CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    check_positive<<<2, 128>>>(d, n);
    code("launch", cudaGetLastError());
    code("synchronize", cudaDeviceSynchronize());
    code("last error", cudaGetLastError());
    code("last error again", cudaGetLastError());
    code("peek", cudaPeekAtLastError());
    void *p = NULL;
    code("malloc after", cudaMalloc(&p, 16));
    code("memcpy after", cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    check_positive<<<1, 1>>>(d, 1);
    code("launch after", cudaGetLastError());
    code("reset", cudaDeviceReset());
    code("malloc after reset", cudaMalloc(&p, 16));
    return 0;
}
