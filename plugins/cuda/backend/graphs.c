/* CUDA graphs and stream capture (cuda.api, "CUDA graphs"): graphs,
 * nodes and executable graphs as the layer's ids (remote_be.h), so that
 * a graph either API made is the same graph to the other. */
#include "graph.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* Room a listing may ask for: what one reply can carry. */
#define NODES_MAX (1u << 20)

CUresult cuda_be_graph_exec(uint64_t wire, CUgraphExec *out)
{
    *out = cuda_be_remote->exec_get(wire);
    return *out != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuda_be_graph_node(uint64_t wire, CUgraphNode *out)
{
    cuda_be_remote->graphs_lock();
    struct gvs_remote_node *n = cuda_be_remote->node_get(wire);
    *out = n != NULL ? n->n : NULL;
    cuda_be_remote->graphs_unlock();
    return *out != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The reply of a handler that decoded while it worked: the decoding's
 * refusal, else the result. */
static int reply(struct apigen_call *c, CUresult r)
{
    if (c->rc < 0)
        return c->rc;
    apigen_put_i32(c, r);
    return c->rc;
}

/* Caller holds the graphs lock.  The graph of id, after entering the
 * lane: CUDA_ERROR_INVALID_VALUE for an id that is none. */
static CUresult enter_graph(struct gvs_call *call, uint64_t id,
                            struct gvs_remote_graph **g)
{
    CUresult r = cuda_be_enter(call);
    *g = cuda_be_remote->graph_get(id);
    return r == CUDA_SUCCESS && *g == NULL ? CUDA_ERROR_INVALID_VALUE : r;
}

/* Caller holds the graphs lock.  A graph the driver made, given an id
 * the session owns (destroyed by it), or destroyed again. */
static CUresult own(CUresult r, CUgraph cg, uint64_t *id)
{
    *id = 0;
    if (r != CUDA_SUCCESS || cg == NULL)
        return r;
    struct gvs_remote_graph *g = cuda_be_remote->graph_of(cg, 1);
    if (g == NULL) {
        (void)CUDA_DRV(cuGraphDestroy)(cg);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *id = g->id;
    return CUDA_SUCCESS;
}

/* Request: u32 flags.  Reply: i32, u64 graph. */
int cuda_be_graph_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    uint64_t id = 0;
    CUgraph cg = NULL;
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphCreate)(&cg, flags);
    cuda_be_remote->graphs_lock();
    r = own(r, cg, &id);
    cuda_be_remote->graphs_unlock();
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* Request: u64 graph.  Reply: i32.  A graph the session does not own (a
 * capture's in flight, a child node's) is not its to destroy. */
int cuda_be_graph_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    struct gvs_remote_graph *g;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    cuda_be_remote->graphs_lock();
    CUresult r = enter_graph(call, id, &g);
    if (r == CUDA_SUCCESS && !g->owned)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphDestroy)(g->g);
    if (r == CUDA_SUCCESS) {
        cuda_be_remote->quota_release_owner((uint64_t)(uintptr_t)g->g);
        cuda_be_remote->graph_forget(g);
    }
    cuda_be_remote->graphs_unlock();
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Caller holds the graphs lock.  Decodes u32 n, n x u64 node into an
 * array of g's nodes the caller frees (NULL when n is 0); an id that is
 * no node of g makes *r CUDA_ERROR_INVALID_VALUE, decoding going on. */
static CUgraphNode *get_nodes(struct apigen_call *c,
                              struct gvs_remote_graph *g, uint32_t *n,
                              CUresult *r)
{
    apigen_get_u32(c, n);
    /* Each id is 8 bytes of the request: a count it cannot hold is
     * malformed, refused before anything is allocated. */
    if (c->rc == 0 && (uint64_t)*n * 8 > gvs_buf_len(c->get))
        c->rc = GVS_E_RANGE;
    if (c->rc < 0 || *n == 0)
        return NULL;
    CUgraphNode *v = gvs_calloc(*n, sizeof(*v));
    if (v == NULL)
        c->rc = GVS_E_NOMEM;
    for (uint32_t i = 0; v != NULL && i < *n && c->rc == 0; i++) {
        uint64_t id;
        apigen_get_u64(c, &id);
        struct gvs_remote_node *node = cuda_be_remote->node_get(id);
        if (node != NULL && node->graph == g)
            v[i] = node->n;
        else
            *r = CUDA_ERROR_INVALID_VALUE;
    }
    return v;
}

/* Request: u64 graph, the dependencies, node parameters.  Reply: i32,
 * u64 node. */
int cuda_be_graph_add_node(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, nid = 0;
    uint32_t ndeps;
    struct gvs_remote_graph *g = NULL;
    struct cuda_be_node_buf *nb = gvs_calloc(1, sizeof(*nb));
    CUgraphNodeParams p;
    CUgraphNode node = NULL;
    if (nb == NULL)
        return GVS_E_NOMEM;
    apigen_get_u64(&c, &id);
    cuda_be_remote->graphs_lock();
    CUresult r = c.rc == 0 ? enter_graph(call, id, &g) : CUDA_SUCCESS;
    CUgraphNode *deps = get_nodes(&c, g, &ndeps, &r);
    CUresult pr = c.rc == 0 ? cuda_be_get_node_params(&c, nb, &p)
                            : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        r = pr;
    if (apigen_end(&c) == 0 && r == CUDA_SUCCESS &&
        (r = cuda_be_graph_mem_take(&p)) == CUDA_SUCCESS) {
        r = CUDA_DRV(cuGraphAddNode)(&node, g->g, deps, ndeps, &p);
        cuda_be_graph_mem_settle(&p, r, g->g);
        if (r == CUDA_SUCCESS)
            cuda_be_host_give(&nb->host, g->g);
    }
    if (c.rc == 0 && r == CUDA_SUCCESS &&
        (nid = cuda_be_remote->node_id(g, node)) == 0) {
        (void)CUDA_DRV(cuGraphDestroyNode)(node);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (c.rc == 0)
        cuda_be_node_reply(&c, r, nid, &p);
    cuda_be_remote->graphs_unlock();
    cuda_be_node_buf_free(nb);
    gvs_free(nb);
    gvs_free(deps);
    return c.rc;
}

/* Request: u64 executable graph (0: none), u64 node, node parameters.
 * Reply: i32. */
int cuda_be_node_set_params(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t xid, nid;
    struct cuda_be_node_buf *nb = gvs_calloc(1, sizeof(*nb));
    CUgraphNodeParams p;
    if (nb == NULL)
        return GVS_E_NOMEM;
    apigen_get_u64(&c, &xid);
    apigen_get_u64(&c, &nid);
    CUresult r = cuda_be_enter(call);
    CUgraphExec x = xid != 0 ? cuda_be_remote->exec_get(xid) : NULL;
    cuda_be_remote->graphs_lock();
    struct gvs_remote_node *n = cuda_be_remote->node_get(nid);
    if (r == CUDA_SUCCESS && (n == NULL || (xid != 0 && x == NULL)))
        r = CUDA_ERROR_INVALID_VALUE;
    CUresult pr = c.rc == 0 ? cuda_be_get_node_params(&c, nb, &p)
                            : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        r = pr;
    if (apigen_end(&c) == 0 && r == CUDA_SUCCESS &&
        (r = x != NULL ? CUDA_DRV(cuGraphExecNodeSetParams)(x, n->n, &p)
                       : CUDA_DRV(cuGraphNodeSetParams)(n->n, &p)) ==
            CUDA_SUCCESS)
        cuda_be_host_give(&nb->host, x != NULL ? NULL : n->graph->g);
    cuda_be_remote->graphs_unlock();
    cuda_be_node_buf_free(nb);
    gvs_free(nb);
    return reply(&c, r);
}

/* Request: u64 graph, u64 flags.  Reply: i32, u64 executable graph. */
int cuda_be_graph_instantiate(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, flags, xid = 0;
    struct gvs_remote_graph *g;
    CUgraphExec x = NULL;
    apigen_get_u64(&c, &id);
    apigen_get_u64(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cuda_be_remote->graphs_lock();
    CUresult r = enter_graph(call, id, &g);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphInstantiateWithFlags)(&x, g->g, flags);
    cuda_be_remote->graphs_unlock();
    if (r == CUDA_SUCCESS && cuda_be_remote->exec_add(x, &xid) < 0) {
        (void)CUDA_DRV(cuGraphExecDestroy)(x);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    cuda_be_reply_id(&c, r, xid);
    return c.rc;
}

/* Request: u64 executable graph.  Reply: i32. */
int cuda_be_graph_exec_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUgraphExec x = NULL;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_graph_exec(id, &x);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphExecDestroy)(x);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->exec_forget(id);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: u64 executable graph, u64 graph.  Reply: i32, i32 update
 * result, u64 error node, u64 error-from node. */
int cuda_be_graph_exec_update(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t xid, gid, err = 0, from = 0;
    struct gvs_remote_graph *g;
    CUgraphExecUpdateResultInfo info = {0};
    CUgraphExec x = NULL;
    apigen_get_u64(&c, &xid);
    apigen_get_u64(&c, &gid);
    if (apigen_end(&c) < 0)
        return c.rc;
    cuda_be_remote->graphs_lock();
    CUresult r = enter_graph(call, gid, &g);
    if (r == CUDA_SUCCESS)
        r = cuda_be_graph_exec(xid, &x);
    int updated = r == CUDA_SUCCESS;
    if (updated) {
        r = CUDA_DRV(cuGraphExecUpdate_v2)(x, g->g, &info);
        err = cuda_be_remote->node_id(g, info.errorNode);
        from = cuda_be_remote->node_id(g, info.errorFromNode);
    }
    cuda_be_remote->graphs_unlock();
    apigen_put_i32(&c, r);
    /* The driver's result info comes with its failed update too; an
     * update of objects the session does not hold is the bare result. */
    if (updated) {
        apigen_put_i32(&c, info.result);
        apigen_put_u64(&c, err);
        apigen_put_u64(&c, from);
    }
    return c.rc;
}

/* Request: u64 stream.  Reply: i32, u64 graph (0: none).  The capture's
 * graph, known by its id while in flight, becomes the session's. */
int cuda_be_stream_end_capture(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t swire, id = 0;
    CUstream s = NULL;
    CUgraph cg = NULL;
    apigen_get_u64(&c, &swire);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, swire, &s);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamEndCapture)(s, &cg);
    cuda_be_remote->graphs_lock();
    r = own(r, cg, &id);
    cuda_be_remote->graphs_unlock();
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* A listing's request: u64 graph or node, u8 which (at most max), u64
 * room (at most NODES_MAX).  Malformed: a negative GVS_E_* code. */
static int get_listing(struct apigen_call *c, uint64_t *id, uint8_t *which,
                       uint8_t max, uint64_t *room)
{
    apigen_get_u64(c, id);
    apigen_get_u8(c, which);
    apigen_get_u64(c, room);
    if (apigen_end(c) < 0)
        return c->rc;
    return *which > max || *room > NODES_MAX ? GVS_E_PROTO : 0;
}

/* Request: u64 graph, u8 which, u64 room.  Reply: i32, u64 total, u32
 * n, n x u64 node. */
int cuda_be_graph_nodes(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, room;
    uint8_t which;
    struct gvs_remote_graph *g;
    int rc = get_listing(&c, &id, &which, 1, &room);
    if (rc < 0)
        return rc;
    __typeof__(cuda_be_drv.cuGraphGetNodes) list = NULL;
    size_t total = 0;
    CUgraphNode *v = NULL;
    cuda_be_remote->graphs_lock();
    CUresult r = enter_graph(call, id, &g);
    if (r == CUDA_SUCCESS) {
        list = which ? CUDA_DRV(cuGraphGetRootNodes)
                     : CUDA_DRV(cuGraphGetNodes);
        r = list(g->g, NULL, &total);
    }
    if (r == CUDA_SUCCESS && total > 0) {
        v = gvs_calloc(total, sizeof(*v));
        r = v != NULL ? list(g->g, v, &total) : CUDA_ERROR_OUT_OF_MEMORY;
    }
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        uint32_t n = (uint32_t)(total < room ? total : room);
        apigen_put_u64(&c, total);
        apigen_put_u32(&c, n);
        for (uint32_t i = 0; i < n; i++)
            apigen_put_u64(&c, cuda_be_remote->node_id(g, v[i]));
    }
    cuda_be_remote->graphs_unlock();
    gvs_free(v);
    return c.rc;
}

