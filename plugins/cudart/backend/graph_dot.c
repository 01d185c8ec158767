/*
 * cudaGraphDebugDotPrint (GRAPH_DOT_PRINT): CUDA writes the DOT text into
 * a private temporary file of the worker (the layer's capture_file),
 * which goes back to the client as a blob; the client writes the file it
 * named.
 */
#include "graphs.h"

#include "cudart_be_gen.h"
#include "gvs/mem.h"

/* Larger descriptions are cudaErrorMemoryAllocation. */
#define DOT_MAX ((size_t)16 << 20)

struct dot {
    cudaGraph_t g;
    unsigned flags;
};

static int32_t write_dot(const char *path, void *arg)
{
    const struct dot *d = arg;
    return cudaGraphDebugDotPrint(d->g, path, d->flags);
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
    uint8_t *text = NULL;
    size_t len = 0;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    struct dot d = {g != NULL ? g->g : NULL, flags};
    cudaError_t e = g == NULL ? cudaErrorInvalidValue
                              : (cudaError_t)be_remote->capture_file(
                                    write_dot, &d, DOT_MAX, &text, &len);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_blob(&c, text, len);
    gvs_free(text);
    return c.rc;
}
