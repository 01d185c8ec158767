/*
 * Kernels of mock_kernels.cu for the host-memory mock of the CUDA runtime
 * (templated and overloaded kernels by their mangled names, and kernels
 * that report what the backend handed the runtime), with kernel
 * attributes, occupancy and the launches with a configuration.
 *
 * What a launch with a configuration received is kept, and the kernel
 * echo_attrs writes it into its output, so the test sees every
 * attribute's fields after the trip through the frontend and backend.
 * say and complain write on stdout and stderr, as CUDA does when it
 * flushes device printf output and assert messages; writes_seen counts
 * the stream writes enqueued through the driver's entry point,
 * batches_seen the batches of copies, aheads_seen the worker's copies
 * into page-locked memory; stall holds the launching thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "copy_kernel.h"
#include "mock_kernels.h"
#include "mock_streams.h"

/* Launches ------------------------------------------------------------- */

/* How the last launch came: -1 cudaLaunchKernel, 0 cudaLaunchKernelExC,
 * 1 cudaLaunchCooperativeKernel, 2 the driver's cuLaunchKernel. */
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static int last_entry = -1;
static size_t last_shmem;
static unsigned last_nattrs;
static cudaLaunchAttribute last_attrs[16];

static void run_scale_f(dim3 grid, dim3 block, void **args)
{
    float *p = *(float **)args[0];
    float f = *(float *)args[1];
    int n = *(int *)args[2];
    for (unsigned i = 0; i < grid.x * block.x && (int)i < n; i++)
        p[i] *= f;
}

static void run_scale_d(dim3 grid, dim3 block, void **args)
{
    double *p = *(double **)args[0];
    double f = *(double *)args[1];
    int n = *(int *)args[2];
    for (unsigned i = 0; i < grid.x * block.x && (int)i < n; i++)
        p[i] *= f;
}

static void run_over1(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    **(int **)args[0] = 1;
}

static void run_over2(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    **(int **)args[0] = *(int *)args[1];
}

/* out: entry, dynamic shared memory, count, then per attribute its id
 * and the fields of its value as ints (events as their low 32 bits). */
static void run_echo_attrs(dim3 grid, dim3 block, void **args)
{
    int *out = *(int **)args[0];
    (void)grid, (void)block;
    pthread_mutex_lock(&last_lock);
    int k = 0;
    out[k++] = last_entry;
    out[k++] = (int)last_shmem;
    out[k++] = (int)last_nattrs;
    for (unsigned i = 0; i < last_nattrs; i++) {
        const cudaLaunchAttribute *a = &last_attrs[i];
        const cudaLaunchAttributeValue *v = &a->val;
        out[k++] = a->id;
        switch (a->id) {
        case cudaLaunchAttributeAccessPolicyWindow:
            out[k++] = (int)(uintptr_t)v->accessPolicyWindow.base_ptr;
            out[k++] = (int)v->accessPolicyWindow.num_bytes;
            out[k++] = (int)(v->accessPolicyWindow.hitRatio * 100);
            out[k++] = v->accessPolicyWindow.hitProp;
            out[k++] = v->accessPolicyWindow.missProp;
            break;
        case cudaLaunchAttributeClusterDimension:
            out[k++] = (int)v->clusterDim.x;
            out[k++] = (int)v->clusterDim.y;
            out[k++] = (int)v->clusterDim.z;
            break;
        case cudaLaunchAttributePreferredClusterDimension:
            out[k++] = (int)v->preferredClusterDim.x;
            out[k++] = (int)v->preferredClusterDim.y;
            out[k++] = (int)v->preferredClusterDim.z;
            break;
        case cudaLaunchAttributeMemSyncDomainMap:
            out[k++] = v->memSyncDomainMap.default_;
            out[k++] = v->memSyncDomainMap.remote;
            break;
        case cudaLaunchAttributeLaunchCompletionEvent:
            out[k++] = v->launchCompletionEvent.event != NULL;
            out[k++] = v->launchCompletionEvent.flags;
            break;
        case cudaLaunchAttributeProgrammaticEvent:
            out[k++] = v->programmaticEvent.event != NULL;
            out[k++] = v->programmaticEvent.flags;
            out[k++] = v->programmaticEvent.triggerAtBlockStart;
            break;
        default:
            /* Every other member is one int-sized field. */
            out[k++] = v->priority;
            break;
        }
    }
    last_entry = -1;
    last_nattrs = 0;
    pthread_mutex_unlock(&last_lock);
}

