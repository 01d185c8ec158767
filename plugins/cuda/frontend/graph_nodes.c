/* Graph nodes and their parameters (cuda.api, "CUDA graphs"): every
 * typed call is the generic one's (CUgraphNodeParams), which puts the
 * parameters on the wire in one place.  Kernel arguments are packed as
 * a launch's (kernels.h), taken when the call is made, as the driver
 * takes them. */
#include "graph.h"
#include "kernels.h"

#include <string.h>

#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs_remote.h"

CUresult cuda_fe_put_nodes(struct apigen_call *c, const CUgraphNode *nodes,
                           size_t n)
{
    if ((n > 0 && nodes == NULL) || n > UINT32_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    apigen_put_u32(c, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        apigen_put_u64(c, cuda_fe_id(nodes[i]));
    return CUDA_SUCCESS;
}

static CUresult put_kernel(struct apigen_call *c,
                           const CUDA_KERNEL_NODE_PARAMS_v3 *k,
                           uint8_t *block)
{
    const void *data;
    size_t len;
    uint8_t form;
    /* kern is read only where func is NULL, as the driver reads it. */
    void *fn = k->func != NULL ? (void *)k->func : (void *)k->kern;
    struct cuda_fe_kernel *kn = cuda_fe_kernel_find(cuda_fe_id(fn));
    if (kn == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = cuda_fe_pack_params(kn, k->kernelParams, k->extra, block,
                                     &data, &len, &form);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(c, kn->id);
    apigen_put_u8(c, k->func == NULL);
    apigen_put_u32(c, k->gridDimX);
    apigen_put_u32(c, k->gridDimY);
    apigen_put_u32(c, k->gridDimZ);
    apigen_put_u32(c, k->blockDimX);
    apigen_put_u32(c, k->blockDimY);
    apigen_put_u32(c, k->blockDimZ);
    apigen_put_u32(c, k->sharedMemBytes);
    apigen_put_u8(c, form);
    apigen_put_blob(c, data, len);
    return CUDA_SUCCESS;
}

/* One side of a copy node as the first byte it touches: device memory,
 * or host memory shared with the backend (*shared set: page-locked
 * memory over shm:// and unix://, which the worker maps and pins); other
 * host memory is the client's, out of the graph's reach, and arrays are
 * not remoted yet. */
static CUresult side(CUmemorytype type, CUdeviceptr dev, const void *host, size_t x,
                     size_t y, size_t z, size_t pitch, size_t height, int is_src,
                     uint64_t *out, int *shared)
{
    uint64_t base = dev;
    *shared = 0;
    if (type == CU_MEMORYTYPE_HOST ||
        (type == CU_MEMORYTYPE_UNIFIED && !cuda_fe_mem_is_device(dev))) {
        if (type == CU_MEMORYTYPE_HOST)
            base = (uint64_t)(uintptr_t)host;
        /* Other host memory: the node's own device memory (graph_host.c),
         * its span from the first byte. */
        if (!gvs_remote_host_shared((const void *)(uintptr_t)base, 1))
            return cuda_fe_ghost_side(is_src, out) ? CUDA_SUCCESS
                                                   : CUDA_ERROR_NOT_SUPPORTED;
        *shared = 1;
    } else if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    *out = base + x + ((uint64_t)z * height + y) * pitch;
    return CUDA_SUCCESS;
}

static CUresult put_memcpy(struct apigen_call *c, const CUDA_MEMCPY3D *p)
{
    uint64_t dst, src;
    int dst_shared, src_shared;
    CUresult r = side(p->dstMemoryType, p->dstDevice, p->dstHost, p->dstXInBytes,
                      p->dstY, p->dstZ, p->dstPitch, p->dstHeight, 0, &dst,
                      &dst_shared);
    if (r == CUDA_SUCCESS)
        r = side(p->srcMemoryType, p->srcDevice, p->srcHost, p->srcXInBytes, p->srcY,
                 p->srcZ, p->srcPitch, p->srcHeight, 1, &src, &src_shared);
    if (r != CUDA_SUCCESS)
        return r;
    if (p->srcLOD != 0 || p->dstLOD != 0)
        return CUDA_ERROR_INVALID_VALUE;
    apigen_put_u64(c, dst);
    apigen_put_u64(c, p->dstPitch);
    apigen_put_u64(c, p->dstHeight);
    apigen_put_u64(c, src);
    apigen_put_u64(c, p->srcPitch);
    apigen_put_u64(c, p->srcHeight);
    apigen_put_u64(c, p->WidthInBytes);
    apigen_put_u64(c, p->Height);
    apigen_put_u64(c, p->Depth);
    /* Unified kept for the queries, which the runtime turns back into a
     * kind; shared host memory marked for the worker to map. */
    apigen_put_u8(c, (uint8_t)((p->dstMemoryType == CU_MEMORYTYPE_UNIFIED) |
                               (p->srcMemoryType == CU_MEMORYTYPE_UNIFIED) << 1 |
                               dst_shared << 2 | src_shared << 3));
    return CUDA_SUCCESS;
}

/* Most access descriptors the backend takes (cuda.api). */
#define MAX_ACCESS 64u

static CUresult put_mem_alloc(struct apigen_call *c,
                              const CUDA_MEM_ALLOC_NODE_PARAMS_v2 *a)
{
    const CUmemPoolProps *pp = &a->poolProps;
    if (a->accessDescCount > MAX_ACCESS ||
        (a->accessDescCount > 0 && a->accessDescs == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    /* A pointer of the program's: Windows only. */
    if (pp->win32SecurityAttributes != NULL)
        return CUDA_ERROR_NOT_SUPPORTED;
    apigen_put_i32(c, pp->allocType);
    apigen_put_i32(c, pp->handleTypes);
    apigen_put_i32(c, pp->location.type);
    apigen_put_i32(c, pp->location.id);
    apigen_put_u64(c, pp->maxSize);
    apigen_put_u32(c, pp->usage);
    apigen_put_u64(c, a->bytesize);
    apigen_put_u32(c, (uint32_t)a->accessDescCount);
    for (size_t i = 0; i < a->accessDescCount; i++) {
        apigen_put_i32(c, a->accessDescs[i].location.type);
        apigen_put_i32(c, a->accessDescs[i].location.id);
        apigen_put_i32(c, a->accessDescs[i].flags);
    }
    return CUDA_SUCCESS;
}

/* What GRAPH_ADD_NODE's reply adds for p's type (cuda.api) into p: a
 * memory alloc node's address, known here as device memory from now on;
 * a conditional node's body graphs. */
static void get_added(struct apigen_call *c, CUgraphNodeParams *p)
{
    uint64_t v = 0;
    uint32_t n = 0;
    if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
        apigen_get_u64(c, &v);
        if (c->rc < 0)
            return;
        p->alloc.dptr = v;
        cuda_fe_mem_note(v, p->alloc.bytesize,
                         (CUdevice)p->alloc.poolProps.location.id);
        return;
    }
    if (p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
        return;
    apigen_get_u32(c, &n);
    if (c->rc == 0 && n != p->conditional.size)
        c->rc = GVS_E_PROTO;
    for (uint32_t i = 0; c->rc == 0 && i < n; i++) {
        apigen_get_u64(c, &v);
        p->conditional.phGraph_out[i] = (CUgraph)(uintptr_t)v;
    }
}

static CUresult put_params(struct apigen_call *c, const CUgraphNodeParams *p,
                           uint8_t *block)
{
    apigen_put_u8(c, (uint8_t)p->type);
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return put_kernel(c, &p->kernel, block);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return put_memcpy(c, &p->memcpy.copyParams);
    case CU_GRAPH_NODE_TYPE_MEMSET:
        apigen_put_u64(c, p->memset.dst);
        apigen_put_u64(c, p->memset.pitch);
        apigen_put_u32(c, p->memset.value);
        apigen_put_u32(c, p->memset.elementSize);
        apigen_put_u64(c, p->memset.width);
        apigen_put_u64(c, p->memset.height);
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        apigen_put_u64(c, cuda_fe_id(p->eventRecord.event));
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        apigen_put_u64(c, cuda_fe_id(p->eventWait.event));
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_GRAPH:
        if (p->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
            return CUDA_ERROR_NOT_SUPPORTED;
        apigen_put_u64(c, cuda_fe_id(p->graph.graph));
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        return put_mem_alloc(c, &p->alloc);
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        apigen_put_u64(c, p->free.dptr);
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        const CUDA_CONDITIONAL_NODE_PARAMS *k = &p->conditional;
        if (k->phGraph_out == NULL || k->size == 0)
            return CUDA_ERROR_INVALID_VALUE;
        if (k->ctx != NULL && k->ctx != cuda_fe_ctx_current())
            return CUDA_ERROR_NOT_SUPPORTED;
        apigen_put_u64(c, k->handle);
        apigen_put_u32(c, (uint32_t)k->type);
        apigen_put_u32(c, k->size);
        return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        apigen_put_u64(c, cuda_fe_id(p->memOp.ctx));
        apigen_put_u32(c, p->memOp.flags);
        return cuda_fe_put_memops(c, p->memOp.count, p->memOp.paramArray);
    case CU_GRAPH_NODE_TYPE_HOST: {
        /* Host functions run on the client (hostfunc.c), each time the
         * graph runs the node. */
        uint64_t id;
        CUresult r = cuda_fe_host_node(p->host.fn, p->host.userData, &id);
        if (r == CUDA_SUCCESS)
            apigen_put_u64(c, id);
        return r;
    }
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

/* Begins a node's request: a copy of host memory the worker cannot reach
 * gets its device memory first (graph_host.c), which a failure frees. */
static CUresult begin_node(struct apigen_call *c, const CUgraphNodeParams *p)
{
    CUresult r = p->type == CU_GRAPH_NODE_TYPE_MEMCPY
                     ? cuda_fe_ghost_prepare(&p->memcpy.copyParams)
                     : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        r = cuda_fe_begin(c);
    if (r != CUDA_SUCCESS)
        cuda_fe_ghost_done(0, 0, 0, r);
    return r;
}

/* A node of a child graph is not the program's to name in its parent. */
static uint64_t unaddressable(uint64_t node, uint64_t to)
{
    (void)node, (void)to;
    return 0;
}

CUresult cuda_fe_default_edges(const CUgraphEdgeData *e, size_t n)
{
    for (size_t i = 0; e != NULL && i < n; i++)
        if (e[i].from_port != 0 || e[i].to_port != 0 || e[i].type != 0)
            return CUDA_ERROR_NOT_SUPPORTED;
    return CUDA_SUCCESS;
}

CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                           const CUgraphNode *dependencies,
                           const CUgraphEdgeData *dependencyData,
                           size_t numDependencies,
                           CUgraphNodeParams *nodeParams)
{
    struct apigen_call c;
    uint8_t block[CUDA_FE_PARAM_MAX];
    uint64_t id = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (phGraphNode == NULL || nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_default_edges(dependencyData, numDependencies);
    if (r == CUDA_SUCCESS)
        r = begin_node(&c, nodeParams);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(hGraph));
    r = cuda_fe_put_nodes(&c, dependencies, numDependencies);
    if (r == CUDA_SUCCESS)
        r = put_params(&c, nodeParams, block);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_run(&c, CUDA_OP_GRAPH_ADD_NODE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(&c, &id);
        get_added(&c, nodeParams);
    }
    r = cuda_fe_end(&c, r);
    cuda_fe_ghost_done(cuda_fe_id(hGraph), id, 0, r);
    if (r == CUDA_SUCCESS && nodeParams->type == CU_GRAPH_NODE_TYPE_GRAPH)
        gvs_remote_ghost_copy(cuda_fe_id(nodeParams->graph.graph),
                              cuda_fe_id(hGraph), 0, unaddressable);
    if (r == CUDA_SUCCESS)
        *phGraphNode = (CUgraphNode)(uintptr_t)id;
    return r;
}

CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                        const CUgraphNode *dependencies,
                        size_t numDependencies,
                        CUgraphNodeParams *nodeParams)
{
    return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, NULL,
                             numDependencies, nodeParams);
}

/* Sets a node's parameters in its graph, or in exec where not NULL. */
static CUresult set_params(CUgraphExec exec, CUgraphNode node,
                           const CUgraphNodeParams *p)
{
    struct apigen_call c;
    uint8_t block[CUDA_FE_PARAM_MAX];
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    /* A graph's node: its graph is known here only when it already
     * copies host memory of the program's. */
    uint64_t owner = exec != NULL ? cuda_fe_id(exec)
                                  : gvs_remote_ghost_graph_of(cuda_fe_id(node));
    gvs_remote_ghost_stageable(owner != 0);
    CUresult r = begin_node(&c, p);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(exec));
    apigen_put_u64(&c, cuda_fe_id(node));
    r = put_params(&c, p, block);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_run(&c, CUDA_OP_NODE_SET_PARAMS, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    cuda_fe_ghost_done(owner, cuda_fe_id(node), exec != NULL, r);
    return r;
}

CUresult cuGraphNodeSetParams(CUgraphNode hNode,
                              CUgraphNodeParams *nodeParams)
{
    return set_params(NULL, hNode, nodeParams);
}

CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                  CUgraphNodeParams *nodeParams)
{
    if (hGraphExec == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return set_params(hGraphExec, hNode, nodeParams);
}

/* The typed calls, as generic parameters. -------------------------------
 * Each of_* gives zeroes for a NULL argument, which typed() refuses. */

static CUgraphNodeParams of_kernel(const CUDA_KERNEL_NODE_PARAMS *k)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof(p));
    p.type = CU_GRAPH_NODE_TYPE_KERNEL;
    if (k == NULL)
        return p;
    p.kernel.func = k->func;
    p.kernel.gridDimX = k->gridDimX;
    p.kernel.gridDimY = k->gridDimY;
    p.kernel.gridDimZ = k->gridDimZ;
    p.kernel.blockDimX = k->blockDimX;
    p.kernel.blockDimY = k->blockDimY;
    p.kernel.blockDimZ = k->blockDimZ;
    p.kernel.sharedMemBytes = k->sharedMemBytes;
    p.kernel.kernelParams = k->kernelParams;
    p.kernel.extra = k->extra;
    p.kernel.kern = k->kern;
    p.kernel.ctx = k->ctx;
    return p;
}

static CUgraphNodeParams of_memset(const CUDA_MEMSET_NODE_PARAMS *m)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof(p));
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    if (m == NULL)
        return p;
    p.memset.dst = m->dst;
    p.memset.pitch = m->pitch;
    p.memset.value = m->value;
    p.memset.elementSize = m->elementSize;
    p.memset.width = m->width;
    p.memset.height = m->height;
    return p;
}

