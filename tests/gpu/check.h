// Shared by the CUDA test programs: each prints deterministic lines on
// stdout, so a run through gvs can be compared with a native run, and
// exits 1 at the first failing CUDA call, naming it.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        cudaError_t err_ = (call);                                           \
        if (err_ != cudaSuccess) {                                           \
            printf("FAIL %s: %s (%d) %s\n", #call, cudaGetErrorName(err_),   \
                   (int)err_, cudaGetErrorString(err_));                     \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);           \
            exit(1);                                                         \
        }                                                                    \
    } while (0)