/* Request: u64 graph, u8 remove, u32 n, n x {u64 from, u64 to}.  Reply:
 * i32. */
int cuda_be_graph_edit_edges(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint8_t remove;
    uint32_t n;
    struct gvs_remote_graph *g = NULL;
    apigen_get_u64(&c, &id);
    apigen_get_u8(&c, &remove);
    if (c.rc == 0 && remove > 1)
        return GVS_E_PROTO;
    cuda_be_remote->graphs_lock();
    CUresult r = c.rc == 0 ? enter_graph(call, id, &g) : CUDA_SUCCESS;
    /* The pairs are two lists of n: from, then to. */
    CUgraphNode *from = get_nodes(&c, g, &n, &r), *to = NULL;
    uint32_t nto = 0;
    if (c.rc == 0)
        to = get_nodes(&c, g, &nto, &r);
    if (c.rc == 0 && nto != n)
        c.rc = GVS_E_PROTO;
    if (apigen_end(&c) == 0 && r == CUDA_SUCCESS)
        r = remove ? CUDA_DRV(cuGraphRemoveDependencies)(g->g, from, to, n)
                   : CUDA_DRV(cuGraphAddDependencies)(g->g, from, to, n);
    cuda_be_remote->graphs_unlock();
    gvs_free(from);
    gvs_free(to);
    return reply(&c, r);
}

