/*
 * Graphs, stream capture and user objects for the host-memory mock of the
 * CUDA runtime (mock_cudart.c).  A graph is a list of nodes and edges;
 * an executable graph is a clone of it, run node by node in dependency
 * order on the launching thread once the stream has drained.  Capture
 * only records that a stream captures: work issued meanwhile runs as it
 * comes, so a captured graph holds no node.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "mock_kernels.h"
#include "mock_mem.h"

#define ARGS_MAX 64

struct edge {
    struct CUgraphNode_st *from, *to;
};

#define MOCK_GRAPH_OBJECTS 32
#define MOCK_BODIES 4
#define MOCK_NODE_ATTRS 32

struct CUuserObject_st {
    void *ptr;
    cudaHostFn_t destroy;
    unsigned refs;
};

struct CUgraph_st {
    struct CUgraphNode_st **nodes;
    size_t n;
    struct edge *edges;
    size_t ne;
    /* User object references the graph owns. */
    struct CUuserObject_st *objects[MOCK_GRAPH_OBJECTS];
    unsigned object_refs[MOCK_GRAPH_OBJECTS];
    unsigned long long next_handle;
};

struct CUgraphNode_st {
    struct CUgraph_st *g;
    enum cudaGraphNodeType type;
    int enabled;
    struct CUgraphNode_st *origin; /* the node this one was cloned from */
    const struct mock_kernel *k;
    dim3 grid, block;
    uint64_t args[ARGS_MAX / 8];
    void *argv[MOCK_MAX_PARAMS];
    struct cudaMemcpy3DParms copy;
    struct cudaMemsetParams set;
    struct cudaHostNodeParams host;
    struct CUgraph_st *child;
    cudaEvent_t event;
    struct cudaMemAllocNodeParams alloc; /* alloc nodes; dptr for free */
    struct cudaMemAccessDesc access;
    struct CUgraph_st *bodies[MOCK_BODIES]; /* a conditional's */
    unsigned nbodies;
    cudaLaunchAttributeValue attrs[MOCK_NODE_ATTRS];
};

struct CUgraphExec_st {
    struct CUgraph_st *g;
    unsigned long long flags;
};

/* Graphs ------------------------------------------------------------------ */

cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned int flags)
{
    if (flags != 0)
        return cudaErrorInvalidValue;
    *g = calloc(1, sizeof(**g));
    return cudaSuccess;
}

static void object_release(struct CUuserObject_st *o, unsigned n)
{
    o->refs -= n;
    if (o->refs == 0) {
        o->destroy(o->ptr);
        free(o);
    }
}

/* A copy (a clone, an instantiation, a child graph's) holds references
 * of its own to the user objects src holds, as CUDA's do. */
static void objects_copy(struct CUgraph_st *g, const struct CUgraph_st *src)
{
    for (int i = 0; i < MOCK_GRAPH_OBJECTS; i++) {
        g->objects[i] = src->objects[i];
        g->object_refs[i] = src->object_refs[i];
        if (g->objects[i] != NULL)
            g->objects[i]->refs += g->object_refs[i];
    }
}

static void objects_release(struct CUgraph_st *g)
{
    for (int i = 0; i < MOCK_GRAPH_OBJECTS; i++)
        if (g->objects[i] != NULL)
            object_release(g->objects[i], g->object_refs[i]);
}

static void node_free(struct CUgraphNode_st *n);

static void graph_free(struct CUgraph_st *g)
{
    for (size_t i = 0; i < g->n; i++)
        node_free(g->nodes[i]);
    objects_release(g);
    free(g->nodes);
    free(g->edges);
    free(g);
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    graph_free(g);
    return cudaSuccess;
}

static struct CUgraphNode_st *node_copy(const struct CUgraphNode_st *src,
                                        struct CUgraph_st *g);

static void node_free(struct CUgraphNode_st *n)
{
    if (n->child != NULL)
        graph_free(n->child);
    for (unsigned i = 0; i < n->nbodies; i++)
        graph_free(n->bodies[i]);
    if (n->type == cudaGraphNodeTypeMemAlloc)
        (void)cudaFree(n->alloc.dptr);
    free(n);
}

