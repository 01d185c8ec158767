/* CUDA graphs and stream capture (cuda.api, "CUDA graphs"): lifetime,
 * topology, instantiation and capture; launches and the rest are
 * generated. */
#include "graph.h"

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (phGraph == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u32(&c, flags);
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_CREATE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &id);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *phGraph = (CUgraph)(uintptr_t)id;
    return r;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
    const uint64_t in[] = {cuda_fe_id(hGraph)};
    return cuda_fe_call_ids(CUDA_OP_GRAPH_DESTROY, in, 1, NULL);
}

CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    const uint64_t in[] = {cuda_fe_id(originalGraph)};
    if (phGraphClone == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return cuda_fe_call_ids(CUDA_OP_GRAPH_CLONE, in, 1, (uint64_t *)phGraphClone);
}

CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode,
                                CUgraph hClonedGraph)
{
    const uint64_t in[] = {cuda_fe_id(hOriginalNode),
                           cuda_fe_id(hClonedGraph)};
    if (phNode == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return cuda_fe_call_ids(CUDA_OP_NODE_FIND_IN_CLONE, in, 2, (uint64_t *)phNode);
}

CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
    const uint64_t in[] = {cuda_fe_id(hNode)};
    return cuda_fe_call_ids(CUDA_OP_NODE_DESTROY, in, 1, NULL);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                     unsigned long long flags)
{
    const uint64_t in[] = {cuda_fe_id(hGraph), flags};
    if (phGraphExec == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return cuda_fe_call_ids(CUDA_OP_GRAPH_INSTANTIATE, in, 2, (uint64_t *)phGraphExec);
}

/* An upload asked for is the stream's next work, as the driver does it. */
static CUresult instantiate_params(CUgraphExec *x, CUgraph g,
                                   CUDA_GRAPH_INSTANTIATE_PARAMS *p,
                                   int per_thread)
{
    if (x == NULL || p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = NULL;
    CUresult r = cuGraphInstantiateWithFlags(
        x, g, p->flags & ~(cuuint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
    if (r == CUDA_SUCCESS && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
        r = per_thread ? cuGraphUpload_ptsz(*x, p->hUploadStream)
                       : cuGraphUpload(*x, p->hUploadStream);
    p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS
                                      : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}

CUresult cuGraphInstantiateWithParams(
    CUgraphExec *phGraphExec, CUgraph hGraph,
    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams, 0);
}

CUresult cuGraphInstantiateWithParams_ptsz(
    CUgraphExec *phGraphExec, CUgraph hGraph,
    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams, 1);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    const uint64_t in[] = {cuda_fe_id(hGraphExec)};
    return cuda_fe_call_ids(CUDA_OP_GRAPH_EXEC_DESTROY, in, 1, NULL);
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                              CUgraphExecUpdateResultInfo *resultInfo)
{
    struct apigen_call c;
    int32_t result = 0;
    uint64_t err = 0, from = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (resultInfo == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(hGraphExec));
    apigen_put_u64(&c, cuda_fe_id(hGraph));
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_EXEC_UPDATE, APIGEN_DEVICE);
    /* The result info comes with a failed update too. */
    if (c.rc == 0 && gvs_buf_len(c.get) > 0) {
        apigen_get_i32(&c, &result);
        apigen_get_u64(&c, &err);
        apigen_get_u64(&c, &from);
    }
    r = cuda_fe_end(&c, r);
    resultInfo->result = (CUgraphExecUpdateResult)result;
    resultInfo->errorNode = (CUgraphNode)(uintptr_t)err;
    resultInfo->errorFromNode = (CUgraphNode)(uintptr_t)from;
    return r;
}

static CUresult end_capture(CUstream s, CUgraph *g, int per_thread)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (g == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_stream_wire(s, per_thread));
    r = cuda_fe_run(&c, CUDA_OP_STREAM_END_CAPTURE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &id);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *g = (CUgraph)(uintptr_t)id;
    return r;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, phGraph, 0);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, phGraph, 1);
}

/* Lists a graph's nodes (which 0) or root nodes (1): the count where
 * nodes is NULL, else at most *n of them and the count written. */
static CUresult list(CUgraph g, uint8_t which, CUgraphNode *nodes, size_t *n)
{
    struct apigen_call c;
    uint64_t total = 0;
    uint32_t got = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(g));
    apigen_put_u8(&c, which);
    apigen_put_u64(&c, nodes != NULL ? *n : 0);
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_NODES, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(&c, &total);
        apigen_get_u32(&c, &got);
        if (nodes != NULL && got > *n)
            c.rc = GVS_E_PROTO;
        for (uint32_t i = 0; i < got && c.rc == 0; i++) {
            uint64_t id;
            apigen_get_u64(&c, &id);
            nodes[i] = (CUgraphNode)(uintptr_t)id;
        }
    }
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    /* The driver writes the count it filled, which is fewer where the
     * array is shorter than the graph. */
    *n = nodes != NULL ? got : total;
    return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    return list(hGraph, 0, nodes, numNodes);
}

CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes,
                             size_t *numRootNodes)
{
    return list(hGraph, 1, rootNodes, numRootNodes);
}

static CUresult edit_edges(CUgraph g, uint8_t remove, const CUgraphNode *from,
                           const CUgraphNode *to, size_t n)
{
    struct apigen_call c;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(g));
    apigen_put_u8(&c, remove);
    r = cuda_fe_put_nodes(&c, from, n);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_put_nodes(&c, to, n);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_run(&c, CUDA_OP_GRAPH_EDIT_EDGES, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

/* The _v2 forms: edge data, the default only. */
static CUresult edit_edges_v2(CUgraph g, uint8_t remove,
                              const CUgraphNode *from, const CUgraphNode *to,
                              const CUgraphEdgeData *e, size_t n)
{
    CUresult r = cuda_fe_default_edges(e, n);
    return r != CUDA_SUCCESS ? r : edit_edges(g, remove, from, to, n);
}

CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from,
                                const CUgraphNode *to,
                                size_t numDependencies)
{
    return edit_edges(hGraph, 0, from, to, numDependencies);
}

CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from,
                                   const CUgraphNode *to,
                                   const CUgraphEdgeData *edgeData,
                                   size_t numDependencies)
{
    return edit_edges_v2(hGraph, 0, from, to, edgeData, numDependencies);
}

CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from,
                                   const CUgraphNode *to,
                                   size_t numDependencies)
{
    return edit_edges(hGraph, 1, from, to, numDependencies);
}

CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from,
                                      const CUgraphNode *to,
                                      const CUgraphEdgeData *edgeData,
                                      size_t numDependencies)
{
    return edit_edges_v2(hGraph, 1, from, to, edgeData, numDependencies);
}