/* Request: u64 graph.  Reply: i32, u64 the clone. */
int cuda_be_graph_clone(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, out = 0;
    struct gvs_remote_graph *g;
    CUgraph cg = NULL;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    cuda_be_remote->graphs_lock();
    CUresult r = enter_graph(call, id, &g);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphClone)(&cg, g->g);
    r = own(r, cg, &out);
    cuda_be_remote->graphs_unlock();
    cuda_be_reply_id(&c, r, out);
    return c.rc;
}

/* Request: u64 node, u64 clone.  Reply: i32, u64 node of the clone. */
int cuda_be_node_find_in_clone(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t nid, gid, out = 0;
    struct gvs_remote_graph *g;
    CUgraphNode found = NULL;
    apigen_get_u64(&c, &nid);
    apigen_get_u64(&c, &gid);
    if (apigen_end(&c) < 0)
        return c.rc;
    cuda_be_remote->graphs_lock();
    CUresult r = enter_graph(call, gid, &g);
    struct gvs_remote_node *n = cuda_be_remote->node_get(nid);
    if (r == CUDA_SUCCESS && n == NULL)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphNodeFindInClone)(&found, n->n, g->g);
    if (r == CUDA_SUCCESS && (out = cuda_be_remote->node_id(g, found)) == 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    cuda_be_remote->graphs_unlock();
    cuda_be_reply_id(&c, r, out);
    return c.rc;
}

