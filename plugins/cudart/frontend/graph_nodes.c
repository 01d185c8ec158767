/*
 * Graph nodes: adding them, and setting their parameters in a graph or
 * in an executable graph.  Parameters travel as 40-graphs.api describes:
 * a kernel as its module and index with its arguments packed by its
 * layout, as a launch; copies between device memory, arrays, and host
 * memory shared with the backend (page-locked memory over shm:// and
 * unix://, which the worker maps and pins: the node reads and writes it
 * there, as natively).  Other host memory is the program's, which a
 * graph running on the backend cannot reach: cudaErrorNotSupported.
 */
#include "graphs.h"

#include "cudart_ops.h"
#include "gvs_remote.h"
#include "kernels.h"
#include "mem3d.h"
#include "streams.h"

static cudaError_t put_kernel(struct apigen_call *c,
                              const struct cudaKernelNodeParams *k)
{
    uint8_t params[FE_PARAM_MAX];
    struct fe_func *f;
    uint32_t module;
    if (k == NULL)
        return cudaErrorInvalidValue;
    /* Arguments in the "extra" form have no layout to pack them by. */
    if (k->extra != NULL)
        return cudaErrorNotSupported;
    cudaError_t e = fe_kernel_resolve(k->func, &f, &module);
    if (e == cudaSuccess)
        e = fe_kernel_pack(f, k->kernelParams, params);
    if (e != cudaSuccess)
        return e;
    fe_put_kernel(c, f, module);
    apigen_put_u32(c, k->gridDim.x);
    apigen_put_u32(c, k->gridDim.y);
    apigen_put_u32(c, k->gridDim.z);
    apigen_put_u32(c, k->blockDim.x);
    apigen_put_u32(c, k->blockDim.y);
    apigen_put_u32(c, k->blockDim.z);
    apigen_put_u32(c, k->sharedMemBytes);
    apigen_put_blob(c, params, f->param_bytes);
    return cudaSuccess;
}

/* A host side names shared memory, where it starts in a region shared
 * with the backend (which checks that all its rows lie there); other
 * host memory, device memory of the node's own (graph_host.c). */
static cudaError_t node_host_side(struct fe_side *s, const struct fe_box *box,
                                  int to_dev)
{
    if (s->kind != FE_SIDE_HOST)
        return cudaSuccess;
    if (!gvs_remote_host_shared((const void *)(uintptr_t)s->addr, 1))
        return fe_ghost_side(s, box, to_dev);
    s->kind = FE_SIDE_SHARED;
    return cudaSuccess;
}

static cudaError_t put_copy(struct apigen_call *c,
                            const struct cudaMemcpy3DParms *p)
{
    struct fe_side dst, src;
    struct fe_box box;
    cudaError_t e = fe_copy3d_params(p, &dst, &src, &box);
    if (e != cudaSuccess)
        return e;
    e = node_host_side(&dst, &box, 0);
    if (e == cudaSuccess)
        e = node_host_side(&src, &box, 1);
    if (e != cudaSuccess)
        return e;
    fe_put_side(c, &dst);
    fe_put_side(c, &src);
    fe_put_box(c, &box);
    return cudaSuccess;
}

static cudaError_t put_set(struct apigen_call *c,
                           const struct cudaMemsetParams *s)
{
    if (s == NULL)
        return cudaErrorInvalidValue;
    apigen_put_u64(c, (uint64_t)(uintptr_t)s->dst);
    apigen_put_u64(c, s->pitch);
    apigen_put_u32(c, s->value);
    apigen_put_u32(c, s->elementSize);
    apigen_put_u64(c, s->width);
    apigen_put_u64(c, s->height);
    return cudaSuccess;
}

static cudaError_t put_host(struct apigen_call *c,
                            const struct cudaHostNodeParams *h)
{
    if (h == NULL || h->fn == NULL)
        return cudaErrorInvalidValue;
    uint64_t id = fe_callback_persistent(h->fn, h->userData);
    if (id == 0)
        return cudaErrorMemoryAllocation;
    apigen_put_u64(c, id);
    return cudaSuccess;
}

