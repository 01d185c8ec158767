/*
 * A host-memory stand-in for the CUDA runtime calls the backend makes, so
 * that the whole path (registration, upload, layouts, launch, bulk
 * copies, symbols) runs without a GPU in cudart.mock_e2e.  "Device"
 * memory is host memory tracked here; kernels are the few of
 * mock_e2e.cu, emulated by name with the layouts nvcc gives them.
 * Linked into a test build of gvs-cudart.so only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda_runtime_api.h>

#include "mock_kernels.h"
#include "mock_streams.h"

struct mock_alloc {
    char *base;
    size_t size;
    int device; /* current when it was made */
};

#define MAX_ALLOCS 4096
static struct mock_alloc allocs[MAX_ALLOCS];
static cudaError_t last_error;

static cudaError_t fail(cudaError_t e)
{
    last_error = e;
    return e;
}

static struct mock_alloc *alloc_of(const void *p)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].base != NULL && (const char *)p >= allocs[i].base &&
            (const char *)p < allocs[i].base + allocs[i].size)
            return &allocs[i];
    return NULL;
}

int mock_dev_ok(const void *p, size_t len)
{
    const struct mock_alloc *a = alloc_of(p);
    return a == NULL || len <= (size_t)(a->base + a->size - (const char *)p);
}

/* Like a GPU's, "device" addresses come from a range of their own, away
 * from where a client's heap would be. */
static uintptr_t next_va = (uintptr_t)0x500000000000ull;

static void *mock_alloc(size_t size)
{
    size = size ? size : 1;
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].base == NULL) {
            void *p = mmap((void *)next_va, size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED)
                return NULL;
            next_va += (size + ((size_t)2 << 20)) & ~(((size_t)2 << 20) - 1);
            allocs[i].base = p;
            allocs[i].size = size;
            allocs[i].device = mock_current_device();
            return p;
        }
    return NULL;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    *count = mock_visible_count();
    return *count > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

static _Thread_local int current_dev;

int mock_current_device(void)
{
    return current_dev;
}

cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device >= mock_visible_count())
        return fail(cudaErrorInvalidDevice);
    current_dev = device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (device < 0 || device >= mock_visible_count())
        return fail(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof(*prop));
    strcpy(prop->name, mock_physical(device) == 0 ? "gvs mock 0" : "gvs mock 1");
    /* GPU-00000000-... and GPU-11111111-... (mock_devices.c). */
    memset(prop->uuid.bytes, mock_physical(device) == 0 ? 0x00 : 0x11,
           sizeof(prop->uuid.bytes));
    prop->major = 9;
    prop->maxThreadsPerBlock = 1024;
    prop->totalGlobalMem = (size_t)80 << 30;
    prop->canMapHostMemory = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
                                   int device)
{
    if (device < 0 || device >= mock_visible_count())
        return fail(cudaErrorInvalidDevice);
    *value = attr == cudaDevAttrMaxThreadsPerBlock ? 1024
             : attr == cudaDevAttrCanMapHostMemory ? 1
                                                   : 0;
    return cudaSuccess;
}

/* Reports the device it ran on, so the test sees SET_DEVICE at work. */
static int synced_on = -1;

cudaError_t cudaDeviceSynchronize(void)
{
    mock_streams_drain();
    synced_on = current_dev;
    return cudaSuccess;
}

