/*
 * Posted device-to-host copies (remote_be.h, d2h_posted), for every API
 * plugin.  Over a connection that shares no memory with the client (tcp,
 * tls) a stream-ordered copy into the client's page-locked memory would
 * otherwise wait in the lane until the stream reaches it, and with it
 * every request of that client thread behind it (the next stream's
 * copies and launches).  Here the copy goes on the stream into a pinned
 * buffer of the layer's, a host function follows it, and the request is
 * answered at once; when the stream reaches the host function, CUDA's
 * callback thread sends the bytes (D2H_BYTES, behind the token that names
 * them to the client).  Anything that can show the copy done, a
 * synchronization or query of its stream, an event after it, a later
 * host function, waits for that host function, and its reply is sent
 * after the bytes, on the same connection.
 *
 * Small copies that follow one another on a stream share one host
 * function: while gvsd says the lane thread's next request is already
 * here and is another posted copy (gvs_call.next_same), a copy joins the
 * thread's open batch, and the host function goes on the stream behind
 * the batch's last copy, before anything else the lane does.  A host
 * function costs CUDA's callback thread more than the copy (29 us per
 * 4-byte copy over tcp, each with its own); each copy's bytes are still
 * a D2H_BYTES of their own, the batch's sent in one write.  Nothing of
 * another lane passes the batch meanwhile: its copies are ordered jobs
 * (server/executor.c), whose lane thread others wait for.
 *
 * The buffers are kept for reuse, in three sizes: a small copy's, a
 * pipelined piece's (a frontend posts a large copy in pieces of 1 MiB,
 * which gvsd sends while the GPU copies the next, each still in the
 * caches when the socket reads it) and a frame's most.  The session holds
 * at most so many bytes of the small ones, and so many of the others
 * together; a copy that finds none of its size free and no room for
 * another frees free ones of the other large size, and failing that is
 * refused with the API's "not supported": the client copies the ordinary
 * way.  A posted request (no reply: the client sends a large copy's
 * pieces one after the other, none waiting for the bytes of the one
 * before) cannot be refused: it waits for a buffer to come back, and
 * when none does in time it takes a heap buffer instead, into which CUDA
 * copies once the stream reaches the copy, the lane waiting meanwhile as
 * the ordinary way would.  A pinned buffer is freed (a CUDA call, which
 * host functions must not make) only by a lane or at the session's
 * close, never by the callback thread, which only returns it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs_remote.h"
#include "remote_ops.h"
#include "state.h"

/* The token ahead of the bytes. */
#define HEAD 8u

/* The buffers' sizes, smallest first, and the pool each counts in. */
#define SIZES 3
static const size_t cap[SIZES] = {(size_t)64 << 10, GVS_REMOTE_PIECE,
                                  GVS_BULK_CHUNK};
static const int pool_of[SIZES] = {0, 1, 1};
/* Bytes a session may hold in each pool: 4 MiB of small buffers (64), 64
 * MiB of the others (64 pieces, 8 frames, or a mix). */
static const size_t budget[2] = {(size_t)4 << 20, (size_t)64 << 20};

struct posted {
    struct posted *next;
    const struct gvs_remote_pinner *pn;
    uint8_t *buf; /* pinned: HEAD bytes, then room */
    size_t len;   /* of the copy under way */
    int size;     /* index into cap */
    int heap; /* buf is the heap's, freed with the record once sent */
};

/* Copies one host function sends at most: a batch holds its buffers
 * until the stream reaches it, and the next batch needs free ones. */
#define BATCH_MAX 16u
_Static_assert(BATCH_MAX <= GVS_FRAMES_MAX, "a batch's bytes in one write");

/* The lane thread's copies on one stream whose host function is not on
 * the stream yet, oldest first. */
struct batch {
    const struct gvs_remote_pinner *pn;
    uint64_t stream;
    struct posted *head, *tail;
    unsigned n;
};

static __thread struct batch open_batch;

/* How long a posted request waits at most for a buffer to come back:
 * an earlier copy's bytes leave within a piece's time on the wire, but a
 * stream stopped for good (a sticky error) returns none. */
#define WAIT_NS 100000000L

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t returned;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct posted *free_list[SIZES];
static size_t made[2]; /* bytes, per pool */

static void init_cond(void)
{
    remote_be_cond_init(&returned);
}

