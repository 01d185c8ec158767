/*
 * cuGetProcAddress and cuGetProcAddress_v2, answered locally as NVIDIA's
 * driver answers them (procaddr.h): the pointer given is the frontend's
 * own export of the name the driver gave, the one dlsym finds.
 *
 * Deliberate difference: the driver crashes on a NULL symbol or pfn;
 * here either is CUDA_ERROR_INVALID_VALUE, nothing written.
 */
#include "fe.h"
#include "procaddr.h"

#include <stdlib.h>
#include <string.h>

#define STREAM_FLAGS \
    (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, procaddr_text + ((const struct procaddr_name *)elem)->name);
}

/* The step answer for symbol at cudaVersion, flags being valid. */
static unsigned answer(const char *symbol, int cudaVersion, cuuint64_t flags)
{
    const struct procaddr_name *n = bsearch(symbol, procaddr_names, procaddr_nnames,
                                            sizeof(procaddr_names[0]), cmp_name);
    const struct procaddr_series *s = n != NULL ? n->series : procaddr_unknown;
    s += (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? PROCADDR_PER_THREAD
                                                                 : PROCADDR_LEGACY;
    /* A few steps, the first from INT32_MIN: the last that has begun. */
    const struct procaddr_step *step = procaddr_steps + s->first + s->count - 1;
    while (step->from > cudaVersion)
        step--;
    return step->answer;
}

/* v2: status may be NULL, as the driver accepts. */
static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       int v2, CUdriverProcAddressQueryResult *status)
{
    /* Any other flag bit is refused, nothing written, as by the driver. */
    if (symbol == NULL || pfn == NULL || (flags & ~(cuuint64_t)STREAM_FLAGS) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned a = answer(symbol, cudaVersion, flags);
    if (a == PROCADDR_INVALID)
        return CUDA_ERROR_INVALID_VALUE;
    if (a == PROCADDR_NOT_FOUND || a == PROCADDR_TOO_OLD) {
        if (!v2)
            return CUDA_ERROR_NOT_FOUND;
        *pfn = NULL;
        if (status != NULL)
            *status = a == PROCADDR_NOT_FOUND ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                              : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_SUCCESS;
    }
    *pfn = procaddr_fns[a];
    if (status != NULL)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return lookup(symbol, pfn, cudaVersion, flags, 0, NULL);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                             cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    return lookup(symbol, pfn, cudaVersion, flags, 1, symbolStatus);
}
