/*
 * Graphs and executable graphs: creation, cloning, instantiation,
 * launch, update, and the topology queries.
 */
#include "graphs.h"

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs_remote.h"
#include "streams.h"

cudaError_t fe_put_nodes(struct apigen_call *c, const cudaGraphNode_t *deps,
                         size_t n)
{
    if ((deps == NULL && n != 0) || n > UINT32_MAX)
        return cudaErrorInvalidValue;
    apigen_put_u32(c, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        apigen_put_u64(c, fe_handle_wire(deps[i]));
    return cudaSuccess;
}

cudaError_t fe_put_deps_edges(struct apigen_call *c,
                              const cudaGraphNode_t *deps,
                              const cudaGraphEdgeData *edges, size_t n)
{
    if ((deps == NULL && n != 0) || n > UINT32_MAX)
        return cudaErrorInvalidValue;
    apigen_put_u32(c, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        cudaGraphEdgeData ed =
            edges != NULL ? edges[i] : (cudaGraphEdgeData){0};
        apigen_put_u64(c, fe_handle_wire(deps[i]));
        apigen_put_u8(c, ed.from_port);
        apigen_put_u8(c, ed.to_port);
        apigen_put_u8(c, ed.type);
    }
    return cudaSuccess;
}

/* A request of one u64 handle answered by a result alone. */
static cudaError_t call_handle(uint16_t op, const void *h, unsigned flags)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(h));
    e = cudart_fe_run(&c, op, flags);
    return cudart_fe_end(&c, e);
}

/* Reads the u64 a successful reply carries into *out. */
static cudaError_t take_u64(struct apigen_call *c, cudaError_t e,
                            uint64_t *out)
{
    uint64_t v = 0;
    if (e == cudaSuccess)
        apigen_get_u64(c, &v);
    e = cudart_fe_end(c, e);
    if (e == cudaSuccess)
        *out = v;
    return e;
}

static cudaError_t graph_create(cudaGraph_t *graph, unsigned flags)
{
    struct apigen_call c;
    uint64_t id;
    if (graph == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u32(&c, flags);
    e = take_u64(&c, cudart_fe_run(&c, CUDART_OP_GRAPH_CREATE, 0), &id);
    if (e == cudaSuccess)
        *graph = (cudaGraph_t)(uintptr_t)id;
    return e;
}

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    return cudart_fe_ret(graph_create(pGraph, flags));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    cudaError_t e = call_handle(CUDART_OP_GRAPH_DESTROY, graph, 0);
    if (e == cudaSuccess)
        gvs_remote_ghost_forget(fe_handle_wire(graph));
    return cudart_fe_ret(e);
}

static cudaError_t find_in_clone(cudaGraphNode_t *out, cudaGraphNode_t orig,
                                 cudaGraph_t clone);

/* A node's counterpart in a clone, for graph_host.c (0 when not found). */
static uint64_t node_in_clone(uint64_t node, uint64_t clone)
{
    cudaGraphNode_t n = NULL;
    if (find_in_clone(&n, (cudaGraphNode_t)(uintptr_t)node,
                      (cudaGraph_t)(uintptr_t)clone) != cudaSuccess)
        return 0;
    return fe_handle_wire(n);
}

static cudaError_t graph_clone(cudaGraph_t *clone, cudaGraph_t graph)
{
    struct apigen_call c;
    uint64_t id;
    if (clone == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    e = take_u64(&c, cudart_fe_run(&c, CUDART_OP_GRAPH_CLONE, 0), &id);
    if (e == cudaSuccess) {
        gvs_remote_ghost_copy(fe_handle_wire(graph), id, 0, node_in_clone);
        *clone = (cudaGraph_t)(uintptr_t)id;
    }
    return e;
}

cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
    return cudart_fe_ret(graph_clone(pGraphClone, originalGraph));
}

/* Instantiation -------------------------------------------------------- */