static struct CUgraph_st *graph_copy(const struct CUgraph_st *src)
{
    struct CUgraph_st *g = calloc(1, sizeof(*g));
    objects_copy(g, src);
    g->nodes = calloc(src->n + 1, sizeof(*g->nodes));
    g->edges = calloc(src->ne + 1, sizeof(*g->edges));
    for (size_t i = 0; i < src->n; i++)
        g->nodes[g->n++] = node_copy(src->nodes[i], g);
    for (size_t i = 0; i < src->ne; i++) {
        struct edge e = {NULL, NULL};
        for (size_t j = 0; j < src->n; j++) {
            if (src->nodes[j] == src->edges[i].from)
                e.from = g->nodes[j];
            if (src->nodes[j] == src->edges[i].to)
                e.to = g->nodes[j];
        }
        g->edges[g->ne++] = e;
    }
    return g;
}

static void point_args(struct CUgraphNode_st *n)
{
    for (unsigned i = 0; n->k != NULL && i < n->k->nparams; i++)
        n->argv[i] = (uint8_t *)n->args + n->k->offsets[i];
}

static struct CUgraphNode_st *node_copy(const struct CUgraphNode_st *src,
                                        struct CUgraph_st *g)
{
    struct CUgraphNode_st *n = malloc(sizeof(*n));
    *n = *src;
    n->g = g;
    n->origin = (struct CUgraphNode_st *)src;
    point_args(n);
    if (src->child != NULL)
        n->child = graph_copy(src->child);
    for (unsigned i = 0; i < src->nbodies; i++)
        n->bodies[i] = graph_copy(src->bodies[i]);
    if (src->type == cudaGraphNodeTypeMemAlloc)
        (void)cudaMalloc(&n->alloc.dptr, src->alloc.bytesize);
    return n;
}

cudaError_t cudaGraphClone(cudaGraph_t *out, cudaGraph_t g)
{
    *out = graph_copy(g);
    return cudaSuccess;
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *out,
                                     cudaGraphNode_t orig, cudaGraph_t clone)
{
    for (size_t i = 0; i < clone->n; i++)
        if (clone->nodes[i]->origin == orig) {
            *out = clone->nodes[i];
            return cudaSuccess;
        }
    return cudaErrorInvalidValue;
}

static int has_node(const struct CUgraph_st *g, const struct CUgraphNode_st *n)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i] == n)
            return 1;
    return 0;
}

static cudaError_t add_edges(cudaGraph_t g, const cudaGraphNode_t *from,
                             const cudaGraphNode_t *to, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!has_node(g, from[i]) || !has_node(g, to[i]))
            return cudaErrorInvalidValue;
    g->edges = realloc(g->edges, (g->ne + n + 1) * sizeof(*g->edges));
    for (size_t i = 0; i < n; i++)
        g->edges[g->ne++] = (struct edge){from[i], to[i]};
    return cudaSuccess;
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t *from,
                                     const cudaGraphNode_t *to,
                                     const cudaGraphEdgeData *ed, size_t n)
{
    (void)ed;
    return add_edges(g, from, to, n);
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g,
                                        const cudaGraphNode_t *from,
                                        const cudaGraphNode_t *to,
                                        const cudaGraphEdgeData *ed, size_t n)
{
    (void)ed;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < g->ne &&
               (g->edges[j].from != from[i] || g->edges[j].to != to[i]))
            j++;
        if (j == g->ne)
            return cudaErrorInvalidValue;
        g->edges[j] = g->edges[--g->ne];
    }
    return cudaSuccess;
}

/* Adding nodes ------------------------------------------------------------ */

static cudaError_t add(cudaGraphNode_t *out, cudaGraph_t g,
                       const cudaGraphNode_t *deps, size_t ndeps,
                       struct CUgraphNode_st *n)
{
    for (size_t i = 0; i < ndeps; i++)
        if (!has_node(g, deps[i])) {
            free(n);
            return cudaErrorInvalidValue;
        }
    n->g = g;
    n->enabled = 1;
    g->nodes = realloc(g->nodes, (g->n + 1) * sizeof(*g->nodes));
    g->nodes[g->n++] = n;
    for (size_t i = 0; i < ndeps; i++) {
        cudaGraphNode_t to = n;
        add_edges(g, &deps[i], &to, 1);
    }
    *out = n;
    return cudaSuccess;
}

static struct CUgraphNode_st *node_new(enum cudaGraphNodeType type)
{
    struct CUgraphNode_st *n = calloc(1, sizeof(*n));
    n->type = type;
    return n;
}

