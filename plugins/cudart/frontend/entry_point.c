/*
 * cudaGetDriverEntryPoint and cudaGetDriverEntryPointByVersion, with
 * their _ptsz exports: the driver's function pointers are gvs's driver
 * frontend's, asked of its cuGetProcAddress_v2 with the version and
 * flags NVIDIA's runtime passes, so the answer is the one the driver
 * gives (plugins/cuda/frontend/procaddr.c), in the client with no round
 * trip.
 *
 * The driver frontend is opened by the absolute path of the directory
 * this library was loaded from, never by its bare name: the search path
 * could find NVIDIA's real driver, which a gvs frontend must never load.
 */
#include "fe.h"

#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Declared by cuda_runtime_api.h only under --default-stream per-thread. */
#pragma GCC visibility push(default)
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                         unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus);
#pragma GCC visibility pop

typedef CUresult (*procaddr_fn)(const char *symbol, void **pfn, int cudaVersion,
                                cuuint64_t flags, CUdriverProcAddressQueryResult *status);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static procaddr_fn procaddr;

/* gvs's libcuda.so.1 beside this library (the build's and the install's
 * frontend directory), opened for good: the pointers handed out must
 * stay valid. */
static void open_driver(void)
{
    Dl_info self;
    if (!dladdr((void *)open_driver, &self) || self.dli_fname == NULL)
        return;
    const char *slash = strrchr(self.dli_fname, '/');
    if (slash == NULL)
        return;
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%.*s/libcuda.so.1", (int)(slash - self.dli_fname),
                     self.dli_fname);
    if (n < 0 || (size_t)n >= sizeof(path))
        return;
    void *lib = dlopen(path, RTLD_NOW | RTLD_NODELETE);
    if (lib != NULL)
        *(void **)&procaddr = dlsym(lib, "cuGetProcAddress_v2");
}

/* cudaEnableDefault is the export's own stream semantics; the other
 * values are the driver's flags already (cudaEnableLegacyStream ==
 * CU_GET_PROC_ADDRESS_LEGACY_STREAM, ...), passed on for the driver to
 * accept or refuse. */
static cudaError_t entry_point(const char *symbol, void **funcPtr, int cudaVersion,
                               unsigned long long flags, int per_thread,
                               enum cudaDriverEntryPointQueryResult *driverStatus)
{
    pthread_once(&once, open_driver);
    if (procaddr == NULL)
        return cudaErrorInsufficientDriver;
    if (flags == cudaEnableDefault)
        flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                           : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    switch (procaddr(symbol, funcPtr, cudaVersion, flags, &q)) {
    case CUDA_SUCCESS:
        break;
    case CUDA_ERROR_NOT_SUPPORTED:
        return cudaErrorNotSupported;
    default:
        return cudaErrorInvalidValue;
    }
    if (driverStatus != NULL)
        *driverStatus = q == CU_GET_PROC_ADDRESS_SUCCESS ? cudaDriverEntryPointSuccess
                        : q == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                            ? cudaDriverEntryPointSymbolNotFound
                            : cudaDriverEntryPointVersionNotSufficent;
    return cudaSuccess;
}

/* The runtime's own version: a symbol newer than CUDA 13.0 is not
 * sufficient for a program of this runtime. */
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                                    unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudart_fe_ret(entry_point(symbol, funcPtr, CUDART_VERSION, flags, 0, driverStatus));
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                         unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudart_fe_ret(entry_point(symbol, funcPtr, CUDART_VERSION, flags, 1, driverStatus));
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudart_fe_ret(
        entry_point(symbol, funcPtr, (int)cudaVersion, flags, 0, driverStatus));
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudart_fe_ret(
        entry_point(symbol, funcPtr, (int)cudaVersion, flags, 1, driverStatus));
}