static cudaError_t instantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                               unsigned long long flags, cudaStream_t upload,
                               cudaGraphInstantiateParams *params,
                               int per_thread)
{
    struct apigen_call c;
    uint64_t id = 0, err_node = 0;
    int32_t result = 0;
    if (exec == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    apigen_put_u64(&c, flags);
    apigen_put_u64(&c, fe_stream_wire(upload, per_thread));
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_INSTANTIATE, APIGEN_DEVICE);
    /* The ids and the instantiation result come with any result. */
    int replied = c.get != NULL;
    if (replied) {
        apigen_get_u64(&c, &id);
        apigen_get_i32(&c, &result);
        apigen_get_u64(&c, &err_node);
    }
    e = cudart_fe_end(&c, e);
    if (params != NULL && replied && c.rc == 0) {
        params->result_out = (cudaGraphInstantiateResult)result;
        params->errNode_out = (cudaGraphNode_t)(uintptr_t)err_node;
    }
    if (e == cudaSuccess) {
        gvs_remote_ghost_copy(fe_handle_wire(graph), id, 1, NULL);
        *exec = (cudaGraphExec_t)(uintptr_t)id;
    }
    return e;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags)
{
    return cudart_fe_ret(instantiate(pGraphExec, graph, flags, NULL, NULL, 0));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec,
                                          cudaGraph_t graph,
                                          unsigned long long flags)
{
    return cudart_fe_ret(instantiate(pGraphExec, graph, flags, NULL, NULL, 0));
}

static cudaError_t instantiate_params(cudaGraphExec_t *exec, cudaGraph_t graph,
                                      cudaGraphInstantiateParams *p,
                                      int per_thread)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    return instantiate(exec, graph, p->flags, p->uploadStream, p, per_thread);
}

cudaError_t cudaGraphInstantiateWithParams(
    cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
    cudaGraphInstantiateParams *instantiateParams)
{
    return cudart_fe_ret(
        instantiate_params(pGraphExec, graph, instantiateParams, 0));
}

cudaError_t cudaGraphInstantiateWithParams_ptsz(
    cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
    cudaGraphInstantiateParams *instantiateParams)
{
    return cudart_fe_ret(
        instantiate_params(pGraphExec, graph, instantiateParams, 1));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    cudaError_t e =
        call_handle(CUDART_OP_GRAPH_EXEC_DESTROY, graphExec, APIGEN_DEVICE);
    if (e == cudaSuccess)
        gvs_remote_ghost_forget(fe_handle_wire(graphExec));
    return cudart_fe_ret(e);
}

/* u64 exec, u64 stream -> i32 (the stream a handle, a per-thread
 * launch's default stream cudaStreamPerThread). */
static int32_t launch(uint64_t exec, uint64_t stream)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, exec);
    apigen_put_u64(&c, fe_stream_wire((cudaStream_t)(uintptr_t)stream, 0));
    e = cudart_fe_run(&c, CUDART_OP_cudaGraphLaunch, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return cudart_fe_ret(
        fe_ghost_launch(fe_handle_wire(graphExec), stream, 0, launch));
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return cudart_fe_ret(
        fe_ghost_launch(fe_handle_wire(graphExec), stream, 1, launch));
}

static cudaError_t exec_update(cudaGraphExec_t exec, cudaGraph_t graph,
                               cudaGraphExecUpdateResultInfo *info)
{
    struct apigen_call c;
    int32_t result = 0;
    uint64_t err = 0, from = 0;
    if (info == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(exec));
    apigen_put_u64(&c, fe_handle_wire(graph));
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_EXEC_UPDATE, APIGEN_DEVICE);
    /* The update's verdict comes with any result. */
    int replied = c.get != NULL;
    if (replied) {
        apigen_get_i32(&c, &result);
        apigen_get_u64(&c, &err);
        apigen_get_u64(&c, &from);
    }
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess) {
        gvs_remote_ghost_forget(fe_handle_wire(exec));
        gvs_remote_ghost_copy(fe_handle_wire(graph), fe_handle_wire(exec), 1,
                              NULL);
    }
    if (replied && c.rc == 0)
        *info = (cudaGraphExecUpdateResultInfo){
            (enum cudaGraphExecUpdateResult)result,
            (cudaGraphNode_t)(uintptr_t)err,
            (cudaGraphNode_t)(uintptr_t)from};
    return e;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                cudaGraphExecUpdateResultInfo *resultInfo)
{
    return cudart_fe_ret(exec_update(hGraphExec, hGraph, resultInfo));
}

/* Topology ---------------------------------------------------------------- */

/* Decodes u64 total, u32 n, then n entries of node ids (two per entry
 * with both_ends) and, with edges, their edge data; the arrays the
 * program gave (any may be NULL) get the first n.  *count becomes the
 * total when no array was given, else n, as CUDA's queries do. */
