// gpu.security.fault (fault.py): a kernel fault stays in its session.
//   fault bad     a kernel writes to an illegal address: the session gets
//                 cudaErrorIllegalAddress, sticky (later calls fail with
//                 it too), and prints "fault cudaErrorIllegalAddress
//                 sticky";
//   fault good    adds a 64 MiB vector into an accumulator 50 times,
//                 prints "ready", waits for the line "go" (the driver
//                 sends it once the bad client has faulted), adds 50
//                 times more into the memory it held across the fault,
//                 checks every element and prints "ok".
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../check.h"
#include "roles.h"

static const size_t N = ((size_t)64 << 20) / sizeof(int);
static const int ITERATIONS = 50;

__global__ void add(int *acc, const int *a, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        acc[i] += a[i];
}

// Address 8: the first page is never mapped, on the device or, through
// HMM, in the worker's own address space.
__global__ void write_illegal(int *p)
{
    p[threadIdx.x] = 1;
}

static int bad()
{
    write_illegal<<<1, 32>>>((int *)8);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaErrorIllegalAddress) {
        printf("FAIL: cudaDeviceSynchronize gave %s\n", cudaGetErrorName(e));
        return 1;
    }
    void *p;
    e = cudaMalloc(&p, 4096);
    if (e != cudaErrorIllegalAddress) {
        printf("FAIL: not sticky: cudaMalloc gave %s\n", cudaGetErrorName(e));
        return 1;
    }
    printf("fault %s sticky\n", cudaGetErrorName(e));
    return 0;
}

static void run(int *acc, const int *a)
{
    unsigned blocks = (unsigned)((N + 255) / 256);
    for (int i = 0; i < ITERATIONS; i++) {
        add<<<blocks, 256>>>(acc, a, N);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
}

static int good()
{
    std::vector<int> h(N);
    for (size_t i = 0; i < N; i++)
        h[i] = (int)(i % 1000) + 1;
    int *a, *acc;
    CHECK(cudaMalloc(&a, N * sizeof(int)));
    CHECK(cudaMalloc(&acc, N * sizeof(int)));
    CHECK(cudaMemcpy(a, h.data(), N * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(acc, 0, N * sizeof(int)));
    run(acc, a);
    tell_driver("ready");
    if (expect_line("go") != 0)
        return 1;
    run(acc, a);
    std::vector<int> back(N);
    CHECK(cudaMemcpy(back.data(), acc, N * sizeof(int),
                     cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < N; i++)
        if (back[i] != 2 * ITERATIONS * h[i]) {
            printf("FAIL: element %zu is %d, expected %d\n", i, back[i],
                   2 * ITERATIONS * h[i]);
            return 1;
        }
    CHECK(cudaFree(a));
    CHECK(cudaFree(acc));
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const role roles[] = {{"bad", bad}, {"good", good}};
    return run_role(argc, argv, roles);
}
