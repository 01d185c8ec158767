/* The driver's entry points, through the runtime (be.h). */
#include "be.h"

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
