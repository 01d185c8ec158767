/*
 * Graphs and executable graphs: ids, lifetime, topology queries,
 * instantiation, launch (graphs.h).
 */
#include "graphs.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

cudaGraphNode_t *be_get_nodes(struct apigen_call *c,
                              struct gvs_remote_graph *g, uint32_t *n,
                              cudaError_t *e)
{
    apigen_get_u32(c, n);
    if (c->rc < 0 || *n == 0)
        return NULL;
    /* Every id takes 8 bytes of the request: a count it cannot hold is
     * refused before anything is allocated. */
    if ((uint64_t)*n * 8 > gvs_buf_len(c->get)) {
        c->rc = GVS_E_RANGE;
        return NULL;
    }
    cudaGraphNode_t *v = gvs_calloc(*n, sizeof(*v));
    if (v == NULL)
        c->rc = GVS_E_NOMEM;
    for (uint32_t i = 0; v != NULL && i < *n && c->rc == 0; i++) {
        uint64_t id;
        apigen_get_u64(c, &id);
        struct gvs_remote_node *node = be_remote->node_get(id);
        if (node == NULL || node->graph != g)
            *e = cudaErrorInvalidValue;
        else
            v[i] = node->n;
    }
    return v;
}

cudaError_t be_graph_exec(uint64_t wire, cudaGraphExec_t *out)
{
    *out = be_remote->exec_get(wire);
    return *out != NULL ? cudaSuccess : cudaErrorInvalidValue;
}

cudaGraphNode_t *be_get_deps_edges(struct apigen_call *c,
                                   struct gvs_remote_graph *g, uint32_t *n,
                                   cudaGraphEdgeData **edges, cudaError_t *e)
{
    *edges = NULL;
    apigen_get_u32(c, n);
    if (c->rc < 0 || *n == 0)
        return NULL;
    /* Every dependency takes 11 bytes of the request. */
    if ((uint64_t)*n * 11 > gvs_buf_len(c->get)) {
        c->rc = GVS_E_RANGE;
        return NULL;
    }
    cudaGraphNode_t *v = gvs_calloc(*n, sizeof(*v));
    *edges = gvs_calloc(*n, sizeof(**edges));
    if (v == NULL || *edges == NULL)
        c->rc = GVS_E_NOMEM;
    for (uint32_t i = 0; c->rc == 0 && i < *n; i++) {
        uint64_t id;
        apigen_get_u64(c, &id);
        apigen_get_u8(c, &(*edges)[i].from_port);
        apigen_get_u8(c, &(*edges)[i].to_port);
        apigen_get_u8(c, &(*edges)[i].type);
        struct gvs_remote_node *node = be_remote->node_get(id);
        if (node != NULL && g != NULL && node->graph == g)
            v[i] = node->n;
        else if (*e == cudaSuccess)
            *e = cudaErrorInvalidValue;
    }
    return v;
}

int cudart_be_graph_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaGraph_t cg = NULL;
    uint64_t id = 0;
    cudaError_t e = cudaGraphCreate(&cg, flags);
    if (e == cudaSuccess) {
        be_remote->graphs_lock();
        struct gvs_remote_graph *g = be_remote->graph_of(cg, 1);
        be_remote->graphs_unlock();
        if (g != NULL) {
            id = g->id;
        } else {
            (void)cudaGraphDestroy(cg);
            e = cudaErrorMemoryAllocation;
        }
    }
    be_reply_u64(&c, e, id);
    return c.rc;
}

/* A graph the session did not make its own (a child graph, a capture's
 * graph in flight) is not the session's to destroy. */
int cudart_be_graph_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    cudaError_t e = g == NULL ? cudaErrorInvalidValue
                    : !g->owned ? cudaErrorInvalidValue
                                : cudaGraphDestroy(g->g);
    if (e == cudaSuccess) {
        be_quota_release_owner((uint64_t)(uintptr_t)g->g);
        be_remote->graph_forget(g);
    }
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_graph_clone(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id), *clone = NULL;
    cudaGraph_t cg = NULL;
    cudaError_t e = g != NULL ? cudaGraphClone(&cg, g->g)
                              : cudaErrorInvalidValue;
    if (e == cudaSuccess && (clone = be_remote->graph_of(cg, 1)) == NULL) {
        (void)cudaGraphDestroy(cg);
        e = cudaErrorMemoryAllocation;
    }
    be_remote->graphs_unlock();
    be_reply_u64(&c, e, clone != NULL ? clone->id : 0);
    return c.rc;
}