/* Copies the arguments, as CUDA does when a kernel node is made. */
static cudaError_t set_kernel(struct CUgraphNode_st *n,
                              const struct cudaKernelNodeParams *p)
{
    const struct mock_kernel *k = p->func;
    if (k == NULL || (k->nparams > 0 && p->kernelParams == NULL))
        return cudaErrorInvalidValue;
    n->k = k;
    n->grid = p->gridDim;
    n->block = p->blockDim;
    for (unsigned i = 0; i < k->nparams; i++)
        memcpy((uint8_t *)n->args + k->offsets[i], p->kernelParams[i],
               k->sizes[i]);
    point_args(n);
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *out, cudaGraph_t g,
                                   const cudaGraphNode_t *deps, size_t n,
                                   const struct cudaKernelNodeParams *p)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeKernel);
    cudaError_t e = set_kernel(node, p);
    if (e != cudaSuccess) {
        free(node);
        return e;
    }
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *out, cudaGraph_t g,
                                   const cudaGraphNode_t *deps, size_t n,
                                   const struct cudaMemcpy3DParms *p)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeMemcpy);
    node->copy = *p;
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *out, cudaGraph_t g,
                                   const cudaGraphNode_t *deps, size_t n,
                                   const struct cudaMemsetParams *p)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeMemset);
    node->set = *p;
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *out, cudaGraph_t g,
                                 const cudaGraphNode_t *deps, size_t n,
                                 const struct cudaHostNodeParams *p)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeHost);
    node->host = *p;
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *out, cudaGraph_t g,
                                       const cudaGraphNode_t *deps, size_t n,
                                       cudaGraph_t child)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeGraph);
    node->child = graph_copy(child);
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *out, cudaGraph_t g,
                                        const cudaGraphNode_t *deps, size_t n,
                                        cudaEvent_t event)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeEventRecord);
    node->event = event;
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *out, cudaGraph_t g,
                                      const cudaGraphNode_t *deps, size_t n,
                                      cudaEvent_t event)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeWaitEvent);
    node->event = event;
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *out, cudaGraph_t g,
                                  const cudaGraphNode_t *deps, size_t n)
{
    return add(out, g, deps, n, node_new(cudaGraphNodeTypeEmpty));
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t n)
{
    struct CUgraph_st *g = n->g;
    size_t j = 0;
    for (size_t i = 0; i < g->ne; i++)
        if (g->edges[i].from != n && g->edges[i].to != n)
            g->edges[j++] = g->edges[i];
    g->ne = j;
    j = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i] != n)
            g->nodes[j++] = g->nodes[i];
    g->n = j;
    node_free(n);
    return cudaSuccess;
}

/* Parameters -------------------------------------------------------------- */

static cudaError_t typed(cudaGraphNode_t n, enum cudaGraphNodeType t)
{
    return n->type == t ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n,
                                         const struct cudaKernelNodeParams *p)
{
    cudaError_t e = typed(n, cudaGraphNodeTypeKernel);
    return e == cudaSuccess ? set_kernel(n, p) : e;
}

cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t n,
                                         const struct cudaMemcpy3DParms *p)
{
    cudaError_t e = typed(n, cudaGraphNodeTypeMemcpy);
    if (e == cudaSuccess)
        n->copy = *p;
    return e;
}

cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t n,
                                         const struct cudaMemsetParams *p)
{
    cudaError_t e = typed(n, cudaGraphNodeTypeMemset);
    if (e == cudaSuccess)
        n->set = *p;
    return e;
}

cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t n,
                                       const struct cudaHostNodeParams *p)
{
    cudaError_t e = typed(n, cudaGraphNodeTypeHost);
    if (e == cudaSuccess)
        n->host = *p;
    return e;
}

cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t n,
                                             cudaEvent_t event)
{
    cudaError_t e = typed(n, cudaGraphNodeTypeEventRecord);
    if (e == cudaSuccess)
        n->event = event;
    return e;
}

cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t n,
                                           cudaEvent_t event)
{
    cudaError_t e = typed(n, cudaGraphNodeTypeWaitEvent);
    if (e == cudaSuccess)
        n->event = event;
    return e;
}

/* The executable graph's copy of a node of its graph. */
static cudaGraphNode_t in_exec(cudaGraphExec_t x, cudaGraphNode_t n)
{
    for (size_t i = 0; i < x->g->n; i++)
        if (x->g->nodes[i]->origin == n)
            return x->g->nodes[i];
    return NULL;
}

#define EXEC_SET(name, ptype, setter)                                        \
    cudaError_t name(cudaGraphExec_t x, cudaGraphNode_t n, ptype p)          \
    {                                                                        \
        cudaGraphNode_t c = in_exec(x, n);                                   \
        return c != NULL ? setter(c, p) : cudaErrorInvalidValue;             \
    }
