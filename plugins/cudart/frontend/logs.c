/*
 * The driver's logs (api/80-misc.api LOGS_CURRENT, LOGS_DUMP): they are
 * the worker's, whose driver does the session's work.  The backend dumps
 * them into memory; cudaLogsDumpToFile writes the text into the client's
 * file.  Log callbacks are notifications.c's.
 */
#include "fe.h"

#include <stdio.h>
#include <string.h>

#include "cudart_ops.h"
#include "gvs/mem.h"
#include "gvs_remote.h"

/* The driver keeps at most 25600 bytes of logs. */
#define FILE_DUMP_MAX ((size_t)32 << 10)

cudaError_t cudaLogsCurrent(cudaLogIterator *iterator_out, unsigned int flags)
{
    struct apigen_call c;
    uint64_t it;
    if (iterator_out == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    apigen_put_u32(&c, flags);
    e = cudart_fe_run(&c, CUDART_OP_LOGS_CURRENT, 0);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &it);
        *iterator_out = (cudaLogIterator)it;
    }
    return cudart_fe_ret(cudart_fe_end(&c, e));
}

/* Dumps into buf (cap bytes, NUL included); *len the text's length. */
static cudaError_t dump(cudaLogIterator *it, char *buf, size_t cap,
                        size_t *len, unsigned flags)
{
    return (cudaError_t)gvs_remote_logs_dump(
        &fe_remote_api, CUDART_OP_LOGS_DUMP, it, buf, cap, len, flags);
}

cudaError_t cudaLogsDumpToMemory(cudaLogIterator *iterator, char *buffer,
                                 size_t *size, unsigned int flags)
{
    if (buffer == NULL || size == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(dump(iterator, buffer, *size, size, flags));
}

static cudaError_t dump_file(cudaLogIterator *it, const char *path,
                             unsigned flags)
{
    char *buf = gvs_malloc(FILE_DUMP_MAX);
    size_t len = 0;
    if (buf == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t e = dump(it, buf, FILE_DUMP_MAX, &len, flags);
    FILE *f = e == cudaSuccess ? fopen(path, "w") : NULL;
    if (e == cudaSuccess && f == NULL)
        e = cudaErrorInvalidValue;
    if (f != NULL) {
        size_t wrote = fwrite(buf, 1, len, f);
        if (fclose(f) != 0 || wrote != len)
            e = cudaErrorInvalidValue;
    }
    gvs_free(buf);
    return e;
}

cudaError_t cudaLogsDumpToFile(cudaLogIterator *iterator,
                               const char *pathToFile, unsigned int flags)
{
    if (pathToFile == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(dump_file(iterator, pathToFile, flags));
}