/* The smallest size that holds len bytes. */
static int size_for(size_t len)
{
    int i = 0;
    while (i + 1 < SIZES && len > cap[i])
        i++;
    return i;
}

/* Caller holds lock.  pn's first free buffer of size i, off its list. */
static struct posted *unlink_free(const struct gvs_remote_pinner *pn, int i)
{
    struct posted **pp = &free_list[i];
    while (*pp != NULL && (*pp)->pn != pn)
        pp = &(*pp)->next;
    struct posted *p = *pp;
    if (p != NULL)
        *pp = p->next;
    return p;
}

/* Caller holds lock.  pn's free buffer of size i, else NULL (*room: one
 * more may be made, counted as made).  Free buffers of pn's of the pool's
 * other sizes go to *unused to make that room, counted as freed: the
 * caller frees them (a CUDA call) once the lock is let go. */
static struct posted *take_free(const struct gvs_remote_pinner *pn, int i,
                                int *room, struct posted **unused)
{
    struct posted *p = unlink_free(pn, i), *q;
    int pool = pool_of[i];
    *room = 0;
    for (int j = 0; p == NULL && j < SIZES; j++) {
        if (j == i || pool_of[j] != pool)
            continue;
        while (made[pool] + cap[i] > budget[pool] &&
               (q = unlink_free(pn, j)) != NULL) {
            made[pool] -= cap[j];
            q->next = *unused;
            *unused = q;
        }
    }
    if (p == NULL && made[pool] + cap[i] <= budget[pool]) {
        *room = 1;
        made[pool] += cap[i];
    }
    return p;
}

/* Frees buffers take_free set aside. */
static void free_unused(struct posted *p)
{
    for (struct posted *next; p != NULL; p = next) {
        next = p->next;
        p->pn->host_free(p->buf);
        gvs_free(p);
    }
}

/* A pinned buffer for len bytes, NULL when none is free and no more may
 * be made.  wait: a posted request, which is never refused, waits for
 * one to come back rather than go through the heap, whose copy would
 * hold the stream while the wire idles. */