EXEC_SET(cudaGraphExecKernelNodeSetParams, const struct cudaKernelNodeParams *,
         cudaGraphKernelNodeSetParams)
EXEC_SET(cudaGraphExecMemcpyNodeSetParams, const struct cudaMemcpy3DParms *,
         cudaGraphMemcpyNodeSetParams)
EXEC_SET(cudaGraphExecMemsetNodeSetParams, const struct cudaMemsetParams *,
         cudaGraphMemsetNodeSetParams)
EXEC_SET(cudaGraphExecHostNodeSetParams, const struct cudaHostNodeParams *,
         cudaGraphHostNodeSetParams)
EXEC_SET(cudaGraphExecEventRecordNodeSetEvent, cudaEvent_t,
         cudaGraphEventRecordNodeSetEvent)
EXEC_SET(cudaGraphExecEventWaitNodeSetEvent, cudaEvent_t,
         cudaGraphEventWaitNodeSetEvent)
#undef EXEC_SET

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t x,
                                                 cudaGraphNode_t n,
                                                 cudaGraph_t child)
{
    cudaGraphNode_t c = in_exec(x, n);
    if (c == NULL || c->type != cudaGraphNodeTypeGraph)
        return cudaErrorInvalidValue;
    graph_free(c->child);
    c->child = graph_copy(child);
    return cudaSuccess;
}

cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t x, cudaGraphNode_t n,
                                    unsigned int enabled)
{
    cudaGraphNode_t c = in_exec(x, n);
    if (c == NULL)
        return cudaErrorInvalidValue;
    c->enabled = enabled != 0;
    return cudaSuccess;
}

cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t x, cudaGraphNode_t n,
                                    unsigned int *enabled)
{
    cudaGraphNode_t c = in_exec(x, n);
    if (c == NULL)
        return cudaErrorInvalidValue;
    *enabled = (unsigned)c->enabled;
    return cudaSuccess;
}

/* Queries ----------------------------------------------------------------- */

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t n,
                                 enum cudaGraphNodeType *type)
{
    *type = n->type;
    return cudaSuccess;
}

/* Fills what CUDA's queries fill: the count alone, or up to *count. */
static void answer(cudaGraphNode_t *out, cudaGraphNode_t *found, size_t n,
                   size_t *count)
{
    if (out != NULL) {
        size_t k = n < *count ? n : *count;
        memcpy(out, found, k * sizeof(*out));
        *count = k;
    } else {
        *count = n;
    }
}

cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes,
                              size_t *count)
{
    answer(nodes, g->nodes, g->n, count);
    return cudaSuccess;
}

static int is_root(const struct CUgraph_st *g, const struct CUgraphNode_st *n)
{
    for (size_t i = 0; i < g->ne; i++)
        if (g->edges[i].to == n)
            return 0;
    return 1;
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t *nodes,
                                  size_t *count)
{
    cudaGraphNode_t found[g->n + 1];
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++)
        if (is_root(g, g->nodes[i]))
            found[k++] = g->nodes[i];
    answer(nodes, found, k, count);
    return cudaSuccess;
}

cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t *from,
                              cudaGraphNode_t *to, cudaGraphEdgeData *ed,
                              size_t *count)
{
    if (from == NULL) {
        *count = g->ne;
        return cudaSuccess;
    }
    size_t k = g->ne < *count ? g->ne : *count;
    for (size_t i = 0; i < k; i++) {
        from[i] = g->edges[i].from;
        to[i] = g->edges[i].to;
        if (ed != NULL)
            ed[i] = (cudaGraphEdgeData){0};
    }
    *count = k;
    return cudaSuccess;
}

static cudaError_t node_edges(cudaGraphNode_t n, cudaGraphNode_t *out,
                              cudaGraphEdgeData *ed, size_t *count,
                              int dependents)
{
    const struct CUgraph_st *g = n->g;
    cudaGraphNode_t found[g->ne + 1];
    size_t k = 0;
    for (size_t i = 0; i < g->ne; i++) {
        if (!dependents && g->edges[i].to == n)
            found[k++] = g->edges[i].from;
        if (dependents && g->edges[i].from == n)
            found[k++] = g->edges[i].to;
    }
    answer(out, found, k, count);
    for (size_t i = 0; ed != NULL && i < *count; i++)
        ed[i] = (cudaGraphEdgeData){0};
    return cudaSuccess;
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t n,
                                         cudaGraphNode_t *deps,
                                         cudaGraphEdgeData *ed, size_t *count)
{
    return node_edges(n, deps, ed, count, 0);
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t n,
                                           cudaGraphNode_t *deps,
                                           cudaGraphEdgeData *ed,
                                           size_t *count)
{
    return node_edges(n, deps, ed, count, 1);
}