static void run_say(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    printf("mock device says %d\n", *(int *)args[0]);
}

/* How many stream writes the driver's entry point enqueued (a copy the
 * GPU answers alone), which the kernel writes_seen reports. */
static _Atomic unsigned long long writes;

static void run_writes_seen(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    **(unsigned long long **)args[0] = atomic_load(&writes);
}

/* The driver's batch copies (mock_cuMemcpyBatchAsync): calls taken and
 * the copies they held; and the launches of the layer's copy kernel, the
 * copies they made and the launches that made them in order: which the
 * kernel batches_seen reports. */
static _Atomic unsigned long long batch_calls, batch_copies;
static _Atomic unsigned long long kernel_launches, kernel_copies;
static _Atomic unsigned long long ordered_launches;

static void run_batches_seen(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    unsigned long long *out = *(unsigned long long **)args[0];
    out[0] = atomic_load(&batch_calls);
    out[1] = atomic_load(&batch_copies);
    out[2] = atomic_load(&kernel_launches);
    out[3] = atomic_load(&kernel_copies);
    out[4] = atomic_load(&ordered_launches);
}

/* What the kernel aheads_seen reports: the copies from device memory
 * into page-locked memory (mock_d2h_pinned_copies). */
static void run_aheads_seen(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    **(unsigned long long **)args[0] = mock_d2h_pinned_copies();
}

/* Holds the worker's thread that launches it for ms milliseconds (the
 * mock runs kernels at their launch): the client's next requests wait
 * in the connection meanwhile. */
static void run_stall(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    struct timespec ts = {0, (long)*(int *)args[0] * 1000000L};
    nanosleep(&ts, NULL);
}

static void run_complain(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    fprintf(stderr, "mock assertion %d failed\n", *(int *)args[0]);
}

static const struct mock_kernel kernels[] = {
    {"_Z5scaleIfEvPT_S0_i", 3, {0, 8, 12}, {8, 4, 4}, run_scale_f},
    {"_Z5scaleIdEvPT_S0_i", 3, {0, 8, 16}, {8, 8, 4}, run_scale_d},
    {"_Z4overPi", 1, {0}, {8}, run_over1},
    {"_Z4overPii", 2, {0, 8}, {8, 4}, run_over2},
    {"_Z10echo_attrsPi", 1, {0}, {8}, run_echo_attrs},
    {"_Z3sayi", 1, {0}, {4}, run_say},
    {"_Z8complaini", 1, {0}, {4}, run_complain},
    {"_Z11writes_seenPy", 1, {0}, {8}, run_writes_seen},
    {"_Z12batches_seenPy", 1, {0}, {8}, run_batches_seen},
    {"_Z5stalli", 1, {0}, {4}, run_stall},
    {"_Z11aheads_seenPy", 1, {0}, {8}, run_aheads_seen},
};
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

const struct mock_kernel *mock_kernels_find(const char *name)
{
    for (size_t i = 0; i < NKERNELS; i++)
        if (strcmp(kernels[i].name, name) == 0)
            return &kernels[i];
    return NULL;
}

/* Attributes ------------------------------------------------------------- */

#define DEFAULT_DYNAMIC_SMEM 49152
#define MAX_DYNAMIC_SMEM 232448
#define SMEM_PER_SM 233472

/* Settings of any kernel, the first slice's included, by handle. */
struct settings {
    const void *kernel;
    int max_dynamic_smem;
    int carveout;
    enum cudaFuncCache cache;
};
static struct settings settings[32];

static struct settings *settings_of(const void *k)
{
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
        if (settings[i].kernel == k)
            return &settings[i];
        if (settings[i].kernel == NULL) {
            settings[i] = (struct settings){k, DEFAULT_DYNAMIC_SMEM, -1, 0};
            return &settings[i];
        }
    }
    return &settings[0];
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
                                  const void *func)
{
    const struct mock_kernel *k = func;
    const struct settings *s = settings_of(func);
    memset(attr, 0, sizeof(*attr));
    attr->numRegs = 16 + (int)k->nparams;
    attr->maxThreadsPerBlock = 1024;
    attr->maxDynamicSharedSizeBytes = s->max_dynamic_smem;
    attr->preferredShmemCarveout = s->carveout;
    attr->ptxVersion = 90;
    attr->binaryVersion = 90;
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute a,
                                 int value)
{
    struct settings *s = settings_of(func);
    switch (a) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (value < 0 || value > MAX_DYNAMIC_SMEM)
            return cudaErrorInvalidValue;
        s->max_dynamic_smem = value;
        return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        if (value < -1 || value > 100)
            return cudaErrorInvalidValue;
        s->carveout = value;
        return cudaSuccess;
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel,
                                            enum cudaFuncAttribute a,
                                            int value, int device)
{
    if (device < 0 || device >= mock_visible_count())
        return cudaErrorInvalidDevice;
    return cudaFuncSetAttribute((const void *)kernel, a, value);
}

cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache c)
{
    if ((unsigned)c > cudaFuncCachePreferEqual)
        return cudaErrorInvalidValue;
    settings_of(func)->cache = c;
    return cudaSuccess;
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func,
                                       enum cudaSharedMemConfig c)
{
    (void)func;
    return (unsigned)c <= cudaSharedMemBankSizeEightByte
               ? cudaSuccess
               : cudaErrorInvalidValue;
}

/* Occupancy: 2048 threads per multiprocessor, at most 32 blocks, and the
 * shared memory of one multiprocessor shared by its blocks. */
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *blocks, const void *func, int block, size_t smem, unsigned flags)
{
    (void)flags;
    if (block <= 0 || block > 1024)
        return cudaErrorInvalidValue;
    int n = 2048 / block < 32 ? 2048 / block : 32;
    if (smem > (size_t)settings_of(func)->max_dynamic_smem)
        n = 0;
    else if (smem > 0 && (size_t)n * smem > SMEM_PER_SM)
        n = (int)(SMEM_PER_SM / smem);
    *blocks = n;
    return cudaSuccess;
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *smem,
                                                      const void *func,
                                                      int blocks, int block)
{
    if (blocks <= 0 || block <= 0 || block > 1024)
        return cudaErrorInvalidValue;
    size_t per = SMEM_PER_SM / (size_t)blocks;
    size_t max = (size_t)settings_of(func)->max_dynamic_smem;
    *smem = per < max ? per : max;
    return cudaSuccess;
}

/* The cluster dimension a configuration asks for, 0 when none. */
static unsigned cluster_x(const cudaLaunchConfig_t *cfg)
{
    for (unsigned i = 0; i < cfg->numAttrs; i++)
        if (cfg->attrs[i].id == cudaLaunchAttributeClusterDimension)
            return cfg->attrs[i].val.clusterDim.x;
    return 0;
}

cudaError_t cudaOccupancyMaxPotentialClusterSize(int *size, const void *func,
                                                 const cudaLaunchConfig_t *cfg)
{
    (void)func;
    *size = cfg->blockDim.x <= 512 ? 16 : 8;
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveClusters(int *n, const void *func,
                                           const cudaLaunchConfig_t *cfg)
{
    (void)func;
    unsigned x = cluster_x(cfg);
    if (x == 0 || x > 16)
        return cudaErrorInvalidClusterSize;
    *n = (int)(132 * 2048 / (cfg->blockDim.x * x));
    return cudaSuccess;
}

/* The checks CUDA makes that the test exercises, then the launch. */
static cudaError_t launch_config(int entry, const cudaLaunchConfig_t *cfg,
                                 const void *func, void **args)
{
    if (cfg->numAttrs > sizeof(last_attrs) / sizeof(last_attrs[0]))
        return cudaErrorInvalidValue;
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        unsigned id = cfg->attrs[i].id;
        if (id > cudaLaunchAttributeNvlinkUtilCentricScheduling || id == 15)
            return cudaErrorInvalidValue;
    }
    unsigned x = cluster_x(cfg);
    if (x != 0 && (x > 16 || cfg->gridDim.x % x != 0))
        return cudaErrorInvalidClusterSize;
    if (cfg->dynamicSmemBytes > (size_t)settings_of(func)->max_dynamic_smem)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaLaunchKernel(func, cfg->gridDim, cfg->blockDim, args,
                                     cfg->dynamicSmemBytes, cfg->stream);
    if (e != cudaSuccess)
        return e;
    /* Kept for echo_attrs, after the launch that echo_attrs itself may
     * be: the next echo reports this one. */
    pthread_mutex_lock(&last_lock);
    last_entry = entry;
    last_shmem = cfg->dynamicSmemBytes;
    last_nattrs = cfg->numAttrs;
    if (cfg->numAttrs != 0) /* attrs may then be NULL */
        memcpy(last_attrs, cfg->attrs, cfg->numAttrs * sizeof(*cfg->attrs));
    pthread_mutex_unlock(&last_lock);
    return cudaSuccess;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *cfg,
                                const void *func, void **args)
{
    return launch_config(0, cfg, func, args);
}