static CUgraphNodeParams of_memcpy(const CUDA_MEMCPY3D *m)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof(p));
    p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    if (m != NULL)
        p.memcpy.copyParams = *m;
    return p;
}

/* The caller's parameters given (not NULL), in a context remoted: copies
 * and memsets run in the lane's current context, the caller's, and
 * another ctx is not remoted yet. */
static CUresult typed(const void *given, CUcontext ctx)
{
    if (given == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return ctx == NULL || ctx == cuda_fe_ctx_current()
               ? CUDA_SUCCESS
               : CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult add(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                    size_t n, CUcontext ctx, const void *given,
                    CUgraphNodeParams p)
{
    CUresult r = typed(given, ctx);
    return r != CUDA_SUCCESS ? r : cuGraphAddNode_v2(ph, g, deps, NULL, n, &p);
}

/* In exec where in_exec, else in the node's graph. */
static CUresult set(int in_exec, CUgraphExec exec, CUgraphNode node,
                    CUcontext ctx, const void *given, CUgraphNodeParams p)
{
    CUresult r = typed(given, ctx);
    if (r != CUDA_SUCCESS)
        return r;
    return in_exec ? cuGraphExecNodeSetParams(exec, node, &p)
                   : set_params(NULL, node, &p);
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                 const CUgraphNode *dependencies,
                                 size_t numDependencies,
                                 const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    return add(phGraphNode, hGraph, dependencies, numDependencies, NULL,
               nodeParams, of_kernel(nodeParams));
}

CUresult cuGraphKernelNodeSetParams_v2(
    CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    return set(0, NULL, hNode, NULL, nodeParams, of_kernel(nodeParams));
}

CUresult cuGraphExecKernelNodeSetParams_v2(
    CUgraphExec hGraphExec, CUgraphNode hNode,
    const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    return set(1, hGraphExec, hNode, NULL, nodeParams,
               of_kernel(nodeParams));
}

CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                              const CUgraphNode *dependencies,
                              size_t numDependencies,
                              const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    return add(phGraphNode, hGraph, dependencies, numDependencies, ctx,
               copyParams, of_memcpy(copyParams));
}

CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode,
                                    const CUDA_MEMCPY3D *nodeParams)
{
    return set(0, NULL, hNode, NULL, nodeParams, of_memcpy(nodeParams));
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec,
                                        CUgraphNode hNode,
                                        const CUDA_MEMCPY3D *copyParams,
                                        CUcontext ctx)
{
    return set(1, hGraphExec, hNode, ctx, copyParams, of_memcpy(copyParams));
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                              const CUgraphNode *dependencies,
                              size_t numDependencies,
                              const CUDA_MEMSET_NODE_PARAMS *memsetParams,
                              CUcontext ctx)
{
    return add(phGraphNode, hGraph, dependencies, numDependencies, ctx,
               memsetParams, of_memset(memsetParams));
}

CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode,
                                    const CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    return set(0, NULL, hNode, NULL, nodeParams, of_memset(nodeParams));
}

CUresult cuGraphExecMemsetNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode,
    const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    return set(1, hGraphExec, hNode, ctx, memsetParams,
               of_memset(memsetParams));
}

static CUgraphNodeParams of_host(const CUDA_HOST_NODE_PARAMS *h)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof(p));
    p.type = CU_GRAPH_NODE_TYPE_HOST;
    if (h != NULL) {
        p.host.fn = h->fn;
        p.host.userData = h->userData;
    }
    return p;
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                            const CUgraphNode *dependencies,
                            size_t numDependencies,
                            const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return add(phGraphNode, hGraph, dependencies, numDependencies, NULL,
               nodeParams, of_host(nodeParams));
}

CUresult cuGraphHostNodeSetParams(CUgraphNode hNode,
                                  const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return set(0, NULL, hNode, NULL, nodeParams, of_host(nodeParams));
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec,
                                      CUgraphNode hNode,
                                      const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return set(1, hGraphExec, hNode, NULL, nodeParams, of_host(nodeParams));
}

/* Nodes of no parameters but a handle: empty (none), event record and
 * wait (the event), child graph (the graph, copied into the node). */
static CUgraphNodeParams of_handle(CUgraphNodeType type, void *handle)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof(p));
    p.type = type;
    if (type == CU_GRAPH_NODE_TYPE_GRAPH)
        p.graph.graph = handle;
    else
        p.eventRecord.event = handle;
    return p;
}

