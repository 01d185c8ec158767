// Kernel attributes: cudaFuncGetAttributes of kernels with launch bounds,
// static and dynamic shared memory and a compile-time cluster; raising the
// dynamic shared memory limit past 48 KiB, then using it; cache and bank
// configurations; names and parameter layouts; and the codes a function
// that is no kernel gets.
#include "check.h"
#include <cstring>

__global__ void __launch_bounds__(256) bounded(float *p) { p[threadIdx.x] = 1; }

__global__ void with_static_shared(int *out)
{
    __shared__ int tile[1024];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

// Sums its dynamic shared memory after filling it, so every byte counts.
__global__ void with_dynamic_shared(int *out, int words)
{
    extern __shared__ int dyn[];
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        dyn[i] = i;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long s = 0;
        for (int i = 0; i < words; i++)
            s += dyn[i];
        out[0] = (int)(s % 1000003);
    }
}

// Without its cluster in the code for GPUs older than sm_90 (check.h).
__global__ void CLUSTER_DIMS(2, 1, 1) clustered(int *out)
{
    out[blockIdx.x] = blockIdx.x;
}

struct Pair {
    char c;
    double d;
};
__global__ void layout(char a, Pair p, short s, int *out) { out[0] = a + s + (int)p.d; }

static void host_function() {}

static void show(const char *name, const void *f)
{
    cudaFuncAttributes a;
    memset(&a, 0, sizeof(a));
    CHECK(cudaFuncGetAttributes(&a, f));
    printf("%s: maxThreads %d regs %d shared %zu const %zu local %zu "
           "ptx %d binary %d cacheCA %d maxDynShared %d carveout %d "
           "clusterMustBeSet %d cluster %dx%dx%d nonPortable %d\n",
           name, a.maxThreadsPerBlock, a.numRegs, a.sharedSizeBytes,
           a.constSizeBytes, a.localSizeBytes, a.ptxVersion, a.binaryVersion,
           a.cacheModeCA, a.maxDynamicSharedSizeBytes,
           a.preferredShmemCarveout, a.clusterDimMustBeSet,
           a.requiredClusterWidth, a.requiredClusterHeight,
           a.requiredClusterDepth, a.nonPortableClusterSizeAllowed);
}

int main()
{
    show("bounded", (const void *)bounded);
    show("with_static_shared", (const void *)with_static_shared);
    show("with_dynamic_shared", (const void *)with_dynamic_shared);
    show("clustered", (const void *)clustered);

    // Past 48 KiB the launch fails until the kernel's limit is raised.
    const int words = 100 * 1024 / 4;
    const size_t bytes = words * sizeof(int);
    int *d, h = 0;
    CHECK(cudaMalloc(&d, 1024 * sizeof(int)));
    with_dynamic_shared<<<1, 256, bytes>>>(d, words);
    cudaError_t e = cudaGetLastError();
    printf("launch with %zu bytes before raising: %s\n", bytes,
           cudaGetErrorName(e));
    CHECK(cudaFuncSetAttribute((const void *)with_dynamic_shared,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)bytes));
    CHECK(cudaFuncSetAttribute((const void *)with_dynamic_shared,
                               cudaFuncAttributePreferredSharedMemoryCarveout,
                               100));
    show("with_dynamic_shared raised", (const void *)with_dynamic_shared);
    with_dynamic_shared<<<1, 256, bytes>>>(d, words);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
    printf("sum of %d words mod 1000003: %d\n", words, h);
    e = cudaFuncSetAttribute((const void *)with_dynamic_shared,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             1 << 30);
    printf("limit of 1 GiB: %s\n", cudaGetErrorName(e));
    cudaGetLastError();

    CHECK(cudaFuncSetCacheConfig((const void *)bounded,
                                 cudaFuncCachePreferShared));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK(cudaFuncSetSharedMemConfig((const void *)bounded,
                                     cudaSharedMemBankSizeFourByte));
#pragma GCC diagnostic pop

    cudaKernel_t k;
    CHECK(cudaGetKernel(&k, (const void *)bounded));
    CHECK(cudaKernelSetAttributeForDevice(
        k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024, 0));
    show("bounded through its cudaKernel_t", (const void *)k);
    cudaFunction_t fn;
    CHECK(cudaGetFuncBySymbol(&fn, (const void *)bounded));

    const char *name = NULL;
    CHECK(cudaFuncGetName(&name, (const void *)layout));
    printf("name: %s\n", name);
    for (size_t i = 0;; i++) {
        size_t off, size;
        e = cudaFuncGetParamInfo((const void *)layout, i, &off, &size);
        if (e != cudaSuccess) {
            printf("param %zu: %s\n", i, cudaGetErrorName(e));
            cudaGetLastError();
            break;
        }
        printf("param %zu: offset %zu size %zu\n", i, off, size);
    }

    // A host function where a kernel is expected.
    cudaFuncAttributes a;
    const void *hf = (const void *)host_function;
    printf("not a kernel: attributes %s, set %s, cache %s, name %s\n",
           cudaGetErrorName(cudaFuncGetAttributes(&a, hf)),
           cudaGetErrorName(cudaFuncSetAttribute(
               hf, cudaFuncAttributeMaxDynamicSharedMemorySize, 0)),
           cudaGetErrorName(cudaFuncSetCacheConfig(hf, cudaFuncCachePreferL1)),
           cudaGetErrorName(cudaFuncGetName(&name, hf)));
    size_t off, size;
    int blocks;
    cudaKernel_t none;
    cudaFunction_t nofn;
    printf("not a kernel: param info %s, occupancy %s, get kernel %s, "
           "function %s\n",
           cudaGetErrorName(cudaFuncGetParamInfo(hf, 0, &off, &size)),
           cudaGetErrorName(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
               &blocks, hf, 32, 0)),
           cudaGetErrorName(cudaGetKernel(&none, hf)),
           cudaGetErrorName(cudaGetFuncBySymbol(&nofn, hf)));
    void *args[] = {&d};
    printf("not a kernel: launch %s, cooperative launch %s\n",
           cudaGetErrorName(cudaLaunchKernel(hf, 1, 1, args, 0, 0)),
           cudaGetErrorName(cudaLaunchCooperativeKernel(hf, 1, 1, args, 0, 0)));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(1);
    printf("not a kernel: launch with a configuration %s\n",
           cudaGetErrorName(cudaLaunchKernelExC(&cfg, hf, args)));
    printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    CHECK(cudaFree(d));
    return 0;
}
