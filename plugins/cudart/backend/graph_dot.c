/*
 * cudaGraphDebugDotPrint (GRAPH_DOT_PRINT): CUDA writes the DOT text into
 * a private temporary file of the worker, which goes back to the client
 * as a blob and is removed; the client writes the file it named.
 */
#include "graphs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudart_be_gen.h"
#include "gvs/mem.h"

/* Larger descriptions are cudaErrorMemoryAllocation. */
#define DOT_MAX ((size_t)16 << 20)

static cudaError_t read_all(int fd, uint8_t **out, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < 0)
        return cudaErrorUnknown;
    if ((size_t)st.st_size > DOT_MAX)
        return cudaErrorMemoryAllocation;
    uint8_t *b = gvs_malloc((size_t)st.st_size + 1);
    if (b == NULL)
        return cudaErrorMemoryAllocation;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
        if (n <= 0) {
            gvs_free(b);
            return cudaErrorUnknown;
        }
        got += (size_t)n;
    }
    *out = b;
    *len = got;
    return cudaSuccess;
}

int cudart_be_graph_dot_print(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t flags;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    uint8_t *text = NULL;
    size_t len = 0;
    int fd = -1;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    cudaError_t e = g != NULL ? cudaSuccess : cudaErrorInvalidValue;
    if (e == cudaSuccess &&
        snprintf(path, sizeof(path), "%s/gvs-dot-XXXXXX",
                 dir != NULL && *dir != '\0' ? dir : "/tmp") >=
            (int)sizeof(path))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && (fd = mkstemp(path)) < 0)
        e = cudaErrorOperatingSystem;
    if (e == cudaSuccess)
        e = cudaGraphDebugDotPrint(g->g, path, flags);
    be_remote->graphs_unlock();
    if (e == cudaSuccess)
        e = read_all(fd, &text, &len);
    if (fd >= 0) {
        (void)unlink(path);
        (void)close(fd);
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_blob(&c, text, len);
    gvs_free(text);
    return c.rc;
}
