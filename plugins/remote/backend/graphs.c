/*
 * The session's graphs, nodes and executable graphs as ids of the handle
 * table (remote_be.h, "Graphs"), for every API plugin of the session.
 */
#include <pthread.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "state.h"

struct exec {
    void *x;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map graphs_by_ptr;

void remote_be_graphs_lock(void)
{
    pthread_mutex_lock(&lock);
}

void remote_be_graphs_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

struct gvs_remote_graph *remote_be_graph_get(uint64_t id)
{
    return gvs_handles_get(remote_be_handles(), GVS_RH_GRAPH, id);
}

struct gvs_remote_graph *remote_be_graph_known(void *cg)
{
    return gvs_u64map_get(&graphs_by_ptr, (uint64_t)(uintptr_t)cg);
}

struct gvs_remote_graph *remote_be_graph_of(void *cg, int owned)
{
    struct gvs_remote_graph *g = remote_be_graph_known(cg);
    if (g != NULL) {
        g->owned |= owned;
        return g;
    }
    g = gvs_calloc(1, sizeof(*g));
    if (g == NULL)
        return NULL;
    g->g = cg;
    g->owned = owned;
    if (gvs_handles_add(remote_be_handles(), GVS_RH_GRAPH, g, &g->id) < 0) {
        gvs_free(g);
        return NULL;
    }
    if (gvs_u64map_put(&graphs_by_ptr, (uint64_t)(uintptr_t)cg, g) < 0) {
        gvs_handles_remove(remote_be_handles(), GVS_RH_GRAPH, g->id);
        gvs_free(g);
        return NULL;
    }
    return g;
}

void remote_be_graph_forget(struct gvs_remote_graph *g)
{
    struct gvs_handles *t = remote_be_handles();
    for (size_t i = 0; i < g->nodes.n; i++) {
        struct gvs_remote_node *n = g->nodes.e[i].val;
        gvs_handles_remove(t, GVS_RH_GRAPH_NODE, n->id);
        gvs_free(n);
    }
    gvs_u64map_clear(&g->nodes);
    gvs_u64map_remove(&graphs_by_ptr, (uint64_t)(uintptr_t)g->g);
    gvs_handles_remove(t, GVS_RH_GRAPH, g->id);
    gvs_free(g);
}

struct gvs_remote_node *remote_be_node_get(uint64_t id)
{
    return gvs_handles_get(remote_be_handles(), GVS_RH_GRAPH_NODE, id);
}

uint64_t remote_be_node_id(struct gvs_remote_graph *g, void *cn)
{
    if (cn == NULL)
        return 0;
    struct gvs_remote_node *n =
        gvs_u64map_get(&g->nodes, (uint64_t)(uintptr_t)cn);
    if (n != NULL)
        return n->id;
    n = gvs_calloc(1, sizeof(*n));
    if (n == NULL)
        return 0;
    *n = (struct gvs_remote_node){cn, 0, g};
    if (gvs_handles_add(remote_be_handles(), GVS_RH_GRAPH_NODE, n, &n->id) <
        0) {
        gvs_free(n);
        return 0;
    }
    if (gvs_u64map_put(&g->nodes, (uint64_t)(uintptr_t)cn, n) < 0) {
        gvs_handles_remove(remote_be_handles(), GVS_RH_GRAPH_NODE, n->id);
        gvs_free(n);
        return 0;
    }
    return n->id;
}

void remote_be_node_forget(struct gvs_remote_node *n)
{
    gvs_u64map_remove(&n->graph->nodes, (uint64_t)(uintptr_t)n->n);
    gvs_handles_remove(remote_be_handles(), GVS_RH_GRAPH_NODE, n->id);
    gvs_free(n);
}

int remote_be_exec_add(void *x, uint64_t *id)
{
    struct exec *o = gvs_malloc(sizeof(*o));
    if (o == NULL)
        return GVS_E_NOMEM;
    o->x = x;
    int rc = gvs_handles_add(remote_be_handles(), GVS_RH_GRAPH_EXEC, o, id);
    if (rc < 0)
        gvs_free(o);
    return rc;
}

void *remote_be_exec_get(uint64_t id)
{
    struct exec *o = gvs_handles_get(remote_be_handles(), GVS_RH_GRAPH_EXEC,
                                     id);
    return o != NULL ? o->x : NULL;
}

void remote_be_exec_forget(uint64_t id)
{
    gvs_free(gvs_handles_remove(remote_be_handles(), GVS_RH_GRAPH_EXEC, id));
}
