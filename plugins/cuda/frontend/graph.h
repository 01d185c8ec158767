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

#endif
