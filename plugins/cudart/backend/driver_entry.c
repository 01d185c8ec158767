/* The driver's entry points, through the runtime (be.h). */
#include "be.h"

#include <pthread.h>

cudaError_t be_driver_entry(const char *name, unsigned version, void **fn)
{
    enum cudaDriverEntryPointQueryResult q;
    *fn = NULL;
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, version,
                                                     cudaEnableDefault, &q);
    if (e == cudaSuccess && (q != cudaDriverEntryPointSuccess || *fn == NULL))
        e = cudaErrorNotSupported;
    if (e != cudaSuccess)
        *fn = NULL;
    return e;
}

static struct be_driver found;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void find(void)
{
    void *fn;
    if (be_driver_entry("cuLaunchKernel", 12000, &fn) == cudaSuccess)
        found.launch = (be_driver_launch_fn)fn;
    if (be_driver_entry("cuMemcpyAsync", 4000, &fn) == cudaSuccess)
        found.copy_async = (be_driver_copy_async_fn)fn;
    if (be_driver_entry("cuMemcpy", 4000, &fn) == cudaSuccess)
        found.copy = (be_driver_copy_fn)fn;
    if (be_driver_entry("cuStreamWriteValue32", 12000, &fn) == cudaSuccess)
        found.write_value32 = (be_driver_write_value32_fn)fn;
    if (be_driver_entry("cuPointerGetAttributes", 7000, &fn) == cudaSuccess)
        found.attrs = (be_driver_attrs_fn)fn;
    if (be_driver_entry("cuMemcpyBatchAsync", 13000, &fn) == cudaSuccess)
        found.copy_batch = (be_driver_copy_batch_fn)fn;
    struct gvs_remote_copy_driver *k = &found.copy_kernel;
    k->launch = found.launch;
    k->pointer_attrs = found.attrs;
    if (be_driver_entry("cuLibraryLoadData", 12000, &fn) == cudaSuccess)
        k->library_load_data = (CUresult(*)(CUlibrary *, const void *,
                                            CUjit_option *, void **, unsigned,
                                            CUlibraryOption *, void **,
                                            unsigned))fn;
    if (be_driver_entry("cuLibraryGetKernel", 12000, &fn) == cudaSuccess)
        k->library_get_kernel =
            (CUresult(*)(CUkernel *, CUlibrary, const char *))fn;
    if (be_driver_entry("cuStreamGetCtx", 9020, &fn) == cudaSuccess)
        k->stream_ctx = (CUresult(*)(CUstream, CUcontext *))fn;
    if (be_driver_entry("cuCtxGetCurrent", 4000, &fn) == cudaSuccess)
        k->current_ctx = (CUresult(*)(CUcontext *))fn;
    /* A missing entry point leaves nothing for a later cudaGetLastError. */
    (void)cudaGetLastError();
}

const struct be_driver *be_driver(void)
{
    pthread_once(&once, find);
    return &found;
}