cudaError_t cudaDeviceReset(void)
{
    mock_streams_drain();
    mock_pinned_reset();
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    /* The last device cudaDeviceSynchronize ran on, for the test. */
    *v = 13000 + synced_on;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t size)
{
    if (size > ((size_t)1 << 31))
        return fail(cudaErrorMemoryAllocation);
    *p = mock_alloc(size);
    return *p != NULL ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

/* Synchronizes the device first, as CUDA does: queued work may use p. */
cudaError_t cudaFree(void *p)
{
    mock_streams_drain();
    if (p == NULL)
        return cudaSuccess;
    struct mock_alloc *a = alloc_of(p);
    if (a == NULL || a->base != p)
        return fail(cudaErrorInvalidValue);
    munmap(a->base, a->size);
    a->base = NULL;
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr,
                                     const void *p)
{
    memset(attr, 0, sizeof(*attr));
    if (alloc_of(p) == NULL)
        return cudaSuccess;
    attr->type = cudaMemoryTypeDevice;
    attr->device = mock_current_device();
    attr->devicePointer = (void *)(uintptr_t)p;
    return cudaSuccess;
}

/* As the driver answers: an address in no allocation gets empty values,
 * not an error; the attributes the backend does not ask are refused. */
CUresult mock_cuPointerGetAttributes(unsigned n, CUpointer_attribute *which,
                                     void **data, CUdeviceptr p)
{
    const struct mock_alloc *a = alloc_of((const void *)(uintptr_t)p);
    for (unsigned i = 0; i < n; i++) {
        switch (which[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(CUmemorytype *)data[i] =
                a != NULL ? CU_MEMORYTYPE_DEVICE : (CUmemorytype)0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *)data[i] = a != NULL ? (CUdeviceptr)(uintptr_t)a->base : 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *(size_t *)data[i] = a != NULL ? a->size : 0;
            break;
        case CU_POINTER_ATTRIBUTE_CONTEXT:
            *(CUcontext *)data[i] = a != NULL ? mock_context(a->device) : NULL;
            break;
        case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
            *(int *)data[i] = a != NULL;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

cudaError_t cudaMemset(void *p, int value, size_t count)
{
    /* Nothing to do for count 0, whatever p is (memset's p must not be
     * NULL). */
    if (!mock_dev_ok(p, count))
        return fail(cudaErrorIllegalAddress);
    if (count != 0)
        memset(p, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind)
{
    (void)kind;
    if (!mock_dev_ok(dst, count) || !mock_dev_ok(src, count))
        return fail(cudaErrorIllegalAddress);
    if (count != 0)
        memmove(dst, src, count);
    return cudaSuccess;
}

/* Kernels --------------------------------------------------------------- */

struct S {
    char a;
    double b;
    int c[3];
};

static int *dv; /* the module's __device__ int dv[4] */
static float *cv;

static void run_fill(dim3 grid, dim3 block, void **args)
{
    int *p = *(int **)args[0];
    int n = *(int *)args[1];
    double d = *(double *)args[2];
    char c = *(char *)args[3];
    for (unsigned i = 0; i < grid.x * block.x; i++)
        if ((int)i < n)
            p[i] = (int)i + (int)d + c;
}

static void run_take_struct(dim3 grid, dim3 block, void **args)
{
    struct S s;
    (void)grid, (void)block;
    memcpy(&s, args[0], sizeof(s));
    int *out = *(int **)args[1];
    out[0] = s.a + (int)s.b + s.c[0] + s.c[1] + s.c[2];
}

static void run_add_dv(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block;
    int *p = *(int **)args[0];
    p[0] += dv[0] + (int)cv[1];
}

static void run_empty(dim3 grid, dim3 block, void **args)
{
    (void)grid, (void)block, (void)args;
}

static const struct mock_kernel kernels[] = {
    {"_Z4fillPiidc", 4, {0, 8, 16, 24}, {8, 4, 8, 1}, run_fill},
    {"_Z11take_struct1SPi", 2, {0, 32}, {32, 8}, run_take_struct},
    {"_Z6add_dvPi", 1, {0}, {8}, run_add_dv},
    {"_Z5emptyv", 0, {0}, {0}, run_empty},
};

static char the_library;

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                enum cudaJitOption *jo, void **jv,
                                unsigned int nj, enum cudaLibraryOption *lo,
                                void **lv, unsigned int nl)
{
    (void)code, (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    *library = (cudaLibrary_t)(void *)&the_library;
    return cudaSuccess;
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    (void)library;
    return cudaSuccess;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *k, cudaLibrary_t lib,
                                 const char *name)
{
    (void)lib;
    for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
        if (strcmp(kernels[i].name, name) == 0) {
            *k = (cudaKernel_t)(void *)&kernels[i];
            return cudaSuccess;
        }
    const struct mock_kernel *more = mock_kernels_find(name);
    if (more != NULL) {
        *k = (cudaKernel_t)(void *)more;
        return cudaSuccess;
    }
    return fail(cudaErrorSymbolNotFound);
}

/* Every library the mock loads holds the kernels above. */
cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{
    (void)lib;
    *count = sizeof(kernels) / sizeof(kernels[0]);
    return cudaSuccess;
}

cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *k, unsigned int n,
                                        cudaLibrary_t lib)
{
    (void)lib;
    if (n > sizeof(kernels) / sizeof(kernels[0]))
        return fail(cudaErrorInvalidValue);
    for (unsigned i = 0; i < n; i++)
        k[i] = (cudaKernel_t)(void *)&kernels[i];
    return cudaSuccess;
}

/* A unified function's address is one of device code; the mock gives a
 * fixed one for "uf". */
cudaError_t cudaLibraryGetUnifiedFunction(void **fptr, cudaLibrary_t lib,
                                          const char *name)
{
    (void)lib;
    if (strcmp(name, "uf") != 0)
        return fail(cudaErrorSymbolNotFound);
    *fptr = (void *)(uintptr_t)0x7e57f000u;
    return cudaSuccess;
}

cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes,
                                 cudaLibrary_t lib, const char *name)
{
    (void)lib;
    if (strcmp(name, "dv") == 0) {
        if (dv == NULL)
            dv = mock_alloc(16);
        *dptr = dv;
        *bytes = 16;
        return cudaSuccess;
    }
    if (strcmp(name, "cv") == 0) {
        if (cv == NULL)
            cv = mock_alloc(32);
        *dptr = cv;
        *bytes = 32;
        return cudaSuccess;
    }
    return fail(cudaErrorSymbolNotFound);
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t index,
                                 size_t *offset, size_t *size)
{
    const struct mock_kernel *k = func;
    if (index >= k->nparams)
        return fail(cudaErrorInvalidValue);
    *offset = k->offsets[index];
    *size = k->sizes[index];
    return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block,
                             void **args, size_t shmem, cudaStream_t stream)
{
    const struct mock_kernel *k = func;
    (void)shmem, (void)stream;
    if (block.x * block.y * block.z > 1024)
        return fail(cudaErrorInvalidConfiguration);
    k->run(grid, block, args);
    return cudaSuccess;
}
