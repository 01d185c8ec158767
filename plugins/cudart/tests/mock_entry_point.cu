// cudart.mock_entry_point: cudaGetDriverEntryPoint and
// cudaGetDriverEntryPointByVersion (and their _ptsz exports) hand out
// gvs's driver frontend's functions, those its cuGetProcAddress_v2 gives
// for the runtime's version and stream flags, with no round trip; the
// functions work through gvs; a symbol
// unknown or too new is cudaSuccess with no pointer and the status that
// says which; a NULL symbol or pointer and unknown flags are
// cudaErrorInvalidValue, kept as the last error.
// Prints "ok".
#include <cuda.h>
#include <string.h>

#include "mock_check.h"

#define CU(call) CHECK((call) == CUDA_SUCCESS)

typedef cudaError_t (*entry_fn)(const char *, void **, unsigned long long,
                                enum cudaDriverEntryPointQueryResult *);
typedef cudaError_t (*by_version_fn)(const char *, void **, unsigned int, unsigned long long,
                                     enum cudaDriverEntryPointQueryResult *);

static void *drv;

// The pointer the runtime hands out for symbol, with its status.
static void *entry(entry_fn f, const char *symbol, unsigned long long flags,
                   enum cudaDriverEntryPointQueryResult want)
{
    void *p = (void *)1;
    enum cudaDriverEntryPointQueryResult q = (enum cudaDriverEntryPointQueryResult)-1;
    OK(f(symbol, &p, flags, &q));
    CHECK(q == want);
    CHECK((p != NULL) == (want == cudaDriverEntryPointSuccess));
    return p;
}

static void *by_version(by_version_fn f, const char *symbol, unsigned version,
                        unsigned long long flags, enum cudaDriverEntryPointQueryResult want)
{
    void *p = (void *)1;
    enum cudaDriverEntryPointQueryResult q = (enum cudaDriverEntryPointQueryResult)-1;
    OK(f(symbol, &p, version, flags, &q));
    CHECK(q == want);
    CHECK((p != NULL) == (want == cudaDriverEntryPointSuccess));
    return p;
}

int main()
{
    stats_init();
    OK(cudaFree(0));
    // LD_LIBRARY_PATH names gvs's frontends alone: this is gvs's driver.
    drv = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(drv != NULL);
    entry_fn ep = (entry_fn)dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPoint");
    entry_fn ep_ptsz = (entry_fn)dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPoint_ptsz");
    by_version_fn bv = (by_version_fn)dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPointByVersion");
    by_version_fn bv_ptsz =
        (by_version_fn)dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPointByVersion_ptsz");
    CHECK(ep && ep_ptsz && bv && bv_ptsz);
    const enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;

    // The driver frontend's exports, answered in the client.
    struct stats s = now();
    void *alloc = entry(ep, "cuMemAlloc", cudaEnableDefault, found);
    void *free_ = entry(ep, "cuMemFree", cudaEnableDefault, found);
    void *htod = entry(ep, "cuMemcpyHtoD", cudaEnableDefault, found);
    void *dtoh = entry(ep, "cuMemcpyDtoH", cudaEnableDefault, found);
    CHECK(now().round_trips == s.round_trips);
    CHECK(alloc == dlsym(drv, "cuMemAlloc_v2"));
    CHECK(free_ == dlsym(drv, "cuMemFree_v2"));
    CHECK(htod == dlsym(drv, "cuMemcpyHtoD_v2"));
    CHECK(dtoh == dlsym(drv, "cuMemcpyDtoH_v2"));
    CHECK(by_version(bv, "cuMemAlloc", 3000, 0, found) == dlsym(drv, "cuMemAlloc"));
    CHECK(by_version(bv, "cuMemAlloc", 12000, 0, found) == alloc);

    // They work through gvs (the two mocks behind gvsd share no memory:
    // the bytes come back through the driver).
    CUdeviceptr d = 0;
    CU(((CUresult(*)(CUdeviceptr *, size_t))alloc)(&d, 256));
    unsigned char in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (unsigned char)(i * 7);
    CU(((CUresult(*)(CUdeviceptr, const void *, size_t))htod)(d, in, sizeof(in)));
    CU(((CUresult(*)(void *, CUdeviceptr, size_t))dtoh)(out, d, sizeof(out)));
    CHECK(memcmp(in, out, sizeof(in)) == 0);
    CU(((CUresult(*)(CUdeviceptr))free_)(d));

    // Stream semantics: the export's own for cudaEnableDefault.
    void *legacy = dlsym(drv, "cuStreamQuery");
    void *per_thread = dlsym(drv, "cuStreamQuery_ptsz");
    CHECK(legacy && per_thread);
    CHECK(entry(ep, "cuStreamQuery", cudaEnableDefault, found) == legacy);
    CHECK(entry(ep, "cuStreamQuery", cudaEnableLegacyStream, found) == legacy);
    CHECK(entry(ep, "cuStreamQuery", cudaEnablePerThreadDefaultStream, found) == per_thread);
    CHECK(entry(ep_ptsz, "cuStreamQuery", cudaEnableDefault, found) == per_thread);
    CHECK(entry(ep_ptsz, "cuStreamQuery", cudaEnableLegacyStream, found) == legacy);
    CHECK(by_version(bv_ptsz, "cuStreamQuery", 12000, cudaEnableDefault, found) == per_thread);
    CHECK(by_version(bv, "cuStreamQuery", 12000, cudaEnableDefault, found) == legacy);
    CU(((CUresult(*)(CUstream))per_thread)(CU_STREAM_PER_THREAD));

    // Unknown, and too new for the version asked.
    entry(ep, "cuNoSuchFunction", cudaEnableDefault, cudaDriverEntryPointSymbolNotFound);
    by_version(bv, "cuStreamGetId", 11080, 0, cudaDriverEntryPointVersionNotSufficent);
    CHECK(by_version(bv, "cuStreamGetId", 12000, 0, found) == dlsym(drv, "cuStreamGetId"));
    void *p = NULL;
    OK(ep("cuMemAlloc", &p, cudaEnableDefault, NULL));
    CHECK(p == alloc);

    // Refused, and kept as the last error.
    CHECK(ep(NULL, &p, cudaEnableDefault, NULL) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(ep("cuMemAlloc", NULL, cudaEnableDefault, NULL) == cudaErrorInvalidValue);
    CHECK(bv("cuMemAlloc", &p, 12000, 4, NULL) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaSuccess);
    printf("ok\n");
    return 0;
}
