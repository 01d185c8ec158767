/*
 * cuGetErrorName and cuGetErrorString, answered locally in the driver's
 * own words: errstr.inc is dumped from NVIDIA's driver by
 * tools/errstr_dump (the toolkit has no copy of them).
 */
#include "fe.h"

#include <stdlib.h>

struct errdesc {
    int code;
    const char *name;
    const char *string;
};

/* In code order: searched with bsearch. */
static const struct errdesc errtab[] = {
#include "errstr.inc"
};

static int cmp_code(const void *key, const void *elem)
{
    int k = *(const int *)key;
    int c = ((const struct errdesc *)elem)->code;
    return (k > c) - (k < c);
}

static const struct errdesc *find(CUresult error)
{
    int code = (int)error;
    return bsearch(&code, errtab, sizeof(errtab) / sizeof(errtab[0]),
                   sizeof(errtab[0]), cmp_code);
}

/* As the driver answers, an unknown code is CUDA_ERROR_INVALID_VALUE
 * with *pStr set to NULL.  The driver crashes on a NULL pStr; here it
 * is CUDA_ERROR_INVALID_VALUE too. */
CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const struct errdesc *d = find(error);
    *pStr = d != NULL ? d->name : NULL;
    return d != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const struct errdesc *d = find(error);
    *pStr = d != NULL ? d->string : NULL;
    return d != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
