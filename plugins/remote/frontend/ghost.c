/*
 * Graph copy nodes of host memory the worker cannot reach (gvs_remote.h,
 * "Graph copy nodes of host memory"; issue 11 item 2), for every API
 * frontend: pageable memory anywhere, page-locked memory over tcp:// and
 * tls://.  Natively such a node reads or writes the host memory when the
 * graph runs.  Here the node copies from or to device memory of its own
 * (scratch, allocated with the node), and each launch of an executable
 * graph moves the bytes in stream order around the graph: the host bytes
 * into the scratch before it (a host-to-device copy, which takes them at
 * the launch, as the node would when it runs), the scratch's bytes into
 * the host memory after it (a posted copy, docs/remoting.md: in place
 * before anything can show the launch done).
 *
 * The frontend keeps which graph and which executable graph hold which
 * such nodes (a member per owner and node; a node of a child graph, or
 * of a graph a clone copied, is held under node 0 by the graphs that
 * embed it).  The API frontend finds the node's host side and checks
 * that it is one span (its rows follow each other).  Launches of one
 * executable graph on different streams are ordered by an event, as
 * CUDA orders them, since they share the scratch.  Graph, executable
 * graph and node ids are the session's (one handle table for both APIs),
 * so one table serves both frontends.
 */
#include <pthread.h>
#include <string.h>

#include "gvs/mem.h"
#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

struct ghost {
    int refs;
    const struct gvs_remote_ghost_api *api; /* that made scratch */
    uint64_t scratch;
    uint8_t *host; /* the span's first byte */
    size_t span;
    int to_dev; /* the host side is the source */
    size_t params_size;
    unsigned char params[GVS_REMOTE_GHOST_PARAMS_MAX]; /* as given */
};

struct member {
    struct member *next;
    uint64_t owner; /* a graph's or an executable graph's wire id */
    uint64_t node;  /* 0: not addressable by the program */
    int exec;       /* owner is an executable graph */
    struct ghost *g;
};

