#include "fe.h"

#include <stdlib.h>

struct fe_errdesc {
    int code;
    const char *name;
    const char *string;
};

#include "cudart_errtab.h"

static _Thread_local cudaError_t last_error = cudaSuccess;

/* cudaErrorNotReady (a query of work still running) is an answer, not a
 * failure: the runtime does not keep it as the last error. */
cudaError_t cudart_fe_ret(cudaError_t r)
{
    if (r != cudaSuccess && r != cudaErrorNotReady)
        last_error = r;
    return r;
}

/* Like the real runtime, both initialize it first, and a failed
 * initialization (or a dead connection) cannot be cleared. */
cudaError_t cudaGetLastError(void)
{
    struct gvs_client *cl;
    cudaError_t dead = fe_client(&cl);
    cudaError_t r = last_error;
    last_error = cudaSuccess;
    return r != cudaSuccess ? r : dead;
}

cudaError_t cudaPeekAtLastError(void)
{
    struct gvs_client *cl;
    cudaError_t dead = fe_client(&cl);
    return last_error != cudaSuccess ? last_error : dead;
}

static int cmp_code(const void *key, const void *elem)
{
    int k = *(const int *)key;
    int c = ((const struct fe_errdesc *)elem)->code;
    return (k > c) - (k < c);
}

static const struct fe_errdesc *find(cudaError_t error)
{
    int code = (int)error;
    return bsearch(&code, fe_errtab, sizeof(fe_errtab) / sizeof(fe_errtab[0]),
                   sizeof(fe_errtab[0]), cmp_code);
}

const char *cudaGetErrorName(cudaError_t error)
{
    const struct fe_errdesc *d = find(error);
    return d != NULL ? d->name : FE_ERR_UNKNOWN_NAME;
}

const char *cudaGetErrorString(cudaError_t error)
{
    const struct fe_errdesc *d = find(error);
    return d != NULL ? d->string : FE_ERR_UNKNOWN_STRING;
}