/* A node of a child graph is not the program's to name in its parent. */
static uint64_t unaddressable(uint64_t node, uint64_t to)
{
    (void)node, (void)to;
    return 0;
}

static cudaError_t put_params(struct apigen_call *c,
                              const struct fe_node_params *p)
{
    apigen_put_u8(c, (uint8_t)p->type);
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        return put_kernel(c, p->kernel);
    case cudaGraphNodeTypeMemcpy:
        return put_copy(c, p->copy);
    case cudaGraphNodeTypeMemset:
        return put_set(c, p->set);
    case cudaGraphNodeTypeHost:
        return put_host(c, p->host);
    case cudaGraphNodeTypeGraph:
        apigen_put_u64(c, fe_handle_wire(p->child));
        return cudaSuccess;
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent:
        apigen_put_u64(c, fe_handle_wire(p->event));
        return cudaSuccess;
    case cudaGraphNodeTypeMemFree:
        apigen_put_u64(c, (uint64_t)(uintptr_t)p->dptr);
        return cudaSuccess;
    default:
        return cudaSuccess;
    }
}

/* Begins a node's request: a copy of host memory the worker cannot reach
 * gets its device memory first (graph_host.c), which a failure frees. */
static cudaError_t begin_node(struct apigen_call *c,
                              const struct fe_node_params *p)
{
    cudaError_t e = p->type == cudaGraphNodeTypeMemcpy
                        ? fe_ghost_prepare(p->copy)
                        : cudaSuccess;
    if (e == cudaSuccess)
        e = cudart_fe_begin(c);
    if (e != cudaSuccess)
        fe_ghost_done(0, 0, 0, e);
    return e;
}

cudaError_t fe_graph_add_node(cudaGraphNode_t *out, cudaGraph_t graph,
                                const cudaGraphNode_t *deps, size_t ndeps,
                              const struct fe_node_params *p)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = begin_node(&c, p);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    e = fe_put_nodes(&c, deps, ndeps);
    if (e == cudaSuccess)
        e = put_params(&c, p);
    if (e == cudaSuccess) {
        e = cudart_fe_run(&c, CUDART_OP_GRAPH_ADD_NODE, APIGEN_DEVICE);
        if (e == cudaSuccess)
            apigen_get_u64(&c, &id);
        e = cudart_fe_end(&c, e);
    }
    fe_ghost_done(fe_handle_wire(graph), id, 0, e);
    if (e == cudaSuccess && p->type == cudaGraphNodeTypeGraph)
        gvs_remote_ghost_copy(fe_handle_wire(p->child), fe_handle_wire(graph), 0,
                      unaddressable);
    if (e == cudaSuccess)
        *out = (cudaGraphNode_t)(uintptr_t)id;
    return e;
}

cudaError_t fe_graph_set_node(cudaGraphExec_t exec, cudaGraphNode_t node,
                              const struct fe_node_params *p)
{
    struct apigen_call c;
    /* A graph's node: its graph is known here only when it already
     * copies host memory of the program's. */
    uint64_t owner = exec != NULL ? fe_handle_wire(exec)
                                  : gvs_remote_ghost_graph_of(fe_handle_wire(node));
    gvs_remote_ghost_stageable(owner != 0);
    cudaError_t e = begin_node(&c, p);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(exec));
    apigen_put_u64(&c, fe_handle_wire(node));
    e = put_params(&c, p);
    if (e == cudaSuccess) {
        e = cudart_fe_run(&c, CUDART_OP_NODE_SET_PARAMS, APIGEN_DEVICE);
        e = cudart_fe_end(&c, e);
    }
    fe_ghost_done(owner, fe_handle_wire(node), exec != NULL, e);
    return e;
}

/* The entry points below differ only in the parameters they carry: each
 * names its node type and union member in a compound literal. */