static CUresult add_handle(CUgraphNode *ph, CUgraph g,
                           const CUgraphNode *deps, size_t n,
                           CUgraphNodeType type, void *handle)
{
    CUgraphNodeParams p = of_handle(type, handle);
    return cuGraphAddNode_v2(ph, g, deps, NULL, n, &p);
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                             const CUgraphNode *dependencies,
                             size_t numDependencies)
{
    return add_handle(phGraphNode, hGraph, dependencies, numDependencies,
                      CU_GRAPH_NODE_TYPE_EMPTY, NULL);
}

CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                   const CUgraphNode *dependencies,
                                   size_t numDependencies, CUevent event)
{
    return add_handle(phGraphNode, hGraph, dependencies, numDependencies,
                      CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                 const CUgraphNode *dependencies,
                                 size_t numDependencies, CUevent event)
{
    return add_handle(phGraphNode, hGraph, dependencies, numDependencies,
                      CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies,
                                  size_t numDependencies, CUgraph childGraph)
{
    return add_handle(phGraphNode, hGraph, dependencies, numDependencies,
                      CU_GRAPH_NODE_TYPE_GRAPH, childGraph);
}

/* A node's event or child graph, set in its graph or in exec. */
static CUresult set_handle(int in_exec, CUgraphExec exec, CUgraphNode node,
                           CUgraphNodeType type, void *handle)
{
    CUgraphNodeParams p = of_handle(type, handle);
    return in_exec ? cuGraphExecNodeSetParams(exec, node, &p)
                   : set_params(NULL, node, &p);
}

CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event)
{
    return set_handle(0, NULL, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event)
{
    return set_handle(0, NULL, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec,
                                            CUgraphNode hNode, CUevent event)
{
    return set_handle(1, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
                      event);
}

CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec,
                                          CUgraphNode hNode, CUevent event)
{
    return set_handle(1, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
                      event);
}

CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec,
                                            CUgraphNode hNode,
                                            CUgraph childGraph)
{
    return set_handle(1, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_GRAPH,
                      childGraph);
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                const CUgraphNode *dependencies,
                                size_t numDependencies,
                                CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    CUgraphNodeParams p;
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(&p, 0, sizeof(p));
    p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    p.alloc.poolProps = nodeParams->poolProps;
    p.alloc.accessDescs = nodeParams->accessDescs;
    p.alloc.accessDescCount = nodeParams->accessDescCount;
    p.alloc.bytesize = nodeParams->bytesize;
    CUresult r = cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, NULL,
                                   numDependencies, &p);
    if (r == CUDA_SUCCESS)
        nodeParams->dptr = p.alloc.dptr;
    return r;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                               const CUgraphNode *dependencies,
                               size_t numDependencies, CUdeviceptr dptr)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof(p));
    p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    p.free.dptr = dptr;
    return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, NULL,
                             numDependencies, &p);
}

/* Batch memory operation nodes, in the context they name (any of the
 * session's, as the backend's driver takes it). */
static CUgraphNodeParams of_memops(const CUDA_BATCH_MEM_OP_NODE_PARAMS *m)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof(p));
    p.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    if (m != NULL) {
        p.memOp.ctx = m->ctx;
        p.memOp.count = m->count;
        p.memOp.paramArray = m->paramArray;
        p.memOp.flags = m->flags;
    }
    return p;
}

CUresult cuGraphAddBatchMemOpNode(
    CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
    size_t numDependencies, const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    CUgraphNodeParams p = of_memops(nodeParams);
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, NULL,
                             numDependencies, &p);
}

CUresult cuGraphBatchMemOpNodeSetParams(
    CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    CUgraphNodeParams p = of_memops(nodeParams);
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return set_params(NULL, hNode, &p);
}

CUresult cuGraphExecBatchMemOpNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode,
    const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    CUgraphNodeParams p = of_memops(nodeParams);
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return cuGraphExecNodeSetParams(hGraphExec, hNode, &p);
}
