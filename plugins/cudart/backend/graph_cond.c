/*
 * Conditional nodes (40-graphs.api): the handle is CUDA's value, which
 * kernels set on the device; the body graphs belong to their node and get
 * ids the client fills them through.
 */
#include "graphs.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* Switch nodes may have many bodies; more than this is refused. */
#define COND_SIZE_MAX 1024u

int cudart_be_cond_handle_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t value, flags;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &value);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaGraphConditionalHandle h = 0;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    cudaError_t e = g != NULL ? cudart_be_enter(call) : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaGraphConditionalHandleCreate(&h, g->g, value, flags);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, h);
    return c.rc;
}

/* Registers the bodies; a body that cannot get an id fails the call (the
 * node stays: CUDA has no way to take it back but destroying it). */
static cudaError_t put_bodies(struct apigen_call *c, cudaGraphNode_t node,
                              struct gvs_remote_graph *g, cudaGraph_t *bodies,
                              uint32_t n)
{
    uint64_t nid = be_remote->node_id(g, node);
    if (nid == 0)
        return cudaErrorMemoryAllocation;
    for (uint32_t i = 0; i < n; i++)
        if (be_remote->graph_of(bodies[i], 0) == NULL)
            return cudaErrorMemoryAllocation;
    apigen_put_i32(c, cudaSuccess);
    apigen_put_u64(c, nid);
    apigen_put_u32(c, n);
    for (uint32_t i = 0; i < n; i++)
        apigen_put_u64(c, be_remote->graph_known(bodies[i])->id);
    return cudaSuccess;
}

int cudart_be_graph_add_conditional(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, handle;
    int32_t type;
    uint32_t ndeps, size;
    cudaGraphEdgeData *edges = NULL;
    cudaGraph_t *bodies = NULL;
    cudaError_t e = cudaSuccess;
    apigen_get_u64(&c, &id);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    if (g == NULL)
        e = cudaErrorInvalidValue;
    cudaGraphNode_t *deps = be_get_deps_edges(&c, g, &ndeps, &edges, &e);
    apigen_get_u64(&c, &handle);
    apigen_get_i32(&c, &type);
    apigen_get_u32(&c, &size);
    if (c.rc == 0 && (size == 0 || size > COND_SIZE_MAX))
        c.rc = GVS_E_RANGE;
    if (c.rc == 0 && (bodies = gvs_calloc(size, sizeof(*bodies))) == NULL)
        c.rc = GVS_E_NOMEM;
    if (apigen_end(&c) == 0) {
        struct cudaGraphNodeParams p = {.type = cudaGraphNodeTypeConditional};
        cudaGraphNode_t node = NULL;
        p.conditional.handle = handle;
        p.conditional.type = (enum cudaGraphConditionalNodeType)type;
        p.conditional.size = size;
        p.conditional.phGraph_out = bodies;
        if (e == cudaSuccess)
            e = cudart_be_enter(call);
        if (e == cudaSuccess)
            e = cudaGraphAddNode(&node, g->g, deps, edges, ndeps, &p);
        if (e == cudaSuccess)
            e = put_bodies(&c, node, g, bodies, size);
        if (e != cudaSuccess)
            apigen_put_i32(&c, e);
    }
    be_remote->graphs_unlock();
    gvs_free(deps);
    gvs_free(edges);
    gvs_free(bodies);
    return c.rc;
}