static cudaError_t add_node(cudaGraphNode_t *out, cudaGraph_t graph,
                            const cudaGraphNode_t *deps, size_t ndeps,
                            struct fe_node_params p)
{
    return cudart_fe_ret(fe_graph_add_node(out, graph, deps, ndeps, &p));
}

static cudaError_t set_node(cudaGraphExec_t exec, cudaGraphNode_t node,
                            struct fe_node_params p)
{
    return cudart_fe_ret(fe_graph_set_node(exec, node, &p));
}

/* Kernel nodes ------------------------------------------------------------ */

cudaError_t cudaGraphAddKernelNode(
    cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
    const cudaGraphNode_t *pDependencies, size_t numDependencies,
    const struct cudaKernelNodeParams *pNodeParams)
{
    return add_node(pGraphNode, graph, pDependencies, numDependencies,
                    (struct fe_node_params){.type = cudaGraphNodeTypeKernel,
                                            .kernel = pNodeParams});
}

cudaError_t cudaGraphKernelNodeSetParams(
    cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams)
{
    return set_node(NULL, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeKernel,
                                            .kernel = pNodeParams});
}

cudaError_t cudaGraphExecKernelNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
    const struct cudaKernelNodeParams *pNodeParams)
{
    return set_node(hGraphExec, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeKernel,
                                            .kernel = pNodeParams});
}

/* Memcpy nodes ------------------------------------------------------------ */

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode,
                                   cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies,
                                   const struct cudaMemcpy3DParms *pCopyParams)
{
    return add_node(pGraphNode, graph, pDependencies, numDependencies,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemcpy,
                                            .copy = pCopyParams});
}

cudaError_t cudaGraphMemcpyNodeSetParams(
    cudaGraphNode_t node, const struct cudaMemcpy3DParms *pNodeParams)
{
    return set_node(NULL, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemcpy,
                                            .copy = pNodeParams});
}

cudaError_t cudaGraphExecMemcpyNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
    const struct cudaMemcpy3DParms *pNodeParams)
{
    return set_node(hGraphExec, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemcpy,
                                            .copy = pNodeParams});
}

/* A 1D copy is a 3D one of count bytes. */
static struct cudaMemcpy3DParms copy_1d(void *dst, const void *src,
                                        size_t count, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p = {0};
    p.dstPtr = (struct cudaPitchedPtr){dst, count, count, 1};
    p.srcPtr = (struct cudaPitchedPtr){(void *)src, count, count, 1};
    p.extent = (struct cudaExtent){count, 1, 1};
    p.kind = kind;
    return p;
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode,
                                     cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies,
                                     size_t numDependencies, void *dst,
                                     const void *src, size_t count,
                                     enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms cp = copy_1d(dst, src, count, kind);
    return add_node(pGraphNode, graph, pDependencies, numDependencies,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemcpy,
                                            .copy = &cp});
}

cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst,
                                           const void *src, size_t count,
                                           enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms cp = copy_1d(dst, src, count, kind);
    return set_node(NULL, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemcpy,
                                            .copy = &cp});
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec,
                                               cudaGraphNode_t node, void *dst,
                                               const void *src, size_t count,
                                               enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms cp = copy_1d(dst, src, count, kind);
    return set_node(hGraphExec, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemcpy,
                                            .copy = &cp});
}

/* Memset nodes ------------------------------------------------------------ */

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode,
                                   cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies,
                                   const struct cudaMemsetParams *pMemsetParams)
{
    return add_node(pGraphNode, graph, pDependencies, numDependencies,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemset,
                                            .set = pMemsetParams});
}

cudaError_t cudaGraphMemsetNodeSetParams(
    cudaGraphNode_t node, const struct cudaMemsetParams *pNodeParams)
{
    return set_node(NULL, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemset,
                                            .set = pNodeParams});
}

cudaError_t cudaGraphExecMemsetNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
    const struct cudaMemsetParams *pNodeParams)
{
    return set_node(hGraphExec, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeMemset,
                                            .set = pNodeParams});
}

/* Host nodes -------------------------------------------------------------- */

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode,
                                 cudaGraph_t graph,
                                 const cudaGraphNode_t *pDependencies,
                                 size_t numDependencies,
                                 const struct cudaHostNodeParams *pNodeParams)
{
    return add_node(pGraphNode, graph, pDependencies, numDependencies,
                    (struct fe_node_params){.type = cudaGraphNodeTypeHost,
                                            .host = pNodeParams});
}

cudaError_t cudaGraphHostNodeSetParams(
    cudaGraphNode_t node, const struct cudaHostNodeParams *pNodeParams)
{
    return set_node(NULL, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeHost,
                                            .host = pNodeParams});
}

cudaError_t cudaGraphExecHostNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
    const struct cudaHostNodeParams *pNodeParams)
{
    return set_node(hGraphExec, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeHost,
                                            .host = pNodeParams});
}

/* Empty, child graph and event nodes ------------------------------------ */

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode,
                                  cudaGraph_t graph,
                                  const cudaGraphNode_t *pDependencies,
                                  size_t numDependencies)
{
    return add_node(pGraphNode, graph, pDependencies, numDependencies,
                    (struct fe_node_params){.type = cudaGraphNodeTypeEmpty});
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode,
                                       cudaGraph_t graph,
                                       const cudaGraphNode_t *pDependencies,
                                       size_t numDependencies,
                                       cudaGraph_t childGraph)
{
    return add_node(pGraphNode, graph, pDependencies, numDependencies,
                    (struct fe_node_params){.type = cudaGraphNodeTypeGraph,
                                            .child = childGraph});
}

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t hGraphExec,
                                                 cudaGraphNode_t node,
                                                 cudaGraph_t childGraph)
{
    return set_node(hGraphExec, node,
                    (struct fe_node_params){.type = cudaGraphNodeTypeGraph,
                                            .child = childGraph});
}

static cudaError_t add_event_node(cudaGraphNode_t *out, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t n,
                                  cudaEvent_t event,
                                  enum cudaGraphNodeType type)
{
    struct fe_node_params p = {.type = type, .event = event};
    return fe_graph_add_node(out, graph, deps, n, &p);
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode,
                                        cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies,
                                        size_t numDependencies,
                                        cudaEvent_t event)
{
    return cudart_fe_ret(add_event_node(pGraphNode, graph, pDependencies,
                                        numDependencies, event,
                                        cudaGraphNodeTypeEventRecord));
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode,
                                      cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies,
                                      size_t numDependencies,
                                      cudaEvent_t event)
{
    return cudart_fe_ret(add_event_node(pGraphNode, graph, pDependencies,
                                        numDependencies, event,
                                        cudaGraphNodeTypeWaitEvent));
}

static cudaError_t set_event(cudaGraphExec_t exec, cudaGraphNode_t node,
                             cudaEvent_t event, enum cudaGraphNodeType type)
{
    struct fe_node_params p = {.type = type, .event = event};
    return fe_graph_set_node(exec, node, &p);
}

cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node,
                                             cudaEvent_t event)
{
    return cudart_fe_ret(
        set_event(NULL, node, event, cudaGraphNodeTypeEventRecord));
}

cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node,
                                           cudaEvent_t event)
{
    return cudart_fe_ret(
        set_event(NULL, node, event, cudaGraphNodeTypeWaitEvent));
}

cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t hGraphExec,
                                                 cudaGraphNode_t hNode,
                                                 cudaEvent_t event)
{
    return cudart_fe_ret(
        set_event(hGraphExec, hNode, event, cudaGraphNodeTypeEventRecord));
}

cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t hGraphExec,
                                               cudaGraphNode_t hNode,
                                               cudaEvent_t event)
{
    return cudart_fe_ret(
        set_event(hGraphExec, hNode, event, cudaGraphNodeTypeWaitEvent));
}

