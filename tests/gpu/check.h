// Shared by the CUDA test programs: each prints deterministic lines on
// stdout, so a run through gvs can be compared with a native run, and
// exits 1 at the first failing CUDA call, naming it.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "expect.h"

#define CHECK(call)                                                          \
    do {                                                                     \
        cudaError_t err_ = (call);                                           \
        if (err_ != cudaSuccess) {                                           \
            printf("FAIL %s: %s (%d) %s\n", #call, cudaGetErrorName(err_),   \
                   (int)err_, cudaGetErrorString(err_));                     \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// Thread block clusters need sm_90 or later; the programs are also built
// for older GPUs (CMAKE_CUDA_ARCHITECTURES).  A kernel declared with
// CLUSTER_DIMS(x, y, z) has that compile-time cluster in its code for
// sm_90 and later, none in its code for older architectures, where nvcc
// refuses __cluster_dims__.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CLUSTER_DIMS(x, y, z)
#else
#define CLUSTER_DIMS(x, y, z) __cluster_dims__(x, y, z)
#endif

// Whether the code of kernel f that this GPU runs was built for sm_90 or
// later (its PTX version), so that it may use clusters: not on a GPU
// older than sm_90, nor where the program holds only older code.
static inline bool built_for_clusters(const void *f)
{
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, f));
    return a.ptxVersion >= 90;
}
