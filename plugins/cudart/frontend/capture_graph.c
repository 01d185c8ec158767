/*
 * Capture into a graph of the program's, capture dependencies, and the
 * thread's capture mode.  CUDA keeps the mode per thread; the backend
 * runs every client thread's calls on threads of its own, so the mode
 * lives here, per client thread, and is posted to the thread's lane when
 * it changes (LANE_CAPTURE_MODE): the lane's later calls run under it.
 * The thread's mode is the layer's (gvs_remote.h), one for both APIs.
 */
#include "graphs.h"

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs_remote.h"
#include "streams.h"

#pragma GCC visibility push(default)
cudaError_t cudaStreamBeginCaptureToGraph_ptsz(
    cudaStream_t stream, cudaGraph_t graph,
    const cudaGraphNode_t *dependencies,
    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
    enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(
    cudaStream_t stream, cudaGraphNode_t *dependencies,
    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
    unsigned int flags);
#pragma GCC visibility pop

cudaError_t cudaThreadExchangeStreamCaptureMode(
    enum cudaStreamCaptureMode *mode)
{
    if (mode == NULL || *mode < cudaStreamCaptureModeGlobal ||
        *mode > cudaStreamCaptureModeRelaxed)
        return cudart_fe_ret(cudaErrorInvalidValue);
    enum cudaStreamCaptureMode old =
        (enum cudaStreamCaptureMode)gvs_remote_capture_mode();
    if (*mode != old) {
        cudaError_t e = cudart_rpc_LANE_CAPTURE_MODE(*mode);
        if (e != cudaSuccess)
            return cudart_fe_ret(e);
        gvs_remote_set_capture_mode(*mode);
    }
    *mode = old;
    return cudaSuccess;
}

static cudaError_t begin_to_graph(cudaStream_t stream, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps,
                                  const cudaGraphEdgeData *edges, size_t n,
                                  enum cudaStreamCaptureMode mode,
                                  int per_thread)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    apigen_put_u64(&c, fe_handle_wire(graph));
    e = fe_put_deps_edges(&c, deps, edges, n);
    if (e != cudaSuccess)
        return cudart_fe_end(&c, e);
    apigen_put_i32(&c, mode);
    fe_known_capture_begins();
    e = cudart_fe_run(&c, CUDART_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH,
                      APIGEN_DEVICE);
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        fe_known_capture_ends();
    return e;
}

cudaError_t cudaStreamBeginCaptureToGraph(
    cudaStream_t stream, cudaGraph_t graph,
    const cudaGraphNode_t *dependencies,
    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
    enum cudaStreamCaptureMode mode)
{
    return cudart_fe_ret(begin_to_graph(stream, graph, dependencies,
                                        dependencyData, numDependencies, mode,
                                        0));
}

cudaError_t cudaStreamBeginCaptureToGraph_ptsz(
    cudaStream_t stream, cudaGraph_t graph,
    const cudaGraphNode_t *dependencies,
    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
    enum cudaStreamCaptureMode mode)
{
    return cudart_fe_ret(begin_to_graph(stream, graph, dependencies,
                                        dependencyData, numDependencies, mode,
                                        1));
}

static cudaError_t update_deps(cudaStream_t stream, cudaGraphNode_t *deps,
                               const cudaGraphEdgeData *edges, size_t n,
                               unsigned flags, int per_thread)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(stream, per_thread));
    apigen_put_u32(&c, flags);
    e = fe_put_deps_edges(&c, deps, edges, n);
    if (e != cudaSuccess)
        return cudart_fe_end(&c, e);
    e = cudart_fe_run(&c, CUDART_OP_STREAM_UPDATE_CAPTURE_DEPS, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaStreamUpdateCaptureDependencies(
    cudaStream_t stream, cudaGraphNode_t *dependencies,
    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
    unsigned int flags)
{
    return cudart_fe_ret(update_deps(stream, dependencies, dependencyData,
                                     numDependencies, flags, 0));
}

cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(
    cudaStream_t stream, cudaGraphNode_t *dependencies,
    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
    unsigned int flags)
{
    return cudart_fe_ret(update_deps(stream, dependencies, dependencyData,
                                     numDependencies, flags, 1));
}
