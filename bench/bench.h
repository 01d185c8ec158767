// Shared by the benchmark programs: each prints "metric value unit" lines
// that bench/run.py collects for native and every gvs transport.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#define CK(call)                                                             \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
                    cudaGetErrorString(e_));                                 \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static inline double now_s()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline void report(const char *metric, double value, const char *unit)
{
    printf("%s %.6g %s\n", metric, value, unit);
    fflush(stdout);
}