/* Request: u64 node.  Reply: i32. */
int cuda_be_node_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    cuda_be_remote->graphs_lock();
    struct gvs_remote_node *n = cuda_be_remote->node_get(id);
    if (r == CUDA_SUCCESS && n == NULL)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphDestroyNode)(n->n);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->node_forget(n);
    cuda_be_remote->graphs_unlock();
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Most dependencies a capture's reply lists. */
#define DEPS_MAX (1u << 16)

/* Request: u64 stream.  Reply: see cuda.api.  The graph in flight gets
 * an id the session does not own: the capture's end gives it. */
int cuda_be_capture_graph(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t swire, gid = 0;
    CUstream s = NULL;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    CUgraph cg = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t n = 0;
    apigen_get_u64(&c, &swire);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, swire, &s);
    cuda_be_remote->graphs_lock();
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamGetCaptureInfo_v3)(s, &status, &cid, &cg, &deps,
                                                &edges, &n);
    struct gvs_remote_graph *g =
        r == CUDA_SUCCESS && cg != NULL ? cuda_be_remote->graph_of(cg, 0)
                                        : NULL;
    if (cg != NULL && g == NULL && r == CUDA_SUCCESS)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS && n > DEPS_MAX)
        r = CUDA_ERROR_NOT_SUPPORTED;
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        gid = g != NULL ? g->id : 0;
        apigen_put_i32(&c, (int32_t)status);
        apigen_put_u64(&c, cid);
        apigen_put_u64(&c, gid);
        apigen_put_u32(&c, g != NULL ? (uint32_t)n : 0);
        for (size_t i = 0; g != NULL && i < n; i++) {
            apigen_put_u64(&c, cuda_be_remote->node_id(g, deps[i]));
            apigen_put_u8(&c, edges != NULL ? edges[i].from_port : 0);
            apigen_put_u8(&c, edges != NULL ? edges[i].to_port : 0);
            apigen_put_u8(&c, edges != NULL ? edges[i].type : 0);
        }
    }
    cuda_be_remote->graphs_unlock();
    return c.rc;
}

