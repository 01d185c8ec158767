/*
 * Stream capture.  The work of a capturing stream is captured on the
 * backend as it arrives, since every op runs there on the real stream;
 * these ops only start, end and describe the capture.  A capture's graph
 * is named to the client (STREAM_CAPTURE_INFO) before it is its own: it
 * becomes the session's when the capture ends, and is forgotten if CUDA
 * drops it instead.
 */
#include "graphs.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

/* Decodes u64 stream and makes the lane's device current; the stream's
 * CUDA handle in *s. */
static cudaError_t get_stream(struct gvs_call *call, struct apigen_call *c,
                              cudaStream_t *s)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    if (c->rc < 0)
        return cudaSuccess;
    cudaError_t e = cudart_be_enter(call);
    return e == cudaSuccess ? be_stream(call, wire, s) : e;
}

int cudart_be_stream_begin_capture(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    int32_t mode;
    cudaError_t e = get_stream(call, &c, &s);
    apigen_get_i32(&c, &mode);
    if (apigen_end(&c) < 0)
        return c.rc;
    /* A posted copy's signal held back goes first: once capturing, the
     * stream would take it into the graph (remote_be.h, shared_flush). */
    if (e == cudaSuccess)
        be_remote->shared_flush(call, &be_pinner);
    if (e == cudaSuccess)
        e = cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)mode);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_stream_end_capture(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e = get_stream(call, &c, &s);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaGraph_t in_flight = NULL, cg = NULL;
    enum cudaStreamCaptureStatus status;
    uint64_t id = 0;
    if (e == cudaSuccess &&
        cudaStreamGetCaptureInfo(s, &status, NULL, &in_flight, NULL, NULL,
                                 NULL) != cudaSuccess)
        in_flight = NULL;
    if (e == cudaSuccess)
        e = cudaStreamEndCapture(s, &cg);
    be_remote->graphs_lock();
    if (e == cudaSuccess && cg != NULL) {
        struct gvs_remote_graph *g = be_remote->graph_of(cg, 1);
        if (g != NULL) {
            id = g->id;
        } else {
            (void)cudaGraphDestroy(cg);
            e = cudaErrorMemoryAllocation;
        }
    } else if (in_flight != NULL &&
               cudaStreamIsCapturing(s, &status) == cudaSuccess &&
               status == cudaStreamCaptureStatusNone) {
        /* The capture is over without a graph: CUDA dropped it. */
        struct gvs_remote_graph *g = be_remote->graph_known(in_flight);
        if (g != NULL && !g->owned)
            be_remote->graph_forget(g);
    }
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}

int cudart_be_stream_is_capturing(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e = get_stream(call, &c, &s);
    if (apigen_end(&c) < 0)
        return c.rc;
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (e == cudaSuccess)
        e = cudaStreamIsCapturing(s, &status);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, status);
    return c.rc;
}

int cudart_be_stream_capture_info(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e = get_stream(call, &c, &s);
    if (apigen_end(&c) < 0)
        return c.rc;
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long cid = 0;
    cudaGraph_t cg = NULL;
    const cudaGraphNode_t *deps = NULL;
    size_t n = 0;
    if (e == cudaSuccess)
        e = cudaStreamGetCaptureInfo(s, &status, &cid, &cg, &deps, NULL, &n);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = NULL;
    if (e == cudaSuccess && cg != NULL &&
        (g = be_remote->graph_of(cg, 0)) == NULL)
        e = cudaErrorMemoryAllocation;
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_i32(&c, status);
        apigen_put_u64(&c, cid);
        apigen_put_u64(&c, g != NULL ? g->id : 0);
        apigen_put_u32(&c, g != NULL ? (uint32_t)n : 0);
        for (size_t i = 0; g != NULL && i < n; i++)
            apigen_put_u64(&c, be_remote->node_id(g, deps[i]));
    }
    be_remote->graphs_unlock();
    return c.rc;
}

/* Request: i32 mode; posted.  The mode is the client thread's: it takes
 * effect as each of the lane's later calls enters the lane. */
int cudart_be_lane_capture_mode(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t mode;
    apigen_get_i32(&c, &mode);
    if (apigen_end(&c) < 0)
        return c.rc;
    int rc = be_remote->set_capture_mode(call, mode);
    if (rc < 0)
        return rc;
    if (!call->noreply)
        apigen_put_i32(&c, cudaSuccess);
    return c.rc;
}

int cudart_be_stream_begin_capture_to_graph(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    uint64_t gid;
    uint32_t n;
    int32_t mode;
    cudaGraphEdgeData *edges = NULL;
    cudaError_t e = get_stream(call, &c, &s);
    apigen_get_u64(&c, &gid);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(gid);
    if (g == NULL && e == cudaSuccess)
        e = cudaErrorInvalidValue;
    cudaGraphNode_t *deps = be_get_deps_edges(&c, g, &n, &edges, &e);
    apigen_get_i32(&c, &mode);
    if (apigen_end(&c) == 0) {
        if (e == cudaSuccess)
            be_remote->shared_flush(call, &be_pinner);
        if (e == cudaSuccess)
            e = cudaStreamBeginCaptureToGraph(
                s, g->g, deps, edges, n, (enum cudaStreamCaptureMode)mode);
        apigen_put_i32(&c, e);
    }
    be_remote->graphs_unlock();
    gvs_free(deps);
    gvs_free(edges);
    return c.rc;
}

/* The dependencies must be nodes of the capture's graph. */
int cudart_be_stream_update_capture_deps(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    uint32_t flags, n;
    cudaGraphEdgeData *edges = NULL;
    cudaError_t e = get_stream(call, &c, &s);
    apigen_get_u32(&c, &flags);
    if (c.rc < 0)
        return c.rc;
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    cudaGraph_t cg = NULL;
    if (e == cudaSuccess)
        e = cudaStreamGetCaptureInfo(s, &status, NULL, &cg, NULL, NULL, NULL);
    if (e == cudaSuccess && status != cudaStreamCaptureStatusActive)
        e = cudaErrorIllegalState;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g =
        cg != NULL ? be_remote->graph_of(cg, 0) : NULL;
    if (e == cudaSuccess && g == NULL)
        e = cudaErrorMemoryAllocation;
    cudaGraphNode_t *deps = be_get_deps_edges(&c, g, &n, &edges, &e);
    if (apigen_end(&c) == 0) {
        if (e == cudaSuccess)
            e = cudaStreamUpdateCaptureDependencies(s, deps, edges, n, flags);
        apigen_put_i32(&c, e);
    }
    be_remote->graphs_unlock();
    gvs_free(deps);
    gvs_free(edges);
    return c.rc;
}
