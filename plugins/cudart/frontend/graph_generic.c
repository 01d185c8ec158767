/*
 * The generic node calls (cudaGraphAddNode, cudaGraphNodeSetParams,
 * cudaGraphExecNodeSetParams) for the node types the specific calls
 * cover, and conditional nodes with their handles.  Other types (external
 * semaphores, batched memory operations) are cudaErrorNotSupported.
 */
#include "graphs.h"

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"

/* Room the backend allows for a conditional's bodies (graph_cond.c). */
#define COND_SIZE_MAX 1024u

/* The specific form of a generic node's parameters; the structures it
 * points into live in *scratch. */
struct scratch {
    struct cudaKernelNodeParams kernel;
    struct cudaMemsetParams set;
    struct cudaHostNodeParams host;
};

static cudaError_t specific(const struct cudaGraphNodeParams *g,
                            struct fe_node_params *p, struct scratch *s)
{
    *p = (struct fe_node_params){.type = g->type};
    switch (g->type) {
    case cudaGraphNodeTypeKernel:
        s->kernel = (struct cudaKernelNodeParams){
            g->kernel.func,           g->kernel.gridDim,
            g->kernel.blockDim,       g->kernel.sharedMemBytes,
            g->kernel.kernelParams,   g->kernel.extra};
        p->kernel = &s->kernel;
        return cudaSuccess;
    case cudaGraphNodeTypeMemcpy:
        p->copy = &g->memcpy.copyParams;
        return cudaSuccess;
    case cudaGraphNodeTypeMemset:
        s->set = (struct cudaMemsetParams){
            g->memset.dst,         g->memset.pitch, g->memset.value,
            g->memset.elementSize, g->memset.width, g->memset.height};
        p->set = &s->set;
        return cudaSuccess;
    case cudaGraphNodeTypeHost:
        s->host = (struct cudaHostNodeParams){g->host.fn, g->host.userData};
        p->host = &s->host;
        return cudaSuccess;
    case cudaGraphNodeTypeGraph:
        /* A moved child graph would become the node's behind our ids. */
        if (g->graph.ownership != cudaGraphChildGraphOwnershipClone)
            return cudaErrorNotSupported;
        p->child = g->graph.graph;
        return cudaSuccess;
    case cudaGraphNodeTypeEventRecord:
        p->event = g->eventRecord.event;
        return cudaSuccess;
    case cudaGraphNodeTypeWaitEvent:
        p->event = g->eventWait.event;
        return cudaSuccess;
    case cudaGraphNodeTypeMemFree:
        p->dptr = g->free.dptr;
        return cudaSuccess;
    case cudaGraphNodeTypeEmpty:
        return cudaSuccess;
    default:
        return cudaErrorNotSupported;
    }
}

static int default_edges(const cudaGraphEdgeData *ed, size_t n)
{
    for (size_t i = 0; ed != NULL && i < n; i++)
        if (ed[i].from_port != 0 || ed[i].to_port != 0 || ed[i].type != 0)
            return 0;
    return 1;
}

static cudaError_t add_conditional(cudaGraphNode_t *out, cudaGraph_t graph,
                                   const cudaGraphNode_t *deps,
                                   const cudaGraphEdgeData *ed, size_t n,
                                   struct cudaConditionalNodeParams *p)
{
    struct apigen_call c;
    uint64_t node = 0;
    uint32_t nb = 0;
    if (p->size == 0 || p->size > COND_SIZE_MAX || p->phGraph_out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    e = fe_put_deps_edges(&c, deps, ed, n);
    if (e != cudaSuccess)
        return cudart_fe_end(&c, e);
    apigen_put_u64(&c, p->handle);
    apigen_put_i32(&c, p->type);
    apigen_put_u32(&c, p->size);
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_ADD_CONDITIONAL, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &node);
        apigen_get_u32(&c, &nb);
        if (c.rc == 0 && nb != p->size)
            c.rc = GVS_E_PROTO;
        for (uint32_t i = 0; c.rc == 0 && i < nb; i++) {
            uint64_t body = 0;
            apigen_get_u64(&c, &body);
            p->phGraph_out[i] = (cudaGraph_t)(uintptr_t)body;
        }
    }
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = (cudaGraphNode_t)(uintptr_t)node;
    return e;
}

static cudaError_t add_alloc_v2(cudaGraphNode_t *out, cudaGraph_t graph,
                                const cudaGraphNode_t *deps, size_t n,
                                struct cudaMemAllocNodeParamsV2 *v2)
{
    struct cudaMemAllocNodeParams p = {v2->poolProps, v2->accessDescs,
                                       v2->accessDescCount, v2->bytesize,
                                       NULL};
    cudaError_t e = fe_graph_add_alloc(out, graph, deps, n, &p);
    if (e == cudaSuccess)
        v2->dptr = p.dptr;
    return e;
}

static cudaError_t add_node(cudaGraphNode_t *out, cudaGraph_t graph,
                            const cudaGraphNode_t *deps,
                            const cudaGraphEdgeData *ed, size_t n,
                            struct cudaGraphNodeParams *g)
{
    struct fe_node_params p;
    struct scratch s;
    if (g == NULL || out == NULL)
        return cudaErrorInvalidValue;
    if (g->type == cudaGraphNodeTypeConditional)
        return add_conditional(out, graph, deps, ed, n, &g->conditional);
    /* Edge data travels for conditionals only. */
    if (!default_edges(ed, n))
        return cudaErrorNotSupported;
    if (g->type == cudaGraphNodeTypeMemAlloc)
        return add_alloc_v2(out, graph, deps, n, &g->alloc);
    cudaError_t e = specific(g, &p, &s);
    return e == cudaSuccess ? fe_graph_add_node(out, graph, deps, n, &p) : e;
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                             const cudaGraphNode_t *pDependencies,
                             const cudaGraphEdgeData *dependencyData,
                             size_t numDependencies,
                             struct cudaGraphNodeParams *nodeParams)
{
    return cudart_fe_ret(add_node(pGraphNode, graph, pDependencies,
                                  dependencyData, numDependencies,
                                  nodeParams));
}

static cudaError_t set_node(cudaGraphExec_t exec, cudaGraphNode_t node,
                            const struct cudaGraphNodeParams *g)
{
    struct fe_node_params p;
    struct scratch s;
    if (g == NULL)
        return cudaErrorInvalidValue;
    /* Allocations, frees and conditionals cannot change once made. */
    if (g->type == cudaGraphNodeTypeMemFree)
        return cudaErrorNotSupported;
    cudaError_t e = specific(g, &p, &s);
    return e == cudaSuccess ? fe_graph_set_node(exec, node, &p) : e;
}

cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node,
                                   struct cudaGraphNodeParams *nodeParams)
{
    return cudart_fe_ret(set_node(NULL, node, nodeParams));
}

cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec,
                                       cudaGraphNode_t node,
                                       struct cudaGraphNodeParams *nodeParams)
{
    return cudart_fe_ret(set_node(graphExec, node, nodeParams));
}

cudaError_t cudaGraphConditionalHandleCreate(
    cudaGraphConditionalHandle *pHandle_out, cudaGraph_t graph,
    unsigned int defaultLaunchValue, unsigned int flags)
{
    unsigned long long h = 0;
    if (pHandle_out == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_rpc_COND_HANDLE_CREATE(
        &h, fe_handle_wire(graph), defaultLaunchValue, flags);
    if (e == cudaSuccess)
        *pHandle_out = h;
    return cudart_fe_ret(e);
}
