/* Between the mock files (cudart.mock_e2e, cudart.mock_kernels): kernels
 * and devices. */
#ifndef CUDART_MOCK_KERNELS_H
#define CUDART_MOCK_KERNELS_H

#include <stddef.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

/* A kernel the mock emulates, by its mangled name, with the layout nvcc
 * gives it; its cudaKernel_t is the entry's address. */
#define MOCK_MAX_PARAMS 4
struct mock_kernel {
    const char *name;
    unsigned nparams;
    size_t offsets[MOCK_MAX_PARAMS], sizes[MOCK_MAX_PARAMS];
    void (*run)(dim3 grid, dim3 block, void **args);
};

/* mock_kernels.c: the kernels of mock_kernels.cu, or NULL. */
const struct mock_kernel *mock_kernels_find(const char *name);

/* mock_devices.c: the mock's two devices as CUDA_VISIBLE_DEVICES (read
 * once, as CUDA reads it) shows them: how many, and which one ordinal i
 * is (0 or 1). */
int mock_visible_count(void);
int mock_physical(int ordinal);

/* mock_graphs.c: the driver's cuGraphKernelNodeGetParams, as
 * cudaGetDriverEntryPointByVersion hands it out. */
CUresult mock_cuGraphKernelNodeGetParams(CUgraphNode node,
                                         CUDA_KERNEL_NODE_PARAMS_v2 *p);

#endif
