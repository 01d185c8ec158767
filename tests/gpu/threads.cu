// Several host threads use the runtime at once, each with its own
// allocations, kernels and copies; every result is checked.
#include "check.h"
#include <thread>
#include <vector>

__global__ void affine(int *v, int n, int a, int b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = v[i] * a + b;
}

// Threads record their outcome instead of printing, so the output does
// not depend on how they interleave.
struct outcome {
    cudaError_t err = cudaSuccess;
    bool wrong = false;
};

#define TRY(call)                                                            \
    do {                                                                     \
        if ((out->err = (call)) != cudaSuccess)                              \
            return;                                                          \
    } while (0)

static void worker(int id, int rounds, outcome *out)
{
    const int n = 4096 + id * 1000;
    std::vector<int> h(n);
    int *d;
    TRY(cudaMalloc(&d, n * sizeof(int)));
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++)
            h[i] = i + r;
        TRY(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
        affine<<<(n + 255) / 256, 256>>>(d, n, id + 2, r);
        TRY(cudaGetLastError());
        TRY(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            if (h[i] != (i + r) * (id + 2) + r)
                out->wrong = true;
    }
    TRY(cudaFree(d));
}

int main()
{
    const int nthreads = 8, rounds = 50;
    outcome res[nthreads];
    std::vector<std::thread> ts;
    for (int t = 0; t < nthreads; t++)
        ts.emplace_back(worker, t, rounds, &res[t]);
    for (auto &t : ts)
        t.join();
    int failed = 0;
    for (int t = 0; t < nthreads; t++) {
        printf("thread %d: %s\n", t,
               res[t].err != cudaSuccess ? cudaGetErrorName(res[t].err)
               : res[t].wrong            ? "WRONG"
                                         : "ok");
        failed |= res[t].err != cudaSuccess || res[t].wrong;
    }
    return failed;
}