int cudart_be_graph_instantiate(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, flags, stream;
    apigen_get_u64(&c, &id);
    apigen_get_u64(&c, &flags);
    apigen_get_u64(&c, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaGraphInstantiateParams p = {.flags = flags};
    cudaGraphExec_t x = NULL;
    uint64_t xid = 0, err_node = 0;
    cudaError_t e = cudart_be_enter(call);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    if (e == cudaSuccess && g == NULL)
        e = cudaErrorInvalidValue;
    /* Only an upload asks for a stream. */
    if (e == cudaSuccess && (flags & cudaGraphInstantiateFlagUpload))
        e = be_stream(call, stream, &p.uploadStream);
    if (e == cudaSuccess) {
        e = cudaGraphInstantiateWithParams(&x, g->g, &p);
        err_node = be_remote->node_id(g, p.errNode_out);
    }
    be_remote->graphs_unlock();
    if (e == cudaSuccess && be_remote->exec_add(x, &xid) < 0) {
        (void)cudaGraphExecDestroy(x);
        e = cudaErrorMemoryAllocation;
    }
    apigen_put_i32(&c, e);
    apigen_put_u64(&c, xid);
    apigen_put_i32(&c, p.result_out);
    apigen_put_u64(&c, err_node);
    return c.rc;
}

int cudart_be_graph_exec_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaGraphExec_t x = be_remote->exec_get(id);
    cudaError_t e = x != NULL ? cudart_be_enter(call) : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaGraphExecDestroy(x);
    if (e == cudaSuccess)
        be_remote->exec_forget(id);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_graph_exec_update(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t xid, gid;
    apigen_get_u64(&c, &xid);
    apigen_get_u64(&c, &gid);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaGraphExecUpdateResultInfo info = {0};
    uint64_t err = 0, from = 0;
    cudaGraphExec_t x = be_remote->exec_get(xid);
    cudaError_t e = x != NULL ? cudart_be_enter(call) : cudaErrorInvalidValue;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(gid);
    if (e == cudaSuccess && g == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        e = cudaGraphExecUpdate(x, g->g, &info);
        err = be_remote->node_id(g, info.errorNode);
        from = be_remote->node_id(g, info.errorFromNode);
    }
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    apigen_put_i32(&c, info.result);
    apigen_put_u64(&c, err);
    apigen_put_u64(&c, from);
    return c.rc;
}

/* Topology ---------------------------------------------------------------- */

/* Room the client may ask for: what one reply can carry. */
#define NODES_MAX (1u << 20)

/* Replies i32, u64 total, u32 n, then n node ids (and, with edges, the
 * edge data of each). */
static void put_nodes(struct apigen_call *c, struct gvs_remote_graph *g,
                      const cudaGraphNode_t *v, const cudaGraphEdgeData *ed,
                      size_t total, uint64_t room)
{
    uint32_t n = (uint32_t)(total < room ? total : room);
    apigen_put_i32(c, cudaSuccess);
    apigen_put_u64(c, total);
    apigen_put_u32(c, n);
    for (uint32_t i = 0; i < n; i++) {
        apigen_put_u64(c, be_remote->node_id(g, v[i]));
        if (ed != NULL) {
            apigen_put_u8(c, ed[i].from_port);
            apigen_put_u8(c, ed[i].to_port);
            apigen_put_u8(c, ed[i].type);
        }
    }
}

/* Decodes a listing request: u64 id, u8 which (0 or 1; absent when which
 * is NULL), u64 room (at most NODES_MAX).  Negative GVS_E_* when
 * malformed. */
static int get_listing(struct apigen_call *c, uint64_t *id, uint8_t *which,
                       uint64_t *room)
{
    apigen_get_u64(c, id);
    if (which != NULL)
        apigen_get_u8(c, which);
    apigen_get_u64(c, room);
    if (apigen_end(c) < 0)
        return c->rc;
    if ((which != NULL && *which > 1) || *room > NODES_MAX)
        return GVS_E_PROTO;
    return 0;
}

int cudart_be_graph_nodes(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, room;
    uint8_t which;
    int rc = get_listing(&c, &id, &which, &room);
    if (rc < 0)
        return rc;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    size_t total = 0;
    cudaGraphNode_t *v = NULL;
    cudaError_t e = g == NULL ? cudaErrorInvalidValue
                    : which   ? cudaGraphGetRootNodes(g->g, NULL, &total)
                              : cudaGraphGetNodes(g->g, NULL, &total);
    if (e == cudaSuccess && total > 0) {
        v = gvs_calloc(total, sizeof(*v));
        e = v == NULL ? cudaErrorMemoryAllocation
            : which   ? cudaGraphGetRootNodes(g->g, v, &total)
                      : cudaGraphGetNodes(g->g, v, &total);
    }
    if (e == cudaSuccess)
        put_nodes(&c, g, v, NULL, total, room);
    else
        apigen_put_i32(&c, e);
    be_remote->graphs_unlock();
    gvs_free(v);
    return c.rc;
}

int cudart_be_graph_edges(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, room;
    int rc = get_listing(&c, &id, NULL, &room);
    if (rc < 0)
        return rc;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    size_t total = 0;
    cudaGraphNode_t *from = NULL, *to = NULL;
    cudaGraphEdgeData *ed = NULL;
    cudaError_t e = g != NULL
                        ? cudaGraphGetEdges(g->g, NULL, NULL, NULL, &total)
                        : cudaErrorInvalidValue;
    if (e == cudaSuccess && total > 0) {
        from = gvs_calloc(total, sizeof(*from));
        to = gvs_calloc(total, sizeof(*to));
        ed = gvs_calloc(total, sizeof(*ed));
        e = from && to && ed ? cudaGraphGetEdges(g->g, from, to, ed, &total)
                             : cudaErrorMemoryAllocation;
    }
    if (e == cudaSuccess) {
        uint32_t n = (uint32_t)(total < room ? total : room);
        apigen_put_i32(&c, cudaSuccess);
        apigen_put_u64(&c, total);
        apigen_put_u32(&c, n);
        for (uint32_t i = 0; i < n; i++) {
            apigen_put_u64(&c, be_remote->node_id(g, from[i]));
            apigen_put_u64(&c, be_remote->node_id(g, to[i]));
            apigen_put_u8(&c, ed[i].from_port);
            apigen_put_u8(&c, ed[i].to_port);
            apigen_put_u8(&c, ed[i].type);
        }
    } else {
        apigen_put_i32(&c, e);
    }
    be_remote->graphs_unlock();
    gvs_free(from);
    gvs_free(to);
    gvs_free(ed);
    return c.rc;
}

int cudart_be_node_edges(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, room;
    uint8_t which;
    int rc = get_listing(&c, &id, &which, &room);
    if (rc < 0)
        return rc;
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(id);
    size_t total = 0;
    cudaGraphNode_t *v = NULL;
    cudaGraphEdgeData *ed = NULL;
    cudaError_t e =
        n == NULL ? cudaErrorInvalidValue
        : which   ? cudaGraphNodeGetDependentNodes(n->n, NULL, NULL, &total)
                  : cudaGraphNodeGetDependencies(n->n, NULL, NULL, &total);
    if (e == cudaSuccess && total > 0) {
        v = gvs_calloc(total, sizeof(*v));
        ed = gvs_calloc(total, sizeof(*ed));
        e = v == NULL || ed == NULL ? cudaErrorMemoryAllocation
            : which ? cudaGraphNodeGetDependentNodes(n->n, v, ed, &total)
                    : cudaGraphNodeGetDependencies(n->n, v, ed, &total);
    }
    if (e == cudaSuccess)
        put_nodes(&c, n->graph, v, ed, total, room);
    else
        apigen_put_i32(&c, e);
    be_remote->graphs_unlock();
    gvs_free(v);
    gvs_free(ed);
    return c.rc;
}

int cudart_be_node_get_type(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(id);
    enum cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    cudaError_t e = n != NULL ? cudaGraphNodeGetType(n->n, &type)
                              : cudaErrorInvalidValue;
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, type);
    return c.rc;
}