/* Caller holds the graphs lock.  The edges of which (cuda.api,
 * GRAPH_EDGES) into from, to and ed (each room for *n, or NULL for the
 * count in *n); a node's own end is node. */
static CUresult edges(uint8_t which, struct gvs_remote_graph *g,
                      CUgraphNode node, CUgraphNode *from, CUgraphNode *to,
                      CUgraphEdgeData *ed, size_t *n)
{
    if (which == 0)
        return CUDA_DRV(cuGraphGetEdges_v2)(g->g, from, to, ed, n);
    CUgraphNode *other = which == 1 ? from : to;
    CUgraphNode *self = which == 1 ? to : from;
    CUresult r = which == 1
                     ? CUDA_DRV(cuGraphNodeGetDependencies_v2)(node, other,
                                                               ed, n)
                     : CUDA_DRV(cuGraphNodeGetDependentNodes_v2)(node, other,
                                                                 ed, n);
    for (size_t i = 0; r == CUDA_SUCCESS && self != NULL && i < *n; i++)
        self[i] = node;
    return r;
}

/* Request: u64 graph or node, u8 which, u64 room.  Reply: see cuda.api. */
int cuda_be_graph_edges(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    uint64_t id, room;
    size_t total = 0;
    CUgraphNode *from = NULL, *to = NULL;
    CUgraphEdgeData *ed = NULL;
    int rc = get_listing(&c, &id, &which, 2, &room);
    if (rc < 0)
        return rc;
    CUresult r = cuda_be_enter(call);
    cuda_be_remote->graphs_lock();
    struct gvs_remote_graph *g = which == 0 ? cuda_be_remote->graph_get(id)
                                            : NULL;
    struct gvs_remote_node *node = which != 0 ? cuda_be_remote->node_get(id)
                                              : NULL;
    if (node != NULL)
        g = node->graph;
    if (r == CUDA_SUCCESS && g == NULL)
        r = CUDA_ERROR_INVALID_VALUE;
    CUgraphNode self = node != NULL ? node->n : NULL;
    if (r == CUDA_SUCCESS)
        r = edges(which, g, self, NULL, NULL, NULL, &total);
    if (r == CUDA_SUCCESS && total > 0) {
        from = gvs_calloc(total, sizeof(*from));
        to = gvs_calloc(total, sizeof(*to));
        ed = gvs_calloc(total, sizeof(*ed));
        r = from != NULL && to != NULL && ed != NULL
                ? edges(which, g, self, from, to, ed, &total)
                : CUDA_ERROR_OUT_OF_MEMORY;
    }
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        uint32_t n = (uint32_t)(total < room ? total : room);
        apigen_put_u64(&c, total);
        apigen_put_u32(&c, n);
        for (uint32_t i = 0; i < n; i++) {
            apigen_put_u64(&c, cuda_be_remote->node_id(g, from[i]));
            apigen_put_u64(&c, cuda_be_remote->node_id(g, to[i]));
            apigen_put_u8(&c, ed[i].from_port);
            apigen_put_u8(&c, ed[i].to_port);
            apigen_put_u8(&c, ed[i].type);
        }
    }
    cuda_be_remote->graphs_unlock();
    gvs_free(from);
    gvs_free(to);
    gvs_free(ed);
    return c.rc;
}

/* Request: u64 stream, i32 mode.  Reply: i32.  A posted copy's signal
 * held back is enqueued first: once capturing, the stream would take it
 * into the graph (remote_be.h, shared_flush). */
int cuda_be_custreambegincapture_v2(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t swire;
    int32_t mode;
    CUstream s = NULL;
    apigen_get_u64(&c, &swire);
    apigen_get_i32(&c, &mode);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, swire, &s);
    if (r == CUDA_SUCCESS) {
        cuda_be_remote->shared_flush(call, &cuda_be_pinner);
        r = CUDA_DRV(cuStreamBeginCapture_v2)(s, (CUstreamCaptureMode)mode);
    }
    apigen_put_i32(&c, (int32_t)r);
    return c.rc;
}