/* What orders the launches of an executable graph that has members. */
struct exec_order {
    struct exec_order *next;
    const struct gvs_remote_ghost_api *api;
    uint64_t exec;
    uint64_t done;   /* the API's event */
    uint64_t stream; /* the API's stream of the last launch */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct member *members;
static struct exec_order *orders;
/* The node prepared for the request being built on this thread,
 * and whether one may be made (not for a graph's node whose graph is
 * not known here). */
static _Thread_local struct ghost *staged;
static _Thread_local int unstageable;

static void release(struct ghost *g)
{
    if (g == NULL)
        return;
    pthread_mutex_lock(&lock);
    int last = --g->refs == 0;
    pthread_mutex_unlock(&lock);
    if (last) {
        g->api->release(g->scratch);
        gvs_free(g);
    }
}

EXPORT int32_t gvs_remote_ghost_prepare(const struct gvs_remote_ghost_api *api,
                                        void *host, size_t span, int to_dev,
                                        const void *params, size_t size,
                                        uint64_t *dev)
{
    if (span == 0 || staged != NULL || unstageable ||
        size > GVS_REMOTE_GHOST_PARAMS_MAX)
        return api->notsup;
    struct ghost *g = gvs_calloc(1, sizeof(*g));
    if (g == NULL)
        return api->nomem;
    int32_t e = api->alloc(&g->scratch, span);
    if (e != api->success) {
        gvs_free(g);
        return e;
    }
    g->refs = 1;
    g->api = api;
    g->host = host;
    g->span = span;
    g->to_dev = to_dev;
    g->params_size = size;
    memcpy(g->params, params, size);
    staged = g;
    *dev = g->scratch;
    return api->success;
}

static void add_locked(uint64_t owner, uint64_t node, int exec,
                       struct ghost *g)
{
    struct member *m = gvs_malloc(sizeof(*m));
    if (m == NULL)
        return;
    g->refs++;
    *m = (struct member){members, owner, node, exec, g};
    members = m;
}

/* What a removal matches: owner (0: any graph), node (unless any_node). */
struct match {
    uint64_t owner, node;
    int any_node;
};

static int matches(const struct member *m, const struct match *w)
{
    return (w->owner != 0 ? m->owner == w->owner : !m->exec) &&
           (w->any_node || m->node == w->node);
}

enum { DROP_ROOM = 256 };

/* Removes the members w matches, releasing their nodes outside the lock
 * (the last reference frees the scratch, a CUDA call). */
static void drop_matching(const struct match *w)
{
    struct ghost *drop[DROP_ROOM];
    size_t n;
    do {
        n = 0;
        pthread_mutex_lock(&lock);
        struct member **pp = &members;
        while (*pp != NULL && n < DROP_ROOM) {
            struct member *m = *pp;
            if (matches(m, w)) {
                *pp = m->next;
                drop[n++] = m->g;
                gvs_free(m);
            } else {
                pp = &m->next;
            }
        }
        pthread_mutex_unlock(&lock);
        for (size_t i = 0; i < n; i++)
            release(drop[i]);
    } while (n == DROP_ROOM);
}

EXPORT uint64_t gvs_remote_ghost_graph_of(uint64_t node)
{
    uint64_t owner = 0;
    pthread_mutex_lock(&lock);
    for (const struct member *m = members; m != NULL; m = m->next)
        if (!m->exec && m->node == node && node != 0)
            owner = m->owner;
    pthread_mutex_unlock(&lock);
    return owner;
}

EXPORT void gvs_remote_ghost_stageable(int yes)
{
    unstageable = !yes;
}

EXPORT void gvs_remote_ghost_done(uint64_t owner, uint64_t node, int exec,
                                  int ok)
{
    struct ghost *g = staged;
    staged = NULL;
    unstageable = 0;
    if (ok && owner != 0) {
        drop_matching(&(struct match){owner, node, 0});
        if (g != NULL) {
            pthread_mutex_lock(&lock);
            add_locked(owner, node, exec, g);
            pthread_mutex_unlock(&lock);
        }
    }
    release(g);
}

EXPORT void gvs_remote_ghost_forget_node(uint64_t node)
{
    drop_matching(&(struct match){0, node, 0});
}

EXPORT void gvs_remote_ghost_forget(uint64_t owner)
{
    drop_matching(&(struct match){owner, 0, 1});
    pthread_mutex_lock(&lock);
    for (struct exec_order **pp = &orders; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->exec == owner) {
            struct exec_order *o = *pp;
            *pp = o->next;
            pthread_mutex_unlock(&lock);
            o->api->event_free(o->done);
            gvs_free(o);
            return;
        }
    pthread_mutex_unlock(&lock);
}

enum { COPY_ROOM = 1024 };

EXPORT void gvs_remote_ghost_copy(uint64_t from, uint64_t to, int exec,
                                  uint64_t (*node_in)(uint64_t node,
                                                      uint64_t to))
{
    static _Thread_local uint64_t nodes[COPY_ROOM];
    static _Thread_local struct ghost *g[COPY_ROOM];
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (struct member *m = members; m != NULL && n < COPY_ROOM; m = m->next)
        if (m->owner == from) {
            m->g->refs++;
            nodes[n] = m->node;
            g[n++] = m->g;
        }
    pthread_mutex_unlock(&lock);
    /* node_in may ask the backend: outside the lock. */
    for (size_t i = 0; i < n; i++) {
        uint64_t node = node_in != NULL && nodes[i] != 0 ? node_in(nodes[i], to)
                                                         : nodes[i];
        pthread_mutex_lock(&lock);
        add_locked(to, node, exec, g[i]);
        pthread_mutex_unlock(&lock);
        release(g[i]);
    }
}

EXPORT int gvs_remote_ghost_params(uint64_t node, void *out, size_t size)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (struct member *m = members; m != NULL && !found; m = m->next)
        if (m->node == node && node != 0 && m->g->params_size == size) {
            memcpy(out, m->g->params, size);
            found = 1;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

/* The executable graph's nodes, the first room of them in out, each
 * with a reference: how many it has. */
static size_t exec_nodes(uint64_t exec, struct ghost **out, size_t room)
{
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (struct member *m = members; m != NULL; m = m->next)
        if (m->owner == exec) {
            if (n < room) {
                m->g->refs++;
                out[n] = m->g;
            }
            n++;
        }
    pthread_mutex_unlock(&lock);
    return n;
}

/* Orders this launch after the executable graph's last one when that was
 * on another stream; the event to record after this one. */
static int32_t order(const struct gvs_remote_ghost_api *api, uint64_t exec,
                     uint64_t stream, uint64_t *done)
{
    pthread_mutex_lock(&lock);
    struct exec_order *o = orders;
    while (o != NULL && o->exec != exec)
        o = o->next;
    pthread_mutex_unlock(&lock);
    int32_t e = api->success;
    if (o == NULL) {
        o = gvs_calloc(1, sizeof(*o));
        if (o == NULL)
            return api->nomem;
        e = api->event_new(&o->done);
        if (e != api->success) {
            gvs_free(o);
            return e;
        }
        o->api = api;
        o->exec = exec;
        o->stream = stream;
        pthread_mutex_lock(&lock);
        o->next = orders;
        orders = o;
        pthread_mutex_unlock(&lock);
    } else if (o->stream != stream) {
        e = api->wait(stream, o->done);
        o->stream = stream;
    }
    *done = o->done;
    return e;
}

enum { LAUNCH_ROOM = 1024 };

EXPORT int32_t gvs_remote_ghost_launch(const struct gvs_remote_ghost_api *api,
                                       uint64_t exec, uint64_t stream,
                                       int32_t (*launch)(uint64_t exec,
                                                         uint64_t stream))
{
    static _Thread_local struct ghost *g[LAUNCH_ROOM];
    size_t n = exec_nodes(exec, g, LAUNCH_ROOM);
    if (n == 0)
        return launch(exec, stream);
    uint64_t done = 0;
    int32_t e = n <= LAUNCH_ROOM ? order(api, exec, stream, &done) : api->notsup;
    if (n > LAUNCH_ROOM)
        n = LAUNCH_ROOM;
    for (size_t i = 0; i < n && e == api->success; i++)
        if (g[i]->to_dev)
            e = api->to_dev(g[i]->scratch, g[i]->host, g[i]->span, stream);
    if (e == api->success)
        e = launch(exec, stream);
    for (size_t i = 0; i < n && e == api->success; i++)
        if (!g[i]->to_dev)
            e = api->to_host(g[i]->host, g[i]->scratch, g[i]->span, stream);
    if (e == api->success)
        e = api->record(done, stream);
    for (size_t i = 0; i < n; i++)
        release(g[i]);
    return e;
}
