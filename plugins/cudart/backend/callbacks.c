/*
 * Host callbacks run on the client (docs/cudart.md, "Host callbacks").
 * Each one is enqueued as a host function of ours; when the stream
 * reaches it, CUDA's callback thread sends CALLBACK_RUN and holds the
 * stream until the client's CALLBACK_DONE, which runs inline on the
 * reader thread so that no queued work stands in its way.
 *
 * A callback of a graph (a host node, or a host function captured from a
 * stream) runs each time the graph does: its record is kept ("keep" in
 * CALLBACK_RUN tells the client to keep its own) and each run waits on a
 * copy of it.  Kept records stay until the worker exits: an executable
 * graph may hold one past the graph that made it (cudaGraphExecUpdate
 * gives it another graph's nodes), and CUDA does not say when the last
 * one goes.
 *
 * While it waits, the callback thread sends CALLBACK_WAITING every
 * WAITING_MS: once a send fails the client has gone, and the callback
 * returns so that the stream, the threads waiting for it and the worker
 * can end.  be_callbacks_release does the same at the session's close.
 */
#include "be.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

#define WAITING_MS 500

/* Kinds of HOST_FUNC (api/10-streams.api). */
enum { KIND_HOST_FN = 0, KIND_STREAM_CALLBACK = 1 };

struct callback {
    struct callback *next; /* in `waiting` */
    uint64_t id;           /* the client's */
    struct be_session *s;
    int done;
    int keep; /* a graph's: runs again */
};

/* The callbacks waiting for CALLBACK_DONE; notifying counts the threads
 * inside host->notify, which must not outlive the session. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed;
static pthread_once_t changed_once = PTHREAD_ONCE_INIT;
static struct callback *waiting;
static int notifying;
static int released;

static void changed_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&changed, &a);
    pthread_condattr_destroy(&a);
}

/* Sends op (u64 id, then i32 status and u8 keep when with_status) unless
 * the session is closing.  Caller holds lock, which is released while
 * sending. */
static int notify_locked(struct callback *cb, uint16_t op, int with_status,
                         cudaError_t status)
{
    if (released)
        return GVS_E_CLOSED;
    struct gvs_buf *b = gvs_buf_new(13);
    int rc = b != NULL ? gvs_buf_put_u64(b, cb->id) : GVS_E_NOMEM;
    if (rc == 0 && with_status)
        rc = gvs_buf_put_i32(b, status);
    if (rc == 0 && with_status)
        rc = gvs_buf_put_u8(b, (uint8_t)cb->keep);
    if (rc == 0) {
        notifying++;
        pthread_mutex_unlock(&lock);
        rc = cb->s->host->notify(cb->s->session, CUDART_PLUGIN_ID, op,
                                 gvs_buf_ptr(b), gvs_buf_len(b));
        pthread_mutex_lock(&lock);
        if (--notifying == 0)
            pthread_cond_broadcast(&changed);
    }
    gvs_buf_free(b);
    return rc;
}

static void unlink_locked(struct callback *cb)
{
    for (struct callback **p = &waiting; *p != NULL; p = &(*p)->next)
        if (*p == cb) {
            *p = cb->next;
            return;
        }
}

static void deadline(struct timespec *t)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_nsec += (long)WAITING_MS * 1000000;
    if (t->tv_nsec >= 1000000000) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000;
    }
}

/* On CUDA's callback thread: the stream waits until this returns.  A
 * one-shot record is freed here; a kept one waits on a copy, since two
 * executable graphs made from one graph may run it at once. */
static void run(struct callback *cb, cudaError_t status)
{
    if (cb->keep) {
        struct callback *w = gvs_malloc(sizeof(*w));
        if (w == NULL)
            return;
        *w = *cb;
        w->done = 0;
        cb = w;
    }
    pthread_once(&changed_once, changed_init);
    pthread_mutex_lock(&lock);
    /* In the list before the client can answer. */
    cb->next = waiting;
    waiting = cb;
    int rc = notify_locked(cb, CUDART_OP_CALLBACK_RUN, 1, status);
    while (rc == 0 && !cb->done && !released) {
        struct timespec t;
        deadline(&t);
        if (pthread_cond_timedwait(&changed, &lock, &t) == ETIMEDOUT &&
            !cb->done)
            rc = notify_locked(cb, CUDART_OP_CALLBACK_WAITING, 0, 0);
    }
    unlink_locked(cb);
    pthread_mutex_unlock(&lock);
    gvs_free(cb);
}

static void CUDART_CB run_host_fn(void *arg)
{
    run(arg, cudaSuccess);
}

static void CUDART_CB run_stream_callback(cudaStream_t stream,
                                          cudaError_t status, void *arg)
{
    (void)stream;
    run(arg, status);
}

cudaError_t be_callback_node(struct gvs_call *call, uint64_t id,
                             struct cudaHostNodeParams *out)
{
    struct callback *cb = gvs_calloc(1, sizeof(*cb));
    if (cb == NULL)
        return cudaErrorMemoryAllocation;
    cb->id = id;
    cb->s = call->state;
    cb->keep = 1;
    *out = (struct cudaHostNodeParams){run_host_fn, cb};
    return cudaSuccess;
}

uint64_t be_callback_node_id(const struct cudaHostNodeParams *p)
{
    if (p->fn != run_host_fn || p->userData == NULL)
        return 0;
    return ((const struct callback *)p->userData)->id;
}

static int capturing(cudaStream_t s)
{
    enum cudaStreamCaptureStatus st;
    return cudaStreamIsCapturing(s, &st) == cudaSuccess &&
           st == cudaStreamCaptureStatusActive;
}

/* Request: u64 stream, u64 callback id, u32 kind, u32 flags.  Reply: i32.
 * A host function launched into a capturing stream becomes a node of the
 * capture's graph: its record is kept for every run of the graph. */
int cudart_be_host_func(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, id;
    uint32_t kind, flags;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &kind);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (kind > KIND_STREAM_CALLBACK || (kind == KIND_HOST_FN && flags != 0))
        return GVS_E_PROTO;
    cudaStream_t s;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    struct callback *cb = NULL;
    if (e == cudaSuccess && (cb = gvs_calloc(1, sizeof(*cb))) == NULL)
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
        cb->id = id;
        cb->s = call->state;
        cb->keep = kind == KIND_HOST_FN && capturing(s);
        e = kind == KIND_HOST_FN
                ? cudaLaunchHostFunc(s, run_host_fn, cb)
                : cudaStreamAddCallback(s, run_stream_callback, cb, flags);
        if (e != cudaSuccess)
            gvs_free(cb);
    }
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 callback id; posted (a reply, if asked for, is i32 0).
 * An id no callback waits for is a protocol violation, unless the session
 * is closing and has let them all go. */
int cudart_be_callback_done(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    pthread_once(&changed_once, changed_init);
    pthread_mutex_lock(&lock);
    struct callback *cb = waiting;
    while (cb != NULL && (cb->id != id || cb->done))
        cb = cb->next;
    if (cb != NULL) {
        cb->done = 1;
        pthread_cond_broadcast(&changed);
    }
    int known = cb != NULL || released;
    pthread_mutex_unlock(&lock);
    if (!known) {
        snprintf(call->why, sizeof(call->why),
                 "callback %llu is not one of this session's waiting",
                 (unsigned long long)id);
        return GVS_E_RANGE;
    }
    if (!call->noreply)
        apigen_put_i32(&c, cudaSuccess);
    return c.rc;
}

void be_callbacks_release(void)
{
    pthread_once(&changed_once, changed_init);
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&changed);
    while (notifying > 0)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}