static void take_nodes(struct apigen_call *c, cudaGraphNode_t *a,
                       cudaGraphNode_t *b, cudaGraphEdgeData *ed,
                       int both_ends, int edges, size_t *count)
{
    uint64_t total;
    uint32_t n;
    apigen_get_u64(c, &total);
    apigen_get_u32(c, &n);
    size_t entry = (both_ends ? 16 : 8) + (edges ? 3 : 0);
    if (c->rc == 0 && (n > *count || (uint64_t)n * entry > gvs_buf_len(c->get)))
        c->rc = GVS_E_PROTO;
    for (uint32_t i = 0; i < n && c->rc == 0; i++) {
        uint64_t x, y = 0;
        cudaGraphEdgeData d = {0};
        apigen_get_u64(c, &x);
        if (both_ends)
            apigen_get_u64(c, &y);
        if (edges) {
            apigen_get_u8(c, &d.from_port);
            apigen_get_u8(c, &d.to_port);
            apigen_get_u8(c, &d.type);
        }
        if (a != NULL)
            a[i] = (cudaGraphNode_t)(uintptr_t)x;
        if (b != NULL)
            b[i] = (cudaGraphNode_t)(uintptr_t)y;
        if (ed != NULL)
            ed[i] = d;
    }
    if (c->rc < 0)
        return;
    /* As natively, the rest of a larger array is cleared. */
    for (size_t i = n; i < *count; i++) {
        if (a != NULL)
            a[i] = NULL;
        if (b != NULL)
            b[i] = NULL;
        if (ed != NULL)
            ed[i] = (cudaGraphEdgeData){0};
    }
    *count = a != NULL || b != NULL ? n : (size_t)total;
}

/* which: 0 all nodes, 1 root nodes. */
static cudaError_t graph_nodes(cudaGraph_t graph, cudaGraphNode_t *nodes,
                               size_t *count, uint8_t which)
{
    struct apigen_call c;
    if (count == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    apigen_put_u8(&c, which);
    apigen_put_u64(&c, nodes != NULL ? *count : 0);
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_NODES, 0);
    size_t got = nodes != NULL ? *count : 0;
    if (e == cudaSuccess)
        take_nodes(&c, nodes, NULL, NULL, 0, 0, &got);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *count = got;
    return e;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes,
                              size_t *numNodes)
{
    return cudart_fe_ret(graph_nodes(graph, nodes, numNodes, 0));
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph,
                                  cudaGraphNode_t *pRootNodes,
                                  size_t *pNumRootNodes)
{
    return cudart_fe_ret(graph_nodes(graph, pRootNodes, pNumRootNodes, 1));
}

static cudaError_t graph_edges(cudaGraph_t graph, cudaGraphNode_t *from,
                               cudaGraphNode_t *to, cudaGraphEdgeData *ed,
                               size_t *count)
{
    struct apigen_call c;
    if (count == NULL || (from == NULL) != (to == NULL) ||
        (ed != NULL && from == NULL))
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    apigen_put_u64(&c, from != NULL ? *count : 0);
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_EDGES, 0);
    size_t got = from != NULL ? *count : 0;
    if (e == cudaSuccess)
        take_nodes(&c, from, to, ed, 1, 1, &got);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *count = got;
    return e;
}

cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from,
                              cudaGraphNode_t *to, cudaGraphEdgeData *edgeData,
                              size_t *numEdges)
{
    return cudart_fe_ret(graph_edges(graph, from, to, edgeData, numEdges));
}

/* which: 0 dependencies, 1 dependents. */
static cudaError_t node_edges(cudaGraphNode_t node, cudaGraphNode_t *nodes,
                              cudaGraphEdgeData *ed, size_t *count,
                              uint8_t which)
{
    struct apigen_call c;
    if (count == NULL || (ed != NULL && nodes == NULL))
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(node));
    apigen_put_u8(&c, which);
    apigen_put_u64(&c, nodes != NULL ? *count : 0);
    e = cudart_fe_run(&c, CUDART_OP_NODE_EDGES, 0);
    size_t got = nodes != NULL ? *count : 0;
    if (e == cudaSuccess)
        take_nodes(&c, nodes, NULL, ed, 0, 1, &got);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *count = got;
    return e;
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node,
                                         cudaGraphNode_t *pDependencies,
                                         cudaGraphEdgeData *edgeData,
                                         size_t *pNumDependencies)
{
    return cudart_fe_ret(
        node_edges(node, pDependencies, edgeData, pNumDependencies, 0));
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node,
                                           cudaGraphNode_t *pDependentNodes,
                                           cudaGraphEdgeData *edgeData,
                                           size_t *pNumDependentNodes)
{
    return cudart_fe_ret(
        node_edges(node, pDependentNodes, edgeData, pNumDependentNodes, 1));
}