static struct posted *take(const struct gvs_remote_pinner *pn, size_t len,
                           int wait)
{
    int i = size_for(len), room;
    struct posted *unused = NULL;
    pthread_once(&once, init_cond);
    struct timespec until = {0, 0};
    pthread_mutex_lock(&lock);
    struct posted *p = take_free(pn, i, &room, &unused);
    /* The clock is read only when a wait begins. */
    if (p == NULL && !room && wait)
        remote_be_deadline(&until, WAIT_NS);
    while (p == NULL && !room && wait) {
        if (pthread_cond_timedwait(&returned, &lock, &until) != 0)
            wait = 0;
        p = take_free(pn, i, &room, &unused);
    }
    pthread_mutex_unlock(&lock);
    free_unused(unused);
    if (p == NULL && !room)
        return NULL;
    if (p != NULL)
        return p;
    p = gvs_calloc(1, sizeof(*p));
    void *buf = NULL;
    if (p == NULL || pn->host_alloc(&buf, HEAD + cap[i]) != pn->success ||
        buf == NULL) {
        gvs_free(p);
        pthread_mutex_lock(&lock);
        made[pool_of[i]] -= cap[i];
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    p->pn = pn;
    p->buf = buf;
    p->size = i;
    return p;
}

/* A posted request's buffer when no pinned one is to be had. */
static struct posted *take_heap(const struct gvs_remote_pinner *pn,
                                size_t len)
{
    struct posted *p = gvs_calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->buf = gvs_malloc(HEAD + len);
    if (p->buf == NULL) {
        gvs_free(p);
        return NULL;
    }
    p->pn = pn;
    p->heap = 1;
    return p;
}

/* Back to the free list: no CUDA call (CUDA's callback thread). */
static void give_back(struct posted *p)
{
    if (p->heap) {
        gvs_free(p->buf);
        gvs_free(p);
        return;
    }
    pthread_mutex_lock(&lock);
    p->next = free_list[p->size];
    free_list[p->size] = p;
    pthread_cond_broadcast(&returned);
    pthread_mutex_unlock(&lock);
}

/* On CUDA's callback thread, once the stream has reached the end of a
 * batch's copies: their bytes to the client, in order, in one write. */
static void send_bytes(void *arg)
{
    struct iovec v[BATCH_MAX] = {{0}};
    int n = 0;
    for (struct posted *p = arg; p != NULL && n < (int)BATCH_MAX; p = p->next)
        v[n++] = (struct iovec){p->buf, HEAD + p->len};
    (void)remote_be_notify_many(REMOTE_PLUGIN_ID, REMOTE_OP_D2H_BYTES, v, n);
    for (struct posted *p = arg, *next; p != NULL; p = next) {
        next = p->next;
        give_back(p);
    }
}

/* The thread's open batch on its stream, behind its copies: its host
 * function, or where CUDA refuses one, a wait for the stream and the
 * bytes sent from here. */
static void flush(struct gvs_call *call)
{
    struct batch *b = &open_batch;
    if (b->head == NULL)
        return;
    struct posted *head = b->head;
    b->tail->next = NULL;
    if (b->pn->host_func(call, b->stream, send_bytes, head) != b->pn->success) {
        (void)b->pn->sync(call);
        send_bytes(head);
    }
    *b = (struct batch){0};
}

/* p's copy is on the stream: into the open batch, which goes on the
 * stream now unless the next request will add to it. */
static void join(struct gvs_call *call, const struct gvs_remote_pinner *pn,
                 uint64_t stream, struct posted *p)
{
    struct batch *b = &open_batch;
    if (b->head != NULL && (b->pn != pn || b->stream != stream))
        flush(call);
    if (b->head == NULL) {
        b->pn = pn;
        b->stream = stream;
        b->head = p;
    } else {
        b->tail->next = p;
    }
    b->tail = p;
    b->n++;
    if (!call->next_same || p->size > 0 || b->n >= BATCH_MAX)
        flush(call);
}

int remote_be_d2h_posted(struct gvs_call *call,
                         const struct gvs_remote_pinner *pn)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, dev, len, token;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &dev);
    apigen_get_u64(&c, &len);
    apigen_get_u64(&c, &token);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (len == 0 || len > GVS_BULK_CHUNK) {
        snprintf(call->why, sizeof(call->why),
                 "a posted copy of %llu bytes", (unsigned long long)len);
        return GVS_E_RANGE;
    }
    uint8_t head[HEAD];
    for (unsigned i = 0; i < HEAD; i++)
        head[i] = (uint8_t)(token >> (8 * i));
    int32_t e = pn->enter(call);
    struct posted *p = NULL;
    if (e == pn->success && open_batch.head != NULL) {
        /* The batch's buffers come back only once it is on the stream. */
        p = take(pn, (size_t)len, 0);
        if (p == NULL)
            flush(call);
    }
    if (e == pn->success && p == NULL)
        p = take(pn, (size_t)len, call->noreply);
    if (e == pn->success && p == NULL && call->noreply)
        p = take_heap(pn, (size_t)len);
    if (e == pn->success && p == NULL)
        e = call->noreply ? pn->nomem : pn->notsup;
    if (p != NULL) {
        memcpy(p->buf, head, HEAD);
        p->len = (size_t)len;
        p->next = NULL;
        e = pn->copy(call, stream, GVS_REMOTE_SHARED_ON_STREAM, 0, dev,
                     p->buf + HEAD, len);
        if (e == pn->success)
            join(call, pn, stream, p);
        else
            give_back(p);
    }
    /* Whatever else happened, the batch is on the stream before the
     * lane's next request unless that request adds to it. */
    if (!call->next_same)
        flush(call);
    /* Posted: the client learns of no bytes by the token alone, and of
     * the failure at the lane's next synchronizing call. */
    if (call->noreply && e != pn->success) {
        remote_be_latch(call, pn->plugin, e);
        (void)remote_be_notify(REMOTE_PLUGIN_ID, REMOTE_OP_D2H_BYTES, head,
                               HEAD);
        e = pn->success;
    }
    apigen_put_i32(&c, e);
    return c.rc;
}

void remote_be_posted_release(const struct gvs_remote_pinner *pn)
{
    struct posted *unused = NULL, *p;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SIZES; i++)
        while ((p = unlink_free(pn, i)) != NULL) {
            made[pool_of[i]] -= cap[i];
            p->next = unused;
            unused = p;
        }
    pthread_mutex_unlock(&lock);
    free_unused(unused);
}
