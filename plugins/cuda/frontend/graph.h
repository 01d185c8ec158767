/*
 * Between the driver frontend's graph files (cuda.api, "CUDA graphs"):
 * graphs.c (lifetime, topology, instantiation, capture) and
 * graph_nodes.c (nodes and their parameters).  A CUgraph, CUgraphNode
 * or CUgraphExec here is the layer's id (remote_be.h, "Graphs").
 */
#ifndef CUDA_FE_GRAPH_H
#define CUDA_FE_GRAPH_H

#include "call.h"

static inline uint64_t cuda_fe_id(const void *handle)
{
    return (uint64_t)(uintptr_t)handle;
}

/* Appends u32 n and the n ids of nodes (NULL only when n is 0):
 * CUDA_ERROR_INVALID_VALUE for a NULL array of a nonzero count. */
CUresult cuda_fe_put_nodes(struct apigen_call *c, const CUgraphNode *nodes,
                           size_t n);

/* streams.c's capture queries that ask for the graph in flight or the
 * dependencies: the capture state of the stream of wire value stream,
 * its graph and dependencies (valid until the thread's next query). */
CUresult cuda_fe_capture_graph(uint64_t stream, CUstreamCaptureStatus *status,
                               cuuint64_t *id, CUgraph *graph,
                               const CUgraphNode **deps,
                               const CUgraphEdgeData **edges, size_t *ndeps);

/* Edge data other than the default (a full edge from port 0 to port 0)
 * is not remoted yet: CUDA_ERROR_NOT_SUPPORTED. */
CUresult cuda_fe_default_edges(const CUgraphEdgeData *e, size_t n);

/* graph_host.c: copy nodes of host memory the worker cannot reach (the
 * layer's gvs_remote_ghost_*, gvs_remote.h).  ghost_prepare: before a
 * node's request is begun (it allocates), device memory of the node's own
 * for a copy p of such memory; CUDA_ERROR_NOT_SUPPORTED when the host
 * side's rows do not follow each other, both sides are such memory, or
 * the layer was told the node's graph is not known.  ghost_side: that
 * memory for the side (to_dev: the source), 1, else 0.  ghost_done:
 * gvs_remote_ghost_done with the request's result.  ghost_params: the
 * program's parameters of such a node.  ghost_launch: cuGraphLaunch
 * through launch (u64 exec, u64 stream handle), moving such nodes' bytes
 * around it. */
CUresult cuda_fe_ghost_prepare(const CUDA_MEMCPY3D *p);
int cuda_fe_ghost_side(int to_dev, uint64_t *dev);
void cuda_fe_ghost_done(uint64_t owner, uint64_t node, int exec, CUresult r);
int cuda_fe_ghost_params(uint64_t node, CUDA_MEMCPY3D *out);
CUresult cuda_fe_ghost_launch(uint64_t exec, CUstream stream, int per_thread,
                              int32_t (*launch)(uint64_t exec, uint64_t stream));

#endif