static cudaError_t node_type(cudaGraphNode_t node,
                             enum cudaGraphNodeType *type)
{
    struct apigen_call c;
    int32_t t = 0;
    if (type == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(node));
    e = cudart_fe_run(&c, CUDART_OP_NODE_GET_TYPE, 0);
    if (e == cudaSuccess)
        apigen_get_i32(&c, &t);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *type = (enum cudaGraphNodeType)t;
    return e;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node,
                                 enum cudaGraphNodeType *pType)
{
    return cudart_fe_ret(node_type(node, pType));
}

static cudaError_t find_in_clone(cudaGraphNode_t *out, cudaGraphNode_t orig,
                                 cudaGraph_t clone)
{
    struct apigen_call c;
    uint64_t id;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(orig));
    apigen_put_u64(&c, fe_handle_wire(clone));
    e = take_u64(&c, cudart_fe_run(&c, CUDART_OP_NODE_FIND_IN_CLONE, 0), &id);
    if (e == cudaSuccess)
        *out = (cudaGraphNode_t)(uintptr_t)id;
    return e;
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *pNode,
                                     cudaGraphNode_t originalNode,
                                     cudaGraph_t clonedGraph)
{
    return cudart_fe_ret(find_in_clone(pNode, originalNode, clonedGraph));
}

static cudaError_t edit_edges(cudaGraph_t graph, const cudaGraphNode_t *from,
                              const cudaGraphNode_t *to,
                              const cudaGraphEdgeData *ed, size_t n,
                              uint8_t remove)
{
    struct apigen_call c;
    if ((n != 0 && (from == NULL || to == NULL)) || n > UINT32_MAX)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    apigen_put_u8(&c, remove);
    apigen_put_u32(&c, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        cudaGraphEdgeData d = ed != NULL ? ed[i] : (cudaGraphEdgeData){0};
        apigen_put_u64(&c, fe_handle_wire(from[i]));
        apigen_put_u64(&c, fe_handle_wire(to[i]));
        apigen_put_u8(&c, d.from_port);
        apigen_put_u8(&c, d.to_port);
        apigen_put_u8(&c, d.type);
    }
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_EDIT_EDGES, 0);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph,
                                     const cudaGraphNode_t *from,
                                     const cudaGraphNode_t *to,
                                     const cudaGraphEdgeData *edgeData,
                                     size_t numDependencies)
{
    return cudart_fe_ret(
        edit_edges(graph, from, to, edgeData, numDependencies, 0));
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph,
                                        const cudaGraphNode_t *from,
                                        const cudaGraphNode_t *to,
                                        const cudaGraphEdgeData *edgeData,
                                        size_t numDependencies)
{
    return cudart_fe_ret(
        edit_edges(graph, from, to, edgeData, numDependencies, 1));
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    cudaError_t e = call_handle(CUDART_OP_NODE_DESTROY, node, 0);
    if (e == cudaSuccess)
        gvs_remote_ghost_forget_node(fe_handle_wire(node));
    return cudart_fe_ret(e);
}

static cudaError_t node_enabled(cudaGraphExec_t exec, cudaGraphNode_t node,
                                uint8_t set, unsigned in, unsigned *out)
{
    struct apigen_call c;
    uint32_t v = 0;
    if (!set && out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(exec));
    apigen_put_u64(&c, fe_handle_wire(node));
    apigen_put_u8(&c, set);
    apigen_put_u32(&c, in);
    e = cudart_fe_run(&c, CUDART_OP_NODE_ENABLED, 0);
    if (e == cudaSuccess)
        apigen_get_u32(&c, &v);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess && !set)
        *out = v;
    return e;
}

cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t hGraphExec,
                                    cudaGraphNode_t hNode,
                                    unsigned int isEnabled)
{
    return cudart_fe_ret(node_enabled(hGraphExec, hNode, 1, isEnabled, NULL));
}

cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t hGraphExec,
                                    cudaGraphNode_t hNode,
                                    unsigned int *isEnabled)
{
    return cudart_fe_ret(node_enabled(hGraphExec, hNode, 0, 0, isEnabled));
}
