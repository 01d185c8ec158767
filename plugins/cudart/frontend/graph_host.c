/*
 * Graph copy nodes of host memory the worker cannot reach (issue 11 item
 * 2): pageable memory anywhere, page-locked memory over tcp:// and
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
 * embed it).  A node's host side must be one span (its rows follow each
 * other); others stay cudaErrorNotSupported.  Launches of one executable
 * graph on different streams are ordered by an event, as CUDA orders
 * them, since they share the scratch.
 */
#include "graphs.h"

#include <pthread.h>
#include <string.h>

#include "gvs/mem.h"
#include "gvs_remote.h"
#include "mem3d.h"
#include "shared.h"
#include "streams.h"

struct ghost {
    int refs;
    void *scratch;
    uint8_t *host; /* the span's first byte */
    size_t span;
    int to_dev; /* the host side is the source */
    struct cudaMemcpy3DParms params; /* as the program gave them */
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
    uint64_t exec;
    cudaEvent_t done;
    cudaStream_t stream;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct member *members;
static struct exec_order *orders;
/* The node put_copy made for the request being built on this thread,
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
        (void)cudaFree(g->scratch);
        gvs_free(g);
    }
}

/* The span of a host side over box: one run of bytes, or 0. */
static size_t one_span(const struct fe_side *s, const struct fe_box *b,
                       uint64_t *start)
{
    if (b->w == 0 || b->h == 0 || b->d == 0)
        return 0;
    int rows_follow = b->h == 1 || s->pitch == b->w;
    int slices_follow = b->d == 1 || (s->pitch == b->w && s->ysize == b->h);
    if (!rows_follow || !slices_follow)
        return 0;
    uint64_t off = ((s->z * s->ysize) + s->y) * s->pitch + s->x;
    uint64_t span = b->w * b->h * b->d;
    if (span / b->d / b->h != b->w || off + span < off)
        return 0;
    *start = s->addr + off;
    return (size_t)span;
}

/* Whether a host side is the program's own memory, which the worker
 * cannot reach (not shared with it). */
static int unreached(const struct fe_side *s)
{
    return s->kind == FE_SIDE_HOST &&
           !gvs_remote_host_shared((const void *)(uintptr_t)s->addr, 1);
}

cudaError_t fe_ghost_prepare(const struct cudaMemcpy3DParms *p)
{
    struct fe_side dst, src;
    struct fe_box box;
    int dst_host = 0, src_host = 0;
    if (p != NULL && fe_copy3d_params(p, &dst, &src, &box) == cudaSuccess) {
        dst_host = unreached(&dst);
        src_host = unreached(&src);
    }
    if (!dst_host && !src_host)
        return cudaSuccess;
    const struct fe_side *host = src_host ? &src : &dst;
    uint64_t start = 0;
    size_t span = one_span(host, &box, &start);
    if (span == 0 || (dst_host && src_host) || unstageable)
        return cudaErrorNotSupported;
    struct ghost *g = gvs_calloc(1, sizeof(*g));
    if (g == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudaMalloc(&g->scratch, span);
    if (e != cudaSuccess) {
        gvs_free(g);
        return e;
    }
    g->refs = 1;
    g->host = (uint8_t *)(uintptr_t)start;
    g->span = span;
    g->to_dev = src_host;
    g->params = *p;
    staged = g;
    return cudaSuccess;
}

cudaError_t fe_ghost_side(struct fe_side *host, const struct fe_box *box,
                          int to_dev)
{
    if (staged == NULL || staged->to_dev != to_dev)
        return cudaErrorNotSupported;
    *host = (struct fe_side){FE_SIDE_DEVICE,
                             (uint64_t)(uintptr_t)staged->scratch, box->w,
                             box->h, 0, 0, 0};
    return cudaSuccess;
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

uint64_t fe_ghost_graph_of(uint64_t node)
{
    uint64_t owner = 0;
    pthread_mutex_lock(&lock);
    for (const struct member *m = members; m != NULL; m = m->next)
        if (!m->exec && m->node == node && node != 0)
            owner = m->owner;
    pthread_mutex_unlock(&lock);
    return owner;
}

void fe_ghost_stageable(int yes)
{
    unstageable = !yes;
}

void fe_ghost_done(uint64_t owner, uint64_t node, int exec, cudaError_t e)
{
    struct ghost *g = staged;
    staged = NULL;
    unstageable = 0;
    if (e == cudaSuccess && owner != 0) {
        drop_matching(&(struct match){owner, node, 0});
        if (g != NULL) {
            pthread_mutex_lock(&lock);
            add_locked(owner, node, exec, g);
            pthread_mutex_unlock(&lock);
        }
    }
    release(g);
}

void fe_ghost_forget_node(uint64_t node)
{
    drop_matching(&(struct match){0, node, 0});
}

void fe_ghost_forget(uint64_t owner)
{
    drop_matching(&(struct match){owner, 0, 1});
    pthread_mutex_lock(&lock);
    for (struct exec_order **pp = &orders; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->exec == owner) {
            struct exec_order *o = *pp;
            *pp = o->next;
            pthread_mutex_unlock(&lock);
            (void)cudaEventDestroy(o->done);
            gvs_free(o);
            return;
        }
    pthread_mutex_unlock(&lock);
}

enum { COPY_ROOM = 1024 };

void fe_ghost_copy(uint64_t from, uint64_t to, int exec,
                   uint64_t (*node_in)(uint64_t node, uint64_t to))
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

int fe_ghost_params(uint64_t node, struct cudaMemcpy3DParms *out)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (struct member *m = members; m != NULL && !found; m = m->next)
        if (m->node == node && node != 0) {
            *out = m->g->params;
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
static cudaError_t order(uint64_t exec, cudaStream_t stream, cudaEvent_t *done)
{
    pthread_mutex_lock(&lock);
    struct exec_order *o = orders;
    while (o != NULL && o->exec != exec)
        o = o->next;
    pthread_mutex_unlock(&lock);
    cudaError_t e = cudaSuccess;
    if (o == NULL) {
        o = gvs_calloc(1, sizeof(*o));
        if (o == NULL)
            return cudaErrorMemoryAllocation;
        e = cudaEventCreateWithFlags(&o->done, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            gvs_free(o);
            return e;
        }
        o->exec = exec;
        o->stream = stream;
        pthread_mutex_lock(&lock);
        o->next = orders;
        orders = o;
        pthread_mutex_unlock(&lock);
    } else if (o->stream != stream) {
        e = cudaStreamWaitEvent(stream, o->done, 0);
        o->stream = stream;
    }
    *done = o->done;
    return e;
}

enum { LAUNCH_ROOM = 1024 };

/* The scratch's bytes into the host memory, behind the launch: posted
 * where the backend can, else the ordinary stream-ordered copy (which
 * for pageable memory returns once done, as a copy to it does). */
static cudaError_t drain(const struct ghost *g, cudaStream_t st)
{
    int32_t r;
    if (gvs_remote_posted_d2h(&fe_shared, fe_stream_wire(st, 0),
                              (uint64_t)(uintptr_t)g->scratch, g->host, g->span,
                              &r))
        return (cudaError_t)r;
    return fe_copy_async(g->host, g->scratch, g->span, cudaMemcpyDeviceToHost,
                         st, 0);
}

cudaError_t fe_ghost_launch(uint64_t exec, cudaStream_t stream, int per_thread,
                            cudaError_t (*launch)(uint64_t exec,
                                                  uint64_t stream))
{
    /* The stream as a handle any entry point takes the same way. */
    cudaStream_t st = per_thread && stream == NULL ? cudaStreamPerThread
                                                   : stream;
    uint64_t s = fe_stream_wire(st, 0);
    static _Thread_local struct ghost *g[LAUNCH_ROOM];
    size_t n = exec_nodes(exec, g, LAUNCH_ROOM);
    if (n == 0)
        return launch(exec, s);
    cudaEvent_t done = NULL;
    cudaError_t e = n <= LAUNCH_ROOM ? order(exec, st, &done)
                                     : cudaErrorNotSupported;
    if (n > LAUNCH_ROOM)
        n = LAUNCH_ROOM;
    for (size_t i = 0; i < n && e == cudaSuccess; i++)
        if (g[i]->to_dev)
            e = fe_copy_async(g[i]->scratch, g[i]->host, g[i]->span,
                              cudaMemcpyHostToDevice, st, 0);
    if (e == cudaSuccess)
        e = launch(exec, s);
    for (size_t i = 0; i < n && e == cudaSuccess; i++)
        if (!g[i]->to_dev)
            e = drain(g[i], st);
    if (e == cudaSuccess)
        e = cudaEventRecord(done, st);
    for (size_t i = 0; i < n; i++)
        release(g[i]);
    return e;
}