/* Executable graphs ------------------------------------------------------- */

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *out,
                                           cudaGraph_t g,
                                           cudaGraphInstantiateParams *p)
{
    struct CUgraphExec_st *x = calloc(1, sizeof(*x));
    x->g = graph_copy(g);
    x->flags = p->flags;
    p->result_out = cudaGraphInstantiateSuccess;
    p->errNode_out = NULL;
    *out = x;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
    graph_free(x->g);
    free(x);
    return cudaSuccess;
}

cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t x, unsigned long long *f)
{
    *f = x->flags;
    return cudaSuccess;
}

/* Same nodes of the same types in the same order: the new parameters are
 * taken; anything else is a topology change. */
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g,
                                cudaGraphExecUpdateResultInfo *info)
{
    *info = (cudaGraphExecUpdateResultInfo){cudaGraphExecUpdateSuccess, NULL,
                                            NULL};
    if (g->n != x->g->n) {
        info->result = cudaGraphExecUpdateErrorTopologyChanged;
        return cudaErrorGraphExecUpdateFailure;
    }
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i]->type != x->g->nodes[i]->type) {
            info->result = cudaGraphExecUpdateErrorNodeTypeChanged;
            info->errorNode = g->nodes[i];
            return cudaErrorGraphExecUpdateFailure;
        }
    /* The source's references replace the executable graph's. */
    struct CUgraph_st old = *x->g;
    objects_copy(x->g, g);
    objects_release(&old);
    for (size_t i = 0; i < g->n; i++) {
        struct CUgraphNode_st *d = x->g->nodes[i];
        struct CUgraphNode_st *origin = d->origin;
        struct CUgraph_st *child = d->child;
        *d = *g->nodes[i];
        d->g = x->g;
        d->origin = origin;
        d->child = child;
        point_args(d);
    }
    return cudaSuccess;
}

/* A row the GPU would fault on stops the node, as a fault stops work. */
static void memset_rows(const struct cudaMemsetParams *s)
{
    for (size_t y = 0; y < s->height; y++) {
        uint8_t *row = (uint8_t *)s->dst + y * s->pitch;
        if (!mock_dev_ok(row, s->width * s->elementSize))
            return;
        for (size_t i = 0; i < s->width; i++)
            memcpy(row + i * s->elementSize, &s->value, s->elementSize);
    }
}

static void run_graph(struct CUgraph_st *g);

static void run_node(struct CUgraphNode_st *n)
{
    if (!n->enabled)
        return;
    switch (n->type) {
    case cudaGraphNodeTypeKernel:
        n->k->run(n->grid, n->block, n->argv);
        break;
    case cudaGraphNodeTypeMemcpy:
        mock_copy3d(&n->copy);
        break;
    case cudaGraphNodeTypeMemset:
        memset_rows(&n->set);
        break;
    case cudaGraphNodeTypeHost:
        n->host.fn(n->host.userData);
        break;
    case cudaGraphNodeTypeGraph:
        run_graph(n->child);
        break;
    default:
        break;
    }
}

/* In dependency order: a node runs once every node it depends on has. */
static void run_graph(struct CUgraph_st *g)
{
    char done[g->n + 1];
    size_t left = g->n;
    memset(done, 0, sizeof(done));
    while (left > 0) {
        for (size_t i = 0; i < g->n; i++) {
            int ready = !done[i];
            for (size_t j = 0; ready && j < g->ne; j++)
                if (g->edges[j].to == g->nodes[i])
                    for (size_t k = 0; k < g->n; k++)
                        if (g->nodes[k] == g->edges[j].from && !done[k])
                            ready = 0;
            if (ready) {
                run_node(g->nodes[i]);
                done[i] = 1;
                left--;
            }
        }
    }
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t stream)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e == cudaSuccess)
        run_graph(x->g);
    return e;
}

cudaError_t cudaGraphUpload(cudaGraphExec_t x, cudaStream_t stream)
{
    (void)x;
    return cudaStreamSynchronize(stream);
}

/* Capture ----------------------------------------------------------------- */

#define MAX_CAPTURES 16