int cudart_be_node_find_in_clone(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t nid, gid, out = 0;
    apigen_get_u64(&c, &nid);
    apigen_get_u64(&c, &gid);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(nid);
    struct gvs_remote_graph *g = be_remote->graph_get(gid);
    cudaGraphNode_t found = NULL;
    cudaError_t e = n != NULL && g != NULL
                        ? cudaGraphNodeFindInClone(&found, n->n, g->g)
                        : cudaErrorInvalidValue;
    if (e == cudaSuccess && (out = be_remote->node_id(g, found)) == 0)
        e = cudaErrorMemoryAllocation;
    be_remote->graphs_unlock();
    be_reply_u64(&c, e, out);
    return c.rc;
}

int cudart_be_graph_edit_edges(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint8_t remove;
    uint32_t n;
    apigen_get_u64(&c, &id);
    apigen_get_u8(&c, &remove);
    apigen_get_u32(&c, &n);
    if (c.rc == 0 && (remove > 1 || (uint64_t)n * 19 > gvs_buf_len(c.get)))
        return GVS_E_RANGE;
    if (c.rc < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    cudaError_t e = g != NULL ? cudaSuccess : cudaErrorInvalidValue;
    cudaGraphNode_t *from = n ? gvs_calloc(n, sizeof(*from)) : NULL;
    cudaGraphNode_t *to = n ? gvs_calloc(n, sizeof(*to)) : NULL;
    cudaGraphEdgeData *ed = n ? gvs_calloc(n, sizeof(*ed)) : NULL;
    if (n && (from == NULL || to == NULL || ed == NULL))
        c.rc = GVS_E_NOMEM;
    for (uint32_t i = 0; i < n && c.rc == 0; i++) {
        uint64_t f, t;
        apigen_get_u64(&c, &f);
        apigen_get_u64(&c, &t);
        apigen_get_u8(&c, &ed[i].from_port);
        apigen_get_u8(&c, &ed[i].to_port);
        apigen_get_u8(&c, &ed[i].type);
        struct gvs_remote_node *nf = be_remote->node_get(f);
        struct gvs_remote_node *nt = be_remote->node_get(t);
        if (nf == NULL || nt == NULL || nf->graph != g || nt->graph != g) {
            e = cudaErrorInvalidValue;
        } else {
            from[i] = nf->n;
            to[i] = nt->n;
        }
    }
    if (apigen_end(&c) == 0) {
        if (e == cudaSuccess)
            e = remove ? cudaGraphRemoveDependencies(g->g, from, to, ed, n)
                       : cudaGraphAddDependencies(g->g, from, to, ed, n);
        apigen_put_i32(&c, e);
    }
    be_remote->graphs_unlock();
    gvs_free(from);
    gvs_free(to);
    gvs_free(ed);
    return c.rc;
}

int cudart_be_node_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(id);
    cudaError_t e = n != NULL ? cudaGraphDestroyNode(n->n)
                              : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        be_remote->node_forget(n);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_graph_add_node(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, nid = 0;
    uint32_t ndeps;
    cudaError_t e = cudaSuccess;
    apigen_get_u64(&c, &id);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    if (g == NULL)
        e = cudaErrorInvalidValue;
    cudaGraphNode_t *deps = be_get_nodes(&c, g, &ndeps, &e), node = NULL;
    int rc = c.rc == 0 ? be_add_node(call, &c, g, deps, ndeps, &node, &e)
                       : c.rc;
    if (rc == 0 && e == cudaSuccess &&
        (nid = be_remote->node_id(g, node)) == 0) {
        (void)cudaGraphDestroyNode(node);
        e = cudaErrorMemoryAllocation;
    }
    be_remote->graphs_unlock();
    gvs_free(deps);
    if (rc < 0)
        return rc;
    be_reply_u64(&c, e, nid);
    return c.rc;
}

int cudart_be_node_set_params(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t xid, nid;
    cudaError_t e = cudaSuccess;
    apigen_get_u64(&c, &xid);
    apigen_get_u64(&c, &nid);
    if (c.rc < 0)
        return c.rc;
    cudaGraphExec_t x = xid != 0 ? be_remote->exec_get(xid) : NULL;
    if (xid != 0 && x == NULL)
        e = cudaErrorInvalidValue;
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(nid);
    if (n == NULL)
        e = cudaErrorInvalidValue;
    int rc = be_set_node_params(call, &c, x, n, &e);
    be_remote->graphs_unlock();
    if (rc < 0)
        return rc;
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_node_enabled(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t xid, nid;
    uint8_t set;
    uint32_t enabled;
    apigen_get_u64(&c, &xid);
    apigen_get_u64(&c, &nid);
    apigen_get_u8(&c, &set);
    apigen_get_u32(&c, &enabled);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (set > 1)
        return GVS_E_PROTO;
    cudaGraphExec_t x = be_remote->exec_get(xid);
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(nid);
    unsigned got = 0;
    cudaError_t e = x == NULL || n == NULL ? cudaErrorInvalidValue
                    : set ? cudaGraphNodeSetEnabled(x, n->n, enabled)
                          : cudaGraphNodeGetEnabled(x, n->n, &got);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u32(&c, set ? enabled : got);
    return c.rc;
}
