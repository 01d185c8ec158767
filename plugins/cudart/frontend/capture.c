/*
 * Stream capture.  Work issued to a capturing stream is captured by the
 * backend, where it runs on the real stream; these calls only start, end
 * and describe the capture.
 */
#include "graphs.h"

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "streams.h"

/* Ops taking a stream (and maybe a mode) and answering a result. */
static cudaError_t begin(cudaStream_t stream, enum cudaStreamCaptureMode mode,
                         int per_thread)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    apigen_put_i32(&c, mode);
    fe_known_capture_begins();
    e = cudart_fe_run(&c, CUDART_OP_STREAM_BEGIN_CAPTURE, APIGEN_DEVICE);
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        fe_known_capture_ends();
    return e;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                   enum cudaStreamCaptureMode mode)
{
    return cudart_fe_ret(begin(stream, mode, 0));
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                        enum cudaStreamCaptureMode mode)
{
    return cudart_fe_ret(begin(stream, mode, 1));
}

/* Whether END_CAPTURE answering e ended a capture: it does when it
 * succeeds and when the capture was invalidated or left unjoined; other
 * failures name no capture of the calling thread, which goes on. */
static int capture_ended(cudaError_t e)
{
    return e == cudaSuccess || e == cudaErrorStreamCaptureInvalidated ||
           e == cudaErrorStreamCaptureUnjoined;
}

static cudaError_t end(cudaStream_t stream, cudaGraph_t *graph,
                       int per_thread)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (graph == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    e = cudart_fe_run(&c, CUDART_OP_STREAM_END_CAPTURE, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &id);
    e = cudart_fe_end(&c, e);
    if (capture_ended(e))
        fe_known_capture_ends();
    /* As natively, a failed capture leaves no graph behind. */
    *graph = e == cudaSuccess ? (cudaGraph_t)(uintptr_t)id : NULL;
    return e;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return cudart_fe_ret(end(stream, pGraph, 0));
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return cudart_fe_ret(end(stream, pGraph, 1));
}

static cudaError_t is_capturing(cudaStream_t stream,
                                enum cudaStreamCaptureStatus *status,
                                int per_thread)
{
    struct apigen_call c;
    int32_t st = 0;
    if (status == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    e = cudart_fe_run(&c, CUDART_OP_STREAM_IS_CAPTURING, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_i32(&c, &st);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *status = (enum cudaStreamCaptureStatus)st;
    return e;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                  enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return cudart_fe_ret(is_capturing(stream, pCaptureStatus, 0));
}

cudaError_t cudaStreamIsCapturing_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return cudart_fe_ret(is_capturing(stream, pCaptureStatus, 1));
}

/* The dependency arrays handed out stay valid until the thread's next
 * query, as CUDA's stay valid until the stream's next call. */
static _Thread_local cudaGraphNode_t *deps_seen;
static _Thread_local cudaGraphEdgeData *edges_seen;
static _Thread_local size_t deps_room;

static cudaError_t deps_make_room(size_t n)
{
    if (n <= deps_room)
        return cudaSuccess;
    cudaGraphNode_t *d = gvs_realloc(deps_seen, n * sizeof(*d));
    if (d == NULL)
        return cudaErrorMemoryAllocation;
    deps_seen = d;
    cudaGraphEdgeData *ed = gvs_realloc(edges_seen, n * sizeof(*ed));
    if (ed == NULL)
        return cudaErrorMemoryAllocation;
    edges_seen = ed;
    deps_room = n;
    return cudaSuccess;
}

struct capture_info {
    int32_t status;
    uint64_t id, graph;
    uint32_t n;
};

static cudaError_t capture_info(cudaStream_t stream,
                                enum cudaStreamCaptureStatus *status_out,
                                unsigned long long *id_out,
                                cudaGraph_t *graph_out,
                                const cudaGraphNode_t **deps_out,
                                const cudaGraphEdgeData **edges_out,
                                size_t *n_out, int per_thread)
{
    struct apigen_call c;
    struct capture_info ci = {0};
    if (status_out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    e = cudart_fe_run(&c, CUDART_OP_STREAM_CAPTURE_INFO, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_i32(&c, &ci.status);
        apigen_get_u64(&c, &ci.id);
        apigen_get_u64(&c, &ci.graph);
        apigen_get_u32(&c, &ci.n);
        /* Each id takes 8 bytes of the reply. */
        if (c.rc == 0 && (uint64_t)ci.n * 8 > gvs_buf_len(c.get))
            c.rc = GVS_E_PROTO;
        if (c.rc == 0)
            e = deps_make_room(ci.n);
        for (uint32_t i = 0; e == cudaSuccess && i < ci.n; i++) {
            uint64_t node = 0;
            apigen_get_u64(&c, &node);
            deps_seen[i] = (cudaGraphNode_t)(uintptr_t)node;
            edges_seen[i] = (cudaGraphEdgeData){0};
        }
    }
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    *status_out = (enum cudaStreamCaptureStatus)ci.status;
    if (id_out != NULL)
        *id_out = ci.id;
    if (graph_out != NULL)
        *graph_out = (cudaGraph_t)(uintptr_t)ci.graph;
    if (deps_out != NULL)
        *deps_out = ci.n ? deps_seen : NULL;
    if (edges_out != NULL)
        *edges_out = ci.n ? edges_seen : NULL;
    if (n_out != NULL)
        *n_out = ci.n;
    return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out,
    const cudaGraphNode_t **dependencies_out,
    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return cudart_fe_ret(capture_info(stream, captureStatus_out, id_out,
                                      graph_out, dependencies_out,
                                      edgeData_out, numDependencies_out, 0));
}

cudaError_t cudaStreamGetCaptureInfo_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out,
    const cudaGraphNode_t **dependencies_out,
    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return cudart_fe_ret(capture_info(stream, captureStatus_out, id_out,
                                      graph_out, dependencies_out,
                                      edgeData_out, numDependencies_out, 1));
}