static struct {
    cudaStream_t stream;
    cudaGraph_t graph;
    unsigned long long id;
} captures[MAX_CAPTURES];
static unsigned long long capture_ids;

static int capture_of(cudaStream_t s)
{
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (captures[i].graph != NULL && captures[i].stream == s)
            return i;
    return -1;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                   enum cudaStreamCaptureMode mode)
{
    (void)mode;
    if (s == NULL || s == cudaStreamLegacy)
        return cudaErrorStreamCaptureUnsupported;
    if (capture_of(s) >= 0)
        return cudaErrorIllegalState;
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (captures[i].graph == NULL) {
            captures[i].stream = s;
            captures[i].id = ++capture_ids;
            return cudaGraphCreate(&captures[i].graph, 0);
        }
    return cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    int i = capture_of(s);
    if (i < 0)
        return cudaErrorIllegalState;
    *g = captures[i].graph;
    captures[i].graph = NULL;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s,
                                  enum cudaStreamCaptureStatus *status)
{
    *status = capture_of(s) >= 0 ? cudaStreamCaptureStatusActive
                                 : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s,
                                     enum cudaStreamCaptureStatus *status,
                                     unsigned long long *id, cudaGraph_t *g,
                                     const cudaGraphNode_t **deps,
                                     const cudaGraphEdgeData **ed, size_t *n)
{
    int i = capture_of(s);
    *status = i >= 0 ? cudaStreamCaptureStatusActive
                     : cudaStreamCaptureStatusNone;
    if (id != NULL)
        *id = i >= 0 ? captures[i].id : 0;
    if (g != NULL)
        *g = i >= 0 ? captures[i].graph : NULL;
    if (deps != NULL)
        *deps = NULL;
    if (ed != NULL)
        *ed = NULL;
    if (n != NULL)
        *n = 0;
    return cudaSuccess;
}

/* Node queries ------------------------------------------------------------ */

/* The driver's kernel node query, which the backend reaches through
 * cudaGetDriverEntryPointByVersion. */
CUresult mock_cuGraphKernelNodeGetParams(CUgraphNode node,
                                         CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    cudaGraphNode_t n = (cudaGraphNode_t)node;
    if (n->type != cudaGraphNodeTypeKernel)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(*p));
    p->kern = (CUkernel)(uintptr_t)n->k;
    p->gridDimX = n->grid.x;
    p->gridDimY = n->grid.y;
    p->gridDimZ = n->grid.z;
    p->blockDimX = n->block.x;
    p->blockDimY = n->block.y;
    p->blockDimZ = n->block.z;
    p->kernelParams = n->argv;
    return CUDA_SUCCESS;
}

cudaError_t cudaGetFuncBySymbol(cudaFunction_t *fn, const void *symbol)
{
    (void)fn;
    (void)symbol;
    return cudaErrorInvalidDeviceFunction;
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t n,
                                         struct cudaMemcpy3DParms *p)
{
    if (n->type != cudaGraphNodeTypeMemcpy)
        return cudaErrorInvalidValue;
    *p = n->copy;
    return cudaSuccess;
}

cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t n,
                                         struct cudaMemsetParams *p)
{
    if (n->type != cudaGraphNodeTypeMemset)
        return cudaErrorInvalidValue;
    *p = n->set;
    return cudaSuccess;
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t n,
                                       struct cudaHostNodeParams *p)
{
    if (n->type != cudaGraphNodeTypeHost)
        return cudaErrorInvalidValue;
    *p = n->host;
    return cudaSuccess;
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t n, cudaGraph_t *g)
{
    if (n->type != cudaGraphNodeTypeGraph)
        return cudaErrorInvalidValue;
    *g = n->child;
    return cudaSuccess;
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t n,
                                             cudaEvent_t *ev)
{
    if (n->type != cudaGraphNodeTypeEventRecord)
        return cudaErrorInvalidValue;
    *ev = n->event;
    return cudaSuccess;
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t n, cudaEvent_t *ev)
{
    if (n->type != cudaGraphNodeTypeWaitEvent)
        return cudaErrorInvalidValue;
    *ev = n->event;
    return cudaSuccess;
}

/* Kernel node attributes: kept by id, untouched by launches. */
cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t n,
                                            cudaKernelNodeAttrID id,
                                            cudaKernelNodeAttrValue *v)
{
    if (n->type != cudaGraphNodeTypeKernel || (unsigned)id >= MOCK_NODE_ATTRS)
        return cudaErrorInvalidValue;
    *v = n->attrs[id];
    return cudaSuccess;
}

cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t n,
                                            cudaKernelNodeAttrID id,
                                            const cudaKernelNodeAttrValue *v)
{
    if (n->type != cudaGraphNodeTypeKernel || (unsigned)id >= MOCK_NODE_ATTRS)
        return cudaErrorInvalidValue;
    n->attrs[id] = *v;
    return cudaSuccess;
}

cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t dst,
                                              cudaGraphNode_t src)
{
    if (dst->type != cudaGraphNodeTypeKernel ||
        src->type != cudaGraphNodeTypeKernel)
        return cudaErrorInvalidValue;
    memcpy(dst->attrs, src->attrs, sizeof(dst->attrs));
    return cudaSuccess;
}

/* Graph memory: an alloc node allocates when it is made. */
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *out, cudaGraph_t g,
                                     const cudaGraphNode_t *deps, size_t n,
                                     struct cudaMemAllocNodeParams *p)
{
    if (p->bytesize == 0 || p->accessDescCount > 1 ||
        p->poolProps.allocType != cudaMemAllocationTypePinned)
        return cudaErrorInvalidValue;
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeMemAlloc);
    cudaError_t e = cudaMalloc(&p->dptr, p->bytesize);
    if (e != cudaSuccess) {
        free(node);
        return e;
    }
    node->alloc = *p;
    if (p->accessDescCount == 1) {
        node->access = p->accessDescs[0];
        node->alloc.accessDescs = &node->access;
    }
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t n,
                                           struct cudaMemAllocNodeParams *p)
{
    if (n->type != cudaGraphNodeTypeMemAlloc)
        return cudaErrorInvalidValue;
    *p = n->alloc;
    return cudaSuccess;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *out, cudaGraph_t g,
                                    const cudaGraphNode_t *deps, size_t n,
                                    void *dptr)
{
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeMemFree);
    node->alloc.dptr = dptr;
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t n, void *dptr_out)
{
    if (n->type != cudaGraphNodeTypeMemFree)
        return cudaErrorInvalidValue;
    memcpy(dptr_out, &n->alloc.dptr, sizeof(void *));
    return cudaSuccess;
}

cudaError_t cudaDeviceGraphMemTrim(int device)
{
    return device == 0 || device == 1 ? cudaSuccess : cudaErrorInvalidDevice;
}

/* Fixed usage figures; the high watermarks reset to 0 only. */
cudaError_t cudaDeviceGetGraphMemAttribute(int device,
                                           enum cudaGraphMemAttributeType a,
                                           void *value)
{
    unsigned long long v = 0;
    if (device != 0 && device != 1)
        return cudaErrorInvalidDevice;
    switch (a) {
    case cudaGraphMemAttrUsedMemCurrent:
    case cudaGraphMemAttrUsedMemHigh:
        v = 1 << 20;
        break;
    case cudaGraphMemAttrReservedMemCurrent:
    case cudaGraphMemAttrReservedMemHigh:
        v = 2 << 20;
        break;
    default:
        return cudaErrorInvalidValue;
    }
    memcpy(value, &v, sizeof(v));
    return cudaSuccess;
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device,
                                           enum cudaGraphMemAttributeType a,
                                           void *value)
{
    unsigned long long v;
    memcpy(&v, value, sizeof(v));
    if (device != 0 && device != 1)
        return cudaErrorInvalidDevice;
    if ((a != cudaGraphMemAttrUsedMemHigh &&
         a != cudaGraphMemAttrReservedMemHigh) || v != 0)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* Conditional nodes: handles count up per graph; bodies never run. */
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *h,
                                             cudaGraph_t g, unsigned value,
                                             unsigned flags)
{
    (void)value;
    (void)flags;
    *h = ++g->next_handle;
    return cudaSuccess;
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *out, cudaGraph_t g,
                             const cudaGraphNode_t *deps,
                             const cudaGraphEdgeData *ed, size_t n,
                             struct cudaGraphNodeParams *p)
{
    (void)ed;
    if (p->type != cudaGraphNodeTypeConditional)
        return cudaErrorNotSupported;
    struct cudaConditionalNodeParams *c = &p->conditional;
    if (c->handle == 0 || c->handle > g->next_handle || c->size == 0 ||
        c->size > MOCK_BODIES)
        return cudaErrorInvalidValue;
    struct CUgraphNode_st *node = node_new(cudaGraphNodeTypeConditional);
    for (unsigned i = 0; i < c->size; i++) {
        cudaGraphCreate(&node->bodies[i], 0);
        c->phGraph_out[i] = node->bodies[i];
    }
    node->nbodies = c->size;
    return add(out, g, deps, n, node);
}