/* A cooperative grid must fit on the device at once. */
cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid,
                                        dim3 block, void **args, size_t smem,
                                        cudaStream_t stream)
{
    const cudaLaunchConfig_t cfg = {grid, block, smem, stream, NULL, 0};
    if ((size_t)grid.x * grid.y * grid.z * block.x * block.y * block.z >
        (size_t)132 * 2048)
        return cudaErrorCooperativeLaunchTooLarge;
    return launch_config(1, &cfg, func, args);
}

/* The driver's launch, which the backend reaches through
 * cudaGetDriverEntryPointByVersion: the driver's codes for what it
 * refuses (the backend then asks the runtime, for the runtime's). */
/* The layer's copy kernel (copy_kernel.h), the one kernel of the mock
 * driver's one library, loaded from a fat binary (its magic checked):
 * a launch makes its copies in order on the stream, as the mock's copies
 * are, one row of the grid each. */
static int mock_library, mock_copy_kernel;

static CUresult mock_cuLibraryLoadData(CUlibrary *lib, const void *code,
                                       CUjit_option *jit_options,
                                       void **jit_values, unsigned n_jit,
                                       CUlibraryOption *options, void **values,
                                       unsigned n_options)
{
    (void)jit_options, (void)jit_values, (void)options, (void)values;
    uint32_t magic = 0;
    if (code != NULL)
        memcpy(&magic, code, sizeof(magic));
    if (magic != 0xba55ed50u || n_jit != 0 || n_options != 0)
        return CUDA_ERROR_INVALID_IMAGE;
    *lib = (CUlibrary)&mock_library;
    return CUDA_SUCCESS;
}

static CUresult mock_cuLibraryGetKernel(CUkernel *k, CUlibrary lib,
                                        const char *name)
{
    if (lib != (CUlibrary)&mock_library ||
        strcmp(name, GVS_COPY_KERNEL_NAME) != 0)
        return CUDA_ERROR_NOT_FOUND;
    *k = (CUkernel)&mock_copy_kernel;
    return CUDA_SUCCESS;
}

/* A device's primary context; a stream is the current device's. */
static char contexts[2];

CUcontext mock_context(int device)
{
    return (CUcontext)&contexts[device != 0];
}

static CUresult mock_cuStreamGetCtx(CUstream stream, CUcontext *ctx)
{
    (void)stream;
    *ctx = mock_context(mock_current_device());
    return CUDA_SUCCESS;
}

static CUresult mock_cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = mock_context(mock_current_device());
    return CUDA_SUCCESS;
}

static CUresult copy_kernel(unsigned gx, unsigned gy, unsigned bx,
                            CUstream stream, void **params)
{
    const struct gvs_copy_params *p = params[0];
    if (gx == 0 || bx == 0 || p->n == 0 || p->n > GVS_COPY_KERNEL_MAX ||
        (p->ordered ? gx != 1 || gy != 1 : gy != p->n))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < p->n; i++)
        if (cudaMemcpyAsync((void *)(uintptr_t)p->dst[i],
                            (const void *)(uintptr_t)p->src[i], p->len[i],
                            cudaMemcpyDeviceToDevice,
                            (cudaStream_t)stream) != cudaSuccess)
            return CUDA_ERROR_INVALID_VALUE;
    atomic_fetch_add(&kernel_launches, 1);
    atomic_fetch_add(&kernel_copies, p->n);
    if (p->ordered)
        atomic_fetch_add(&ordered_launches, 1);
    return CUDA_SUCCESS;
}

static CUresult mock_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
                                    unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shmem,
                                    CUstream stream, void **params,
                                    void **extra)
{
    if (f == (CUfunction)&mock_copy_kernel && extra == NULL && gz == 1 &&
        by == 1 && bz == 1 && shmem == 0)
        return copy_kernel(gx, gy, bx, stream, params);
    if (extra != NULL || gx == 0 || gy == 0 || gz == 0 ||
        (size_t)bx * by * bz > 1024 || (size_t)bx * by * bz == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (cudaLaunchKernel((const void *)f, (dim3){gx, gy, gz}, (dim3){bx, by, bz},
                         params, shmem, (cudaStream_t)stream) != cudaSuccess)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&last_lock);
    last_entry = 2;
    last_shmem = shmem;
    last_nattrs = 0;
    pthread_mutex_unlock(&last_lock);
    return CUDA_SUCCESS;
}

