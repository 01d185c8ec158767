// The driver's functions as the runtime hands them out:
// cudaGetDriverEntryPoint (the runtime's own version) and
// cudaGetDriverEntryPointByVersion, and their _ptsz exports, whose
// default is the per-thread stream.  Each answer is printed with whether
// it is the pointer the driver's own cuGetProcAddress_v2 gives for the
// version and stream flags the runtime passes; the functions are used
// (memory allocated, copied both ways, a stream queried, freed); a symbol
// that does not exist, one too new for the version asked, a version
// newer than the driver and unknown flags are printed as the runtime
// answers them.  Every line is a result both runs must print alike.
#include "check.h"
#include "driver_api.h"

#include <cstring>

// Declared by cuda_runtime_api.h only under --default-stream per-thread.
extern "C" cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                                    unsigned long long flags,
                                                    cudaDriverEntryPointQueryResult *status);
extern "C" cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    cudaDriverEntryPointQueryResult *status);

// The driver's answer for symbol at version with its stream flags.
static void *driver_answer(const char *symbol, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult q;
    if (DRIVER(cuGetProcAddress)(symbol, &p, version, flags, &q) != CUDA_SUCCESS)
        return NULL;
    return p;
}

// Prints what the runtime answered, and whether its pointer is the
// driver's for (version, cu_flags); returns the pointer.
static void *report(const char *how, const char *symbol, cudaError_t r, void *p,
                    cudaDriverEntryPointQueryResult q, int version, cuuint64_t cu_flags)
{
    printf("%s %s: %s", how, symbol, cudaGetErrorName(r));
    if (r == cudaSuccess)
        printf(", status %d, pointer %d, the driver's %d", (int)q, p != NULL,
               p == driver_answer(symbol, version, cu_flags));
    printf("\n");
    return r == cudaSuccess ? p : NULL;
}

// cudaGetDriverEntryPoint, or its _ptsz export.
static void *entry(const char *symbol, unsigned long long flags, bool ptsz, cuuint64_t cu_flags)
{
    void *p = NULL;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSuccess;
    cudaError_t r = ptsz ? cudaGetDriverEntryPoint_ptsz(symbol, &p, flags, &q)
                         : cudaGetDriverEntryPoint(symbol, &p, flags, &q);
    char how[64];
    snprintf(how, sizeof(how), "entry point%s flags %llu", ptsz ? " ptsz" : "", flags);
    return report(how, symbol, r, p, q, CUDART_VERSION, cu_flags);
}

static void *by_version(const char *symbol, unsigned version, unsigned long long flags,
                        bool ptsz, cuuint64_t cu_flags)
{
    void *p = NULL;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSuccess;
    cudaError_t r = ptsz
                        ? cudaGetDriverEntryPointByVersion_ptsz(symbol, &p, version, flags, &q)
                        : cudaGetDriverEntryPointByVersion(symbol, &p, version, flags, &q);
    char how[64];
    snprintf(how, sizeof(how), "by version %u%s flags %llu", version, ptsz ? " ptsz" : "",
             flags);
    return report(how, symbol, r, p, q, (int)version, cu_flags);
}

int main()
{
    CHECK(cudaFree(0));
    const cuuint64_t LEGACY = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    const cuuint64_t PER_THREAD = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

    typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
    typedef CUresult (*free_fn)(CUdeviceptr);
    typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
    typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
    typedef CUresult (*query_fn)(CUstream);
    alloc_fn alloc = (alloc_fn)entry("cuMemAlloc", cudaEnableDefault, false, LEGACY);
    free_fn free_ = (free_fn)entry("cuMemFree", cudaEnableDefault, false, LEGACY);
    htod_fn htod = (htod_fn)entry("cuMemcpyHtoD", cudaEnableLegacyStream, false, LEGACY);
    dtoh_fn dtoh = (dtoh_fn)by_version("cuMemcpyDtoH", 12000, cudaEnableDefault, false, LEGACY);
    query_fn query = (query_fn)entry("cuStreamQuery", cudaEnableDefault, true, PER_THREAD);
    entry("cuStreamQuery", cudaEnableDefault, false, LEGACY);
    entry("cuStreamQuery", cudaEnablePerThreadDefaultStream, false, PER_THREAD);
    entry("cuStreamQuery", cudaEnableLegacyStream, true, LEGACY);
    by_version("cuStreamQuery", 12000, cudaEnableDefault, true, PER_THREAD);
    by_version("cuMemAlloc", 3000, cudaEnableDefault, false, LEGACY);
    by_version("cuMemAlloc", 12000, cudaEnableLegacyStream, true, LEGACY);
    if (!alloc || !free_ || !htod || !dtoh || !query) {
        printf("FAIL a driver function is missing\n");
        return 1;
    }

    // The functions work, on memory the runtime sees.
    CUdeviceptr d = 0;
    printf("cuMemAlloc: %d\n", (int)alloc(&d, 1024));
    int in[256], out[256], back[256];
    for (int i = 0; i < 256; i++)
        in[i] = i * 3 + 1;
    printf("cuMemcpyHtoD: %d\n", (int)htod(d, in, sizeof(in)));
    CHECK(cudaMemcpy(out, (void *)d, sizeof(out), cudaMemcpyDeviceToHost));
    printf("runtime reads it back: %d\n", memcmp(in, out, sizeof(in)) == 0);
    CHECK(cudaMemset((void *)d, 0, 16));
    printf("cuMemcpyDtoH: %d\n", (int)dtoh(back, d, sizeof(back)));
    printf("runtime's memset seen: %d %d\n", back[0], back[4]);
    printf("cuStreamQuery_ptsz: %d\n", (int)query(CU_STREAM_PER_THREAD));
    printf("cuMemFree: %d\n", (int)free_(d));

    // Not there, too new for the version asked, newer than the driver,
    // unknown flags.
    entry("cuNoSuchFunction", cudaEnableDefault, false, LEGACY);
    by_version("cuStreamGetId", 11080, cudaEnableDefault, false, LEGACY);
    by_version("cuStreamGetId", 12000, cudaEnableDefault, false, LEGACY);
    by_version("cuMemAlloc", 99000, cudaEnableDefault, false, LEGACY);
    printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    entry("cuMemAlloc", 4, false, LEGACY);
    printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    void *p = NULL;
    printf("no status: %s, pointer %d\n",
           cudaGetErrorName(cudaGetDriverEntryPoint("cuMemAlloc", &p, cudaEnableDefault, NULL)),
           p != NULL);
    printf("done\n");
    return 0;
}