cudaError_t cudaGraphDebugDotPrint(cudaGraph_t g, const char *path,
                                   unsigned int flags)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return cudaErrorOperatingSystem;
    fprintf(f, "digraph mock {\n  // %zu nodes, %zu edges, flags %u\n}\n",
            g->n, g->ne, flags);
    fclose(f);
    return cudaSuccess;
}

/* User objects ------------------------------------------------------------ */

cudaError_t cudaUserObjectCreate(cudaUserObject_t *out, void *ptr,
                                 cudaHostFn_t destroy, unsigned refs,
                                 unsigned flags)
{
    if (destroy == NULL || refs == 0 ||
        flags != cudaUserObjectNoDestructorSync)
        return cudaErrorInvalidValue;
    struct CUuserObject_st *o = malloc(sizeof(*o));
    *o = (struct CUuserObject_st){ptr, destroy, refs};
    *out = o;
    return cudaSuccess;
}

cudaError_t cudaUserObjectRetain(cudaUserObject_t o, unsigned n)
{
    if (n == 0)
        return cudaErrorInvalidValue;
    o->refs += n;
    return cudaSuccess;
}

cudaError_t cudaUserObjectRelease(cudaUserObject_t o, unsigned n)
{
    if (n == 0 || n > o->refs)
        return cudaErrorInvalidValue;
    object_release(o, n);
    return cudaSuccess;
}

cudaError_t cudaGraphRetainUserObject(cudaGraph_t g, cudaUserObject_t o,
                                      unsigned n, unsigned flags)
{
    if (n == 0)
        return cudaErrorInvalidValue;
    for (int i = 0; i < MOCK_GRAPH_OBJECTS; i++)
        if (g->objects[i] == NULL || g->objects[i] == o) {
            g->objects[i] = o;
            g->object_refs[i] += n;
            if (!(flags & cudaGraphUserObjectMove))
                o->refs += n;
            return cudaSuccess;
        }
    return cudaErrorMemoryAllocation;
}

cudaError_t cudaGraphReleaseUserObject(cudaGraph_t g, cudaUserObject_t o,
                                       unsigned n)
{
    for (int i = 0; i < MOCK_GRAPH_OBJECTS; i++)
        if (g->objects[i] == o && n > 0 && n <= g->object_refs[i]) {
            g->object_refs[i] -= n;
            if (g->object_refs[i] == 0)
                g->objects[i] = NULL;
            object_release(o, n);
            return cudaSuccess;
        }
    return cudaErrorInvalidValue;
}

/* Capture into an existing graph, and the capture mode ------------------ */

cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g,
                                          const cudaGraphNode_t *deps,
                                          const cudaGraphEdgeData *ed,
                                          size_t n,
                                          enum cudaStreamCaptureMode mode)
{
    (void)ed;
    (void)mode;
    if (s == NULL || s == cudaStreamLegacy)
        return cudaErrorStreamCaptureUnsupported;
    if (capture_of(s) >= 0)
        return cudaErrorIllegalState;
    for (size_t i = 0; i < n; i++)
        if (!has_node(g, deps[i]))
            return cudaErrorInvalidValue;
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (captures[i].graph == NULL) {
            captures[i].stream = s;
            captures[i].id = ++capture_ids;
            captures[i].graph = g;
            return cudaSuccess;
        }
    return cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s,
                                                cudaGraphNode_t *deps,
                                                const cudaGraphEdgeData *ed,
                                                size_t n, unsigned flags)
{
    (void)ed;
    int i = capture_of(s);
    if (i < 0)
        return cudaErrorIllegalState;
    if (flags > cudaStreamSetCaptureDependencies)
        return cudaErrorInvalidValue;
    for (size_t j = 0; j < n; j++)
        if (!has_node(captures[i].graph, deps[j]))
            return cudaErrorInvalidValue;
    return cudaSuccess;
}

static _Thread_local enum cudaStreamCaptureMode thread_mode;

cudaError_t cudaThreadExchangeStreamCaptureMode(
    enum cudaStreamCaptureMode *mode)
{
    enum cudaStreamCaptureMode old = thread_mode;
    if (*mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    thread_mode = *mode;
    *mode = old;
    return cudaSuccess;
}