/* Symbol copies: a 1D copy at the global's device address. */
static cudaError_t symbol_copy(const void *symbol, size_t count,
                               size_t offset, void **addr)
{
    struct fe_symbol sym;
    cudaError_t e = fe_symbol_resolve(symbol, &sym);
    if (e != cudaSuccess)
        return e;
    if (offset > sym.size || count > sym.size - offset)
        return cudaErrorInvalidValue;
    *addr = (void *)(uintptr_t)(sym.addr + offset);
    return cudaSuccess;
}

static cudaError_t to_symbol(cudaGraphExec_t exec, cudaGraphNode_t *out,
                             cudaGraph_t graph, const cudaGraphNode_t *deps,
                             size_t ndeps, cudaGraphNode_t node,
                             const void *symbol, const void *src,
                             size_t count, size_t offset,
                             enum cudaMemcpyKind kind)
{
    void *dst;
    cudaError_t e = symbol_copy(symbol, count, offset, &dst);
    if (e != cudaSuccess)
        return e;
    struct cudaMemcpy3DParms cp = copy_1d(dst, src, count, kind);
    struct fe_node_params p = {.type = cudaGraphNodeTypeMemcpy, .copy = &cp};
    return node == NULL
               ? fe_graph_add_node(out, graph, deps, ndeps, &p)
               : fe_graph_set_node(exec, node, &p);
}

static cudaError_t from_symbol(cudaGraphExec_t exec, cudaGraphNode_t *out,
                               cudaGraph_t graph, const cudaGraphNode_t *deps,
                               size_t ndeps, cudaGraphNode_t node, void *dst,
                               const void *symbol, size_t count,
                               size_t offset, enum cudaMemcpyKind kind)
{
    void *src;
    cudaError_t e = symbol_copy(symbol, count, offset, &src);
    if (e != cudaSuccess)
        return e;
    struct cudaMemcpy3DParms cp = copy_1d(dst, src, count, kind);
    struct fe_node_params p = {.type = cudaGraphNodeTypeMemcpy, .copy = &cp};
    return node == NULL
               ? fe_graph_add_node(out, graph, deps, ndeps, &p)
               : fe_graph_set_node(exec, node, &p);
}

cudaError_t cudaGraphAddMemcpyNodeToSymbol(
    cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
    const cudaGraphNode_t *pDependencies, size_t numDependencies,
    const void *symbol, const void *src, size_t count, size_t offset,
    enum cudaMemcpyKind kind)
{
    if (pGraphNode == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(to_symbol(NULL, pGraphNode, graph, pDependencies,
                                   numDependencies, NULL, symbol, src, count,
                                   offset, kind));
}

cudaError_t cudaGraphAddMemcpyNodeFromSymbol(
    cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
    const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
    const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    if (pGraphNode == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(from_symbol(NULL, pGraphNode, graph, pDependencies,
                                     numDependencies, NULL, dst, symbol,
                                     count, offset, kind));
}

cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node,
                                                 const void *symbol,
                                                 const void *src, size_t count,
                                                 size_t offset,
                                                 enum cudaMemcpyKind kind)
{
    if (node == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(to_symbol(NULL, NULL, NULL, NULL, 0, node, symbol,
                                   src, count, offset, kind));
}

cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node,
                                                   void *dst,
                                                   const void *symbol,
                                                   size_t count, size_t offset,
                                                   enum cudaMemcpyKind kind)
{
    if (node == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(from_symbol(NULL, NULL, NULL, NULL, 0, node, dst,
                                     symbol, count, offset, kind));
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const void *symbol,
    const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    if (node == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(to_symbol(hGraphExec, NULL, NULL, NULL, 0, node,
                                   symbol, src, count, offset, kind));
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst,
    const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    if (node == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(from_symbol(hGraphExec, NULL, NULL, NULL, 0, node,
                                     dst, symbol, count, offset, kind));
}
