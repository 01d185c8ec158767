/*
 * cudaGraphDebugDotPrint: CUDA writes the description on the backend,
 * into a file of its own; the text comes back (GRAPH_DOT_PRINT) and is
 * written here, to the program's path.
 */
#include "graphs.h"

#include "cudart_ops.h"
#include "gvs_remote.h"

static cudaError_t dot_print(cudaGraph_t graph, const char *path,
                             unsigned flags)
{
    struct apigen_call c;
    const uint8_t *text = NULL;
    size_t len = 0;
    if (path == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    apigen_put_u32(&c, flags);
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_DOT_PRINT, 0);
    if (e == cudaSuccess)
        apigen_get_blob(&c, &text, &len);
    if (e == cudaSuccess && c.rc == 0 &&
        gvs_remote_write_file(path, text, len) < 0)
        e = cudaErrorOperatingSystem;
    return cudart_fe_end(&c, e);
}

cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path,
                                   unsigned int flags)
{
    return cudart_fe_ret(dot_print(graph, path, flags));
}