/* Request: u64 stream, u64 graph, the dependencies, i32 mode.  Reply:
 * i32. */
int cuda_be_stream_begin_capture_to_graph(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t swire, gid;
    uint32_t n;
    int32_t mode;
    CUstream s = NULL;
    struct gvs_remote_graph *g = NULL;
    apigen_get_u64(&c, &swire);
    apigen_get_u64(&c, &gid);
    cuda_be_remote->graphs_lock();
    CUresult r = c.rc == 0 ? enter_graph(call, gid, &g) : CUDA_SUCCESS;
    CUgraphNode *deps = get_nodes(&c, g, &n, &r);
    apigen_get_i32(&c, &mode);
    if (apigen_end(&c) == 0) {
        if (r == CUDA_SUCCESS)
            r = cuda_be_stream(call, swire, &s);
        if (r == CUDA_SUCCESS)
            cuda_be_remote->shared_flush(call, &cuda_be_pinner);
        if (r == CUDA_SUCCESS)
            r = CUDA_DRV(cuStreamBeginCaptureToGraph)(
                s, g->g, deps, NULL, n, (CUstreamCaptureMode)mode);
    }
    cuda_be_remote->graphs_unlock();
    gvs_free(deps);
    return reply(&c, r);
}

/* Request: u64 stream, u32 flags, u32 n, n x u64 node.  Reply: i32. */
int cuda_be_stream_update_capture_deps(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t swire;
    uint32_t flags, n;
    CUstream s = NULL;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph cg = NULL;
    apigen_get_u64(&c, &swire);
    apigen_get_u32(&c, &flags);
    if (c.rc < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, swire, &s);
    /* The nodes are the capture's graph's: a stream not capturing has
     * none, and the driver says so. */
    cuuint64_t cid = 0;
    size_t nd = 0;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamGetCaptureInfo_v3)(s, &status, &cid, &cg, NULL,
                                                NULL, &nd);
    cuda_be_remote->graphs_lock();
    struct gvs_remote_graph *g =
        cg != NULL ? cuda_be_remote->graph_known(cg) : NULL;
    /* Without a capture the driver's answer is the stream's state. */
    CUresult none = CUDA_SUCCESS;
    CUgraphNode *deps = get_nodes(&c, g, &n, g != NULL ? &r : &none);
    if (apigen_end(&c) == 0 && r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamUpdateCaptureDependencies)(s, deps, n, flags);
    cuda_be_remote->graphs_unlock();
    gvs_free(deps);
    return reply(&c, r);
}

/* Request: i32 mode; posted.  Reply: i32 when waited for. */
int cuda_be_thread_capture_mode(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t mode;
    apigen_get_i32(&c, &mode);
    if (apigen_end(&c) < 0)
        return c.rc;
    int rc = cuda_be_remote->set_capture_mode(call, mode);
    if (rc < 0)
        return rc;
    if (!call->noreply)
        apigen_put_i32(&c, CUDA_SUCCESS);
    return c.rc;
}

/* Larger DOT descriptions are CUDA_ERROR_OUT_OF_MEMORY. */
#define DOT_MAX ((size_t)16 << 20)

struct dot {
    CUgraph g;
    unsigned flags;
};

static int32_t write_dot(const char *path, void *arg)
{
    const struct dot *d = arg;
    return CUDA_DRV(cuGraphDebugDotPrint)(d->g, path, d->flags);
}

/* Request: u64 graph, u32 flags.  Reply: i32, blob the text. */
int cuda_be_graph_dot_print(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t flags;
    uint8_t *text = NULL;
    size_t len = 0;
    struct gvs_remote_graph *g;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cuda_be_remote->graphs_lock();
    CUresult r = enter_graph(call, id, &g);
    if (r == CUDA_SUCCESS) {
        struct dot d = {g->g, flags};
        r = (CUresult)cuda_be_remote->capture_file(write_dot, &d, DOT_MAX,
                                                   &text, &len);
    }
    cuda_be_remote->graphs_unlock();
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_blob(&c, text, len);
    gvs_free(text);
    return c.rc;
}
