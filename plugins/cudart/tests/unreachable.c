/*
 * With no backend to reach, every call fails with
 * cudaErrorInsufficientDriver at once, like NVIDIA's runtime on a machine
 * without a driver.  run_unreachable.py points GVS_SERVER at nothing and
 * checks stderr.
 */
#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                    \
            return 1;                                                         \
        }                                                                     \
    } while (0)

int main(void)
{
    int n = -1;
    void *p = NULL;
    double t0 = now();
    EXPECT(cudaGetDeviceCount(&n) == cudaErrorInsufficientDriver);
    EXPECT(n == -1);
    EXPECT(cudaMalloc(&p, 64) == cudaErrorInsufficientDriver);
    EXPECT(p == NULL);
    EXPECT(cudaGetDeviceCount(&n) == cudaErrorInsufficientDriver);
    EXPECT(cudaSetDevice(0) == cudaErrorInsufficientDriver);
    EXPECT(cudaDeviceSynchronize() == cudaErrorInsufficientDriver);
    EXPECT(now() - t0 < 1.0);
    /* Failed initialization is sticky, as in the real runtime. */
    EXPECT(cudaGetLastError() == cudaErrorInsufficientDriver);
    EXPECT(cudaGetLastError() == cudaErrorInsufficientDriver);
    EXPECT(cudaPeekAtLastError() == cudaErrorInsufficientDriver);
    /* Answered locally, with NVIDIA's strings. */
    printf("%s: %s\n", cudaGetErrorName(cudaErrorInsufficientDriver),
           cudaGetErrorString(cudaErrorInsufficientDriver));
    return 0;
}
