/*
 * Graphs on the frontend side: capture.c (stream capture), graphs.c
 * (graphs, executable graphs, topology), graph_nodes.c (nodes and their
 * parameters).  Graph, executable graph and node handles given to the
 * program are the backend's ids (BE_H_GRAPH, BE_H_GRAPH_EXEC,
 * BE_H_GRAPH_NODE) cast to pointers.
 */
#ifndef CUDART_FE_GRAPHS_H
#define CUDART_FE_GRAPHS_H

#include "fe.h"

#pragma GCC visibility push(default)
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                        enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream,
                                      cudaGraph_t *pGraph);
cudaError_t cudaStreamIsCapturing_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus);
cudaError_t cudaStreamGetCaptureInfo_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out,
    const cudaGraphNode_t **dependencies_out,
    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out);
cudaError_t cudaGraphInstantiateWithParams_ptsz(
    cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
    cudaGraphInstantiateParams *instantiateParams);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
#pragma GCC visibility pop

static inline uint64_t fe_handle_wire(const void *h)
{
    return (uint64_t)(uintptr_t)h;
}

/* The parameters of one node of any type, as the program gave them
 * (graph_nodes.c puts them on the wire as 40-graphs.api says). */
struct fe_node_params {
    enum cudaGraphNodeType type;
    const struct cudaKernelNodeParams *kernel;
    const struct cudaMemcpy3DParms *copy;
    const struct cudaMemsetParams *set;
    const struct cudaHostNodeParams *host;
    cudaGraph_t child;
    cudaEvent_t event;
    void *dptr; /* mem free */
};

/* graph_nodes.c: adds a node (GRAPH_ADD_NODE), or sets a node's
 * parameters in exec (NULL: in its graph).  No last-error bookkeeping. */
cudaError_t fe_graph_add_node(cudaGraphNode_t *out, cudaGraph_t graph,
                              const cudaGraphNode_t *deps, size_t ndeps,
                              const struct fe_node_params *p);
cudaError_t fe_graph_set_node(cudaGraphExec_t exec, cudaGraphNode_t node,
                              const struct fe_node_params *p);

/* graph_host.c: copy nodes of host memory the worker cannot reach (the
 * layer's gvs_remote_ghost_*, gvs_remote.h).  ghost_prepare: before a
 * node's request is begun (it allocates), device memory of the node's own
 * for a copy p of such memory; cudaErrorNotSupported when the host side's
 * rows do not follow each other, both sides are such memory, or the
 * layer was told the node's graph is not known.  ghost_side: while the
 * parameters are put, turns that host side (to_dev: the source) of box
 * into that memory.  ghost_done: gvs_remote_ghost_done with the request's
 * result.  ghost_params: the program's parameters of such a node.
 * ghost_launch: cudaGraphLaunch through launch (u64 exec, u64 stream
 * handle), moving such nodes' bytes around it. */
struct fe_side;
struct fe_box;
cudaError_t fe_ghost_prepare(const struct cudaMemcpy3DParms *p);
cudaError_t fe_ghost_side(struct fe_side *host, const struct fe_box *box,
                          int to_dev);
void fe_ghost_done(uint64_t owner, uint64_t node, int exec, cudaError_t e);
int fe_ghost_params(uint64_t node, struct cudaMemcpy3DParms *out);
cudaError_t fe_ghost_launch(uint64_t exec, cudaStream_t stream, int per_thread,
                            int32_t (*launch)(uint64_t exec, uint64_t stream));

/* Appends dependencies with edge data: u32 n, n x (u64 node, u8 from
 * port, u8 to port, u8 type); edges NULL means default edges.
 * cudaErrorInvalidValue, with nothing appended, for NULL deps with n. */
cudaError_t fe_put_deps_edges(struct apigen_call *c,
                              const cudaGraphNode_t *deps,
                              const cudaGraphEdgeData *edges, size_t n);

/* node_query.c: begins a call and runs NODE_GET_PARAMS for a node of
 * type; on success the reply is positioned after the type, for the
 * caller to decode the parameters and finish with cudart_fe_end. */
cudaError_t fe_node_query(struct apigen_call *c, cudaGraphNode_t node,
                          enum cudaGraphNodeType type);

/* user_objects.c: a USER_OBJECT_DESTROY notification (u64 record id):
 * runs the program's destructor. */
void fe_user_object_destroy(struct gvs_buf *body);

/* graph_mem.c: adds a memory alloc node; p->dptr becomes its address,
 * which enters the allocation map.  No last-error bookkeeping. */
cudaError_t fe_graph_add_alloc(cudaGraphNode_t *out, cudaGraph_t graph,
                               const cudaGraphNode_t *deps, size_t n,
                               struct cudaMemAllocNodeParams *p);

/* Appends u32 n and the n node ids of deps (NULL only when n is 0):
 * cudaErrorInvalidValue otherwise, with nothing appended. */
cudaError_t fe_put_nodes(struct apigen_call *c, const cudaGraphNode_t *deps,
                         size_t n);

#endif
