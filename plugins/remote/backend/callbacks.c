/*
 * Host callbacks run on the client (remote_be.h; docs/remoting.md, "Host
 * callbacks"), for every API plugin.  A plugin enqueues a function of its
 * own on the stream with one of these records; when the stream reaches
 * it, CUDA's callback thread sends CALLBACK_RUN and holds the stream
 * until the client's CALLBACK_DONE, which runs inline on the reader
 * thread so that no queued work stands in its way.
 *
 * A kept record (a graph's callback) runs each time the graph does, and
 * each run waits on a copy of it, since two executable graphs made from
 * one graph may run it at once.  The graph owns it through a user
 * object, CUDA's count of the graphs, executable graphs and launches
 * that hold it, whose destructor frees it and tells the client to drop
 * its record (CALLBACK_FORGET; callback_give); one no user object owns is
 * held in a list until the worker exits.
 *
 * While it waits, gvsd reads on with a thread that serves no request
 * (host->await_client): the request being read may wait for this one.
 *
 * While it waits, the callback thread sends CALLBACK_WAITING every
 * WAITING_MS: once a send fails the client has gone, and the callback
 * returns so that the stream, the threads waiting for it and the worker
 * can end.  Releasing the callbacks at the session's close does the same.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "remote_be_gen.h"
#include "remote_ops.h"
#include "state.h"

#define WAITING_MS 500

struct gvs_remote_callback {
    struct gvs_remote_callback *next; /* in `waiting` or `held` */
    uint64_t id;                      /* the client's */
    int done;
    int keep;
    int held; /* in `held`: no user object's destructor frees it */
};

/* The session's host, for notifications (a worker serves one session). */
static const struct gvs_host_api *host;
static struct gvs_session *session;

/* The callbacks waiting for CALLBACK_DONE; notifying counts the threads
 * inside host->notify, which must not outlive the session. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed;
static pthread_once_t changed_once = PTHREAD_ONCE_INIT;
static struct gvs_remote_callback *waiting;
/* Kept records no user object owns. */
static struct gvs_remote_callback *held;
static int notifying;
static int released;

static void changed_init(void)
{
    remote_be_cond_init(&changed);
}

void remote_be_callbacks_open(const struct gvs_host_api *h,
                              struct gvs_session *s)
{
    pthread_once(&changed_once, changed_init);
    pthread_mutex_lock(&lock);
    host = h;
    session = s;
    released = 0;
    pthread_mutex_unlock(&lock);
}

struct gvs_remote_callback *remote_be_callback_new(uint64_t id, int keep)
{
    struct gvs_remote_callback *cb = gvs_calloc(1, sizeof(*cb));
    if (cb != NULL) {
        cb->id = id;
        cb->keep = keep != 0;
    }
    return cb;
}

void remote_be_callback_free(struct gvs_remote_callback *cb)
{
    gvs_free(cb);
}

void remote_be_callback_keep(struct gvs_remote_callback *cb)
{
    cb->keep = 1;
}

/* A user object's destructor, on CUDA's thread for them: every run of
 * the record has ended, so the client may drop its own.  held is set
 * before the reference of a user object the graph refused is dropped. */
static void destroy(void *p)
{
    struct gvs_remote_callback *cb = p;
    if (cb->held)
        return;
    struct gvs_buf *b = gvs_buf_new(sizeof(cb->id));
    if (b != NULL && gvs_buf_put_u64(b, cb->id) == 0)
        (void)remote_be_notify(REMOTE_PLUGIN_ID, REMOTE_OP_CALLBACK_FORGET,
                               gvs_buf_ptr(b), gvs_buf_len(b));
    gvs_buf_free(b);
    gvs_free(cb);
}

void remote_be_callback_give(struct gvs_remote_callback *cb, void *graph,
                             const struct gvs_remote_user_objects *uo)
{
    void *object = NULL;
    if (graph != NULL && uo->create(&object, cb, destroy) == 0 &&
        uo->move(graph, object) == 0)
        return;
    cb->held = 1;
    if (object != NULL)
        (void)uo->release(object);
    pthread_mutex_lock(&lock);
    cb->next = held;
    held = cb;
    pthread_mutex_unlock(&lock);
}

/* Kinds of an API's HOST_FUNC (remote_be.h). */
enum { KIND_HOST_FN = 0, KIND_STREAM_CALLBACK = 1 };

