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
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec,
                                 cudaStream_t stream);
cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec,
                                 cudaStream_t stream);
cudaError_t cudaGraphInstantiateWithParams_ptsz(
    cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
    cudaGraphInstantiateParams *instantiateParams);
#pragma GCC visibility pop

static inline uint64_t fe_handle_wire(const void *h)
{
    return (uint64_t)(uintptr_t)h;
}

/* Appends u32 n and the n node ids of deps (NULL only when n is 0):
 * cudaErrorInvalidValue otherwise, with nothing appended. */
cudaError_t fe_put_nodes(struct apigen_call *c, const cudaGraphNode_t *deps,
                         size_t n);

#endif