/* The driver's 32-bit write of a stream (the backend's signal that a
 * staged chunk's slot is free), through cudaGetDriverEntryPointByVersion:
 * done when the stream reaches it, as the GPU would.  The mock's device
 * address of host memory is its host address. */
struct mock_write {
    uint32_t *p;
    uint32_t value;
};

static void CUDART_CB mock_write_run(void *arg)
{
    struct mock_write *w = arg;
    __atomic_store_n(w->p, w->value, __ATOMIC_RELEASE);
    free(w);
}

static CUresult mock_cuStreamWriteValue32(CUstream stream, CUdeviceptr addr,
                                          cuuint32_t value, unsigned flags)
{
    struct mock_write *w = malloc(sizeof(*w));
    if (flags != 0 || addr == 0 || addr % 4 != 0 || w == NULL) {
        free(w);
        return CUDA_ERROR_INVALID_VALUE;
    }
    *w = (struct mock_write){(uint32_t *)(uintptr_t)addr, value};
    atomic_fetch_add(&writes, 1);
    if (cudaLaunchHostFunc((cudaStream_t)stream, mock_write_run, w) !=
        cudaSuccess) {
        free(w);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    return CUDA_SUCCESS;
}

/* The driver's batch of copies, made in order on the stream as the
 * mock's copies are; a batch of exactly 3 copies is refused, enqueuing
 * nothing, as a driver may refuse one (the worker then copies one by
 * one). */
static CUresult mock_cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                        size_t *sizes, size_t count,
                                        CUmemcpyAttributes *attrs,
                                        size_t *attrs_idxs, size_t num_attrs,
                                        CUstream stream)
{
    if (count == 0 || count == 3 || num_attrs != 1 || attrs_idxs[0] != 0 ||
        attrs[0].srcAccessOrder != CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
        stream == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++)
        if (cudaMemcpyAsync((void *)(uintptr_t)dsts[i],
                            (const void *)(uintptr_t)srcs[i], sizes[i],
                            cudaMemcpyDefault,
                            (cudaStream_t)stream) != cudaSuccess)
            return CUDA_ERROR_INVALID_VALUE;
    atomic_fetch_add(&batch_calls, 1);
    atomic_fetch_add(&batch_copies, count);
    return CUDA_SUCCESS;
}

/* No driver behind the mock: an -rdc program's units cannot be linked. */
cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **fn, unsigned int version,
    unsigned long long flags, enum cudaDriverEntryPointQueryResult *status)
{
    (void)flags;
    *fn = NULL;
    if (strcmp(symbol, "cuLaunchKernel") == 0)
        *fn = (void *)mock_cuLaunchKernel;
    if (strcmp(symbol, "cuGraphKernelNodeGetParams") == 0)
        *fn = (void *)mock_cuGraphKernelNodeGetParams;
    if (strcmp(symbol, "cuPointerGetAttributes") == 0)
        *fn = (void *)mock_cuPointerGetAttributes;
    if (strcmp(symbol, "cuStreamWriteValue32") == 0)
        *fn = (void *)mock_cuStreamWriteValue32;
    if (strcmp(symbol, "cuMemcpyBatchAsync") == 0 && version >= 13000)
        *fn = (void *)mock_cuMemcpyBatchAsync;
    if (strcmp(symbol, "cuLibraryLoadData") == 0)
        *fn = (void *)mock_cuLibraryLoadData;
    if (strcmp(symbol, "cuLibraryGetKernel") == 0)
        *fn = (void *)mock_cuLibraryGetKernel;
    if (strcmp(symbol, "cuStreamGetCtx") == 0)
        *fn = (void *)mock_cuStreamGetCtx;
    if (strcmp(symbol, "cuCtxGetCurrent") == 0)
        *fn = (void *)mock_cuCtxGetCurrent;
    if (*fn != NULL) {
        if (status != NULL)
            *status = cudaDriverEntryPointSuccess;
        return cudaSuccess;
    }
    if (status != NULL)
        *status = cudaDriverEntryPointSymbolNotFound;
    return cudaErrorNotSupported;
}