int remote_be_host_func(struct gvs_call *call, int32_t success,
                        int32_t nomem,
                        int32_t (*enqueue)(struct gvs_call *call,
                                           uint64_t stream, uint32_t kind,
                                           uint32_t flags,
                                           struct gvs_remote_callback *cb))
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
    struct gvs_remote_callback *cb = remote_be_callback_new(id, 0);
    int32_t r = cb != NULL ? enqueue(call, stream, kind, flags, cb) : nomem;
    if (r != success)
        remote_be_callback_free(cb);
    apigen_put_i32(&c, r);
    return c.rc;
}

uint64_t remote_be_callback_id(const struct gvs_remote_callback *cb)
{
    return cb->id;
}

/* Sends op (u64 id, then i32 status and u8 keep when with_status) unless
 * the session is closing or has no client.  Caller holds lock, which is
 * released while sending. */
static int notify_locked(struct gvs_remote_callback *cb, uint16_t op,
                         int with_status, int32_t status)
{
    if (released || host == NULL || host->notify == NULL)
        return GVS_E_CLOSED;
    struct apigen_call c = {gvs_buf_new(13), NULL, 0};
    if (c.put == NULL)
        return GVS_E_NOMEM;
    apigen_put_u64(&c, cb->id);
    if (with_status) {
        apigen_put_i32(&c, status);
        apigen_put_u8(&c, (uint8_t)cb->keep);
    }
    int rc = c.rc;
    if (rc == 0) {
        const struct gvs_host_api *h = host;
        struct gvs_session *s = session;
        notifying++;
        pthread_mutex_unlock(&lock);
        rc = h->notify(s, REMOTE_PLUGIN_ID, op, gvs_buf_ptr(c.put),
                       gvs_buf_len(c.put));
        pthread_mutex_lock(&lock);
        if (--notifying == 0)
            pthread_cond_broadcast(&changed);
    }
    gvs_buf_free(c.put);
    return rc;
}

/* Tells gvsd that this thread waits for the client's answer (begin 1)
 * or no longer does (0), so that the request the wait may hold up does
 * not hold up the reading of that answer (host->await_client).  Caller
 * holds lock, which is released meanwhile; a wait begun counts as
 * notifying until it ends, so that the session outlives it.  Returns
 * whether the begin was told (then the end must be), else 0. */
static int await_locked(int begin)
{
    if (begin && (released || host == NULL || host->await_client == NULL))
        return 0;
    const struct gvs_host_api *h = host;
    struct gvs_session *s = session;
    if (begin)
        notifying++;
    pthread_mutex_unlock(&lock);
    h->await_client(s, begin);
    pthread_mutex_lock(&lock);
    if (!begin && --notifying == 0)
        pthread_cond_broadcast(&changed);
    return 1;
}

static void unlink_locked(struct gvs_remote_callback *cb)
{
    for (struct gvs_remote_callback **p = &waiting; *p != NULL;
         p = &(*p)->next)
        if (*p == cb) {
            *p = cb->next;
            return;
        }
}

static void deadline(struct timespec *t)
{
    remote_be_deadline(t, (long)WAITING_MS * 1000000);
}

void remote_be_callback_run(struct gvs_remote_callback *cb, int32_t status)
{
    if (cb->keep) {
        struct gvs_remote_callback *w = gvs_malloc(sizeof(*w));
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
    int awaited = await_locked(1);
    int rc = notify_locked(cb, REMOTE_OP_CALLBACK_RUN, 1, status);
    while (rc == 0 && !cb->done && !released) {
        struct timespec t;
        deadline(&t);
        if (pthread_cond_timedwait(&changed, &lock, &t) == ETIMEDOUT &&
            !cb->done)
            rc = notify_locked(cb, REMOTE_OP_CALLBACK_WAITING, 0, 0);
    }
    unlink_locked(cb);
    if (awaited)
        await_locked(0);
    pthread_mutex_unlock(&lock);
    gvs_free(cb);
}

/* Request: u64 callback id; posted (a reply, if asked for, is i32 0).
 * An id no callback waits for is a protocol violation, unless the session
 * is closing and has let them all go. */
int remote_be_callback_done(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    pthread_once(&changed_once, changed_init);
    pthread_mutex_lock(&lock);
    struct gvs_remote_callback *cb = waiting;
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
        apigen_put_i32(&c, 0);
    return c.rc;
}

void remote_be_callbacks_release(void)
{
    pthread_once(&changed_once, changed_init);
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&changed);
    while (notifying > 0)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}
