/* The executor and lane threads of a session (session.h). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "session.h"

/* Served jobs kept for reuse, with their buffers' storage: enough for a
 * burst of requests, so that the buffers a burst of bulk chunks grew are
 * not freed and faulted in again by the next one. */
#define SPARE_JOBS 8

/* Jobs whose buffers hold at most SMALL_JOB bytes are kept apart, as many
 * as SPARE_SMALL_BYTES of storage: a client that posts calls faster than
 * the GPU takes them (2,000 device-to-device copies, say) has the reader
 * run that many requests ahead, and the thread serving them, the one
 * that sets the pace, would otherwise free each job as it is done (a
 * third of the worker's instructions per posted call, callgrind). */
#define SMALL_JOB ((size_t)64 << 10)
#define SPARE_SMALL_BYTES ((size_t)16 << 20)

/* A request that may wait for anything (a synchronization), served on a
 * lane thread so that others go on meanwhile. */
static int blocking(const struct gvsd_job *j)
{
    return j->op != NULL && (j->op->flags & GVS_OP_BLOCKING);
}

/* A request as large as a bulk piece takes about as long to serve (a
 * copy of its bytes) as to read: the reader hands it to a lane thread
 * rather than serving it where it was read, so that the next piece is
 * read while it is copied, not after.  The hand-off costs at most a
 * wake-up, a fraction of the time a socket takes to carry 1 MiB. */
#define OVERLAP_BYTES ((size_t)1 << 20)

/* Whether j, blocking, may wait this time, as its plugin says
 * (gvs_plugin.may_wait); 0 for a job not blocking.  The reader asks,
 * before it takes the session's lock again. */
static int may_wait(const struct gvs_session *s, const struct gvsd_job *j)
{
    if (!blocking(j))
        return 0;
    const struct gvs_plugin *p = s->open[j->slot]->desc;
    return p->may_wait == NULL ||
           p->may_wait(s->state[j->slot], j->h.op, j->h.lane, j->in);
}

static int bulky(const struct gvsd_job *j)
{
    return gvs_buf_len(j->in) >= OVERLAP_BYTES;
}

/* A blocking request whose client waits for the answer: other lanes'
 * requests may pass it (lane_give).  A posted one, an asynchronous copy
 * say, returned at once on the client, which may then have another
 * thread go on with what follows it in stream order: it keeps its place
 * as any posted request does. */
static int waited_for(const struct gvsd_job *j)
{
    return blocking(j) && !(j->h.flags & GVS_F_NOREPLY);
}

static void jobs_push(struct gvsd_jobs *q, struct gvsd_job *j)
{
    j->next = NULL;
    if (q->tail != NULL)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
}

static struct gvsd_job *jobs_pop(struct gvsd_jobs *q)
{
    struct gvsd_job *j = q->head;
    if (j != NULL) {
        q->head = j->next;
        if (q->head == NULL)
            q->tail = NULL;
    }
    return j;
}

static void job_free(struct gvsd_job *j)
{
    if (j == NULL)
        return;
    gvs_buf_free(j->in);
    gvs_free(j);
}

/* Caller holds the lock.  The spare job whose storage fits len best:
 * the smallest that holds it, else the largest.  NULL when none. */
static struct gvsd_job *spare_take(struct gvs_session *s, size_t len)
{
    struct gvsd_job **best = NULL;
    for (struct gvsd_job **pp = &s->spare; *pp != NULL; pp = &(*pp)->next) {
        size_t cap = gvs_buf_capacity((*pp)->in);
        size_t have = best != NULL ? gvs_buf_capacity((*best)->in) : 0;
        if (best == NULL || (cap >= len ? have < len || cap < have
                                        : have < len && cap > have))
            best = pp;
    }
    if (best == NULL)
        return NULL;
    struct gvsd_job *j = *best;
    *best = j->next;
    s->nspare--;
    return j;
}

static struct gvsd_job *job_new(struct gvs_session *s)
{
    struct gvsd_job *j = gvs_calloc(1, sizeof(*j));
    if (j != NULL && (j->in = gvs_buf_new(s->opts->max_frame)) == NULL) {
        gvs_free(j);
        j = NULL;
    }
    return j;
}

static size_t small_cost(const struct gvsd_job *j)
{
    return gvs_buf_capacity(j->in) + sizeof(*j);
}

/* Caller holds the lock.  The latest small spare job, or NULL. */
static struct gvsd_job *spare_small_take(struct gvs_session *s)
{
    struct gvsd_job *j = s->spare_small;
    if (j != NULL) {
        s->spare_small = j->next;
        s->spare_small_bytes -= small_cost(j);
    }
    return j;
}

struct gvsd_job *gvsd_job_get(struct gvs_session *s, size_t len)
{
    pthread_mutex_lock(&s->lock);
    while (s->outstanding > GVSD_QUEUE_BYTES_MAX && !s->failed)
        pthread_cond_wait(&s->room, &s->lock);
    struct gvsd_job *j = len <= SMALL_JOB ? spare_small_take(s) : NULL;
    if (j == NULL)
        j = spare_take(s, len);
    pthread_mutex_unlock(&s->lock);
    return j != NULL ? j : job_new(s);
}

void gvsd_jobs_prepare(struct gvs_session *s)
{
    size_t len = GVS_BULK_CHUNK + GVSD_JOB_OVERHEAD;
    if (len > s->opts->max_frame)
        len = s->opts->max_frame;
    struct gvsd_job *j = job_new(s);
    uint8_t *p;
    if (j == NULL || gvs_buf_reserve(j->in, len, &p) < 0) {
        job_free(j);
        return;
    }
    memset(p, 0, len);
    gvsd_job_put(s, j);
}

/* Caller holds the lock.  Keeps j for reuse, or returns it for the
 * caller to free once it has released the lock: freeing wipes what the
 * buffer held, which takes a while for a bulk chunk. */
static struct gvsd_job *job_recycle_locked(struct gvs_session *s,
                                           struct gvsd_job *j)
{
    gvs_buf_reset(j->in);
    j->held = NULL;
    j->next_same = 0;
    if (gvs_buf_capacity(j->in) <= SMALL_JOB) {
        if (s->spare_small_bytes + small_cost(j) > SPARE_SMALL_BYTES)
            return j;
        j->next = s->spare_small;
        s->spare_small = j;
        s->spare_small_bytes += small_cost(j);
        return NULL;
    }
    if (s->nspare >= SPARE_JOBS)
        return j;
    j->next = s->spare;
    s->spare = j;
    s->nspare++;
    return NULL;
}

/* Caller holds the lock.  A queued job is served or dropped; what it
 * returns is the caller's to free, unlocked (job_recycle_locked). */
static struct gvsd_job *job_done_locked(struct gvs_session *s,
                                        struct gvsd_job *j)
{
    s->outstanding -= j->cost;
    atomic_fetch_sub(&s->inflight, 1);
    pthread_cond_signal(&s->room);
    return job_recycle_locked(s, j);
}

/* Caller holds the lock, which is released while j is freed. */
static void job_free_unlocked(struct gvs_session *s, struct gvsd_job *j)
{
    if (j == NULL)
        return;
    pthread_mutex_unlock(&s->lock);
    job_free(j);
    pthread_mutex_lock(&s->lock);
}

void gvsd_job_put(struct gvs_session *s, struct gvsd_job *j)
{
    pthread_mutex_lock(&s->lock);
    j = job_recycle_locked(s, j);
    pthread_mutex_unlock(&s->lock);
    job_free(j);
}

/* Caller holds the lock.  j leaves its lane thread's blocking count. */
static void unhold_locked(struct gvsd_job *j)
{
    if (j->held != NULL) {
        j->held->blocking--;
        j->held = NULL;
    }
}

void gvsd_job_replying(struct gvs_session *s, struct gvsd_job *j)
{
    if (j->held == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    unhold_locked(j);
    pthread_mutex_unlock(&s->lock);
}

/* Caller holds the lock.  Runs j unless the session is failing, then
 * releases it. */
static void serve_unlocked(struct gvs_session *s, struct gvsd_job *j,
                           struct gvs_buf *out)
{
    if (!s->failed) {
        pthread_mutex_unlock(&s->lock);
        gvsd_serve(s, j, out);
        pthread_mutex_lock(&s->lock);
    }
    unhold_locked(j);
    job_free_unlocked(s, job_done_locked(s, j));
}

/* Caller holds the lock, which is released while polling: a client
 * that synchronizes in a loop hands this lane its next blocking request
 * within microseconds, and catching it without sleeping saves a wake-up
 * per call. */
static void spin_for_lane_work(struct gvs_session *s,
                               struct gvsd_lane_thread *t)
{
    long long ns = gvs_spin_ns();
    if (ns <= 0)
        return;
    t->spinning = 1;
    pthread_mutex_unlock(&s->lock);
    long long until = gvs_now_ns() + ns;
    for (unsigned i = 1; !atomic_load_explicit(&t->kicked, memory_order_acquire); i++) {
        if (i % 64 == 0 && gvs_now_ns() > until)
            break;
        gvs_cpu_relax();
    }
    pthread_mutex_lock(&s->lock);
    t->spinning = 0;
}

/* Caller holds the lock.  t, idle, takes the reading from a thread that
 * was given it and has not started yet (asleep when given it, still
 * waking up), or else asks for it (unless another thread does): t is
 * the thread that served last, warm for what its client thread asks
 * next, which then runs where it is read.  It asks only while it spins:
 * a sleeping thread would leave the reading undone until it woke. */
static void want_reading(struct gvsd_lane_thread *t)
{
    struct gvs_session *s = t->s;
    if (s->reading_orphan && !s->reading_over) {
        s->reading_orphan = 0;
        t->reader = 1;
        return;
    }
    if (s->want != NULL || s->reading_over)
        return;
    for (int i = 0; i < s->nlanes; i++) {
        struct gvsd_lane_thread *r = &s->lanes[i];
        if (r->reader && !r->reading && r != t) {
            r->reader = 0;
            t->reader = 1;
            return;
        }
    }
    if (gvs_spin_ns() <= 0)
        return;
    s->want = t;
    atomic_store_explicit(&s->reader_wanted, 1, memory_order_relaxed);
}

/* Caller holds the lock.  t no longer asks for the reading. */
static void want_drop(struct gvsd_lane_thread *t)
{
    struct gvs_session *s = t->s;
    if (s->want != t)
        return;
    s->want = NULL;
    atomic_store_explicit(&s->reader_wanted, 0, memory_order_relaxed);
}

static void lane_read(struct gvs_session *s, struct gvsd_lane_thread *t);

static void *lane_main(void *arg)
{
    struct gvsd_lane_thread *t = arg;
    struct gvs_session *s = t->s;
    pthread_setname_np(pthread_self(), "gvsd-lane");
    pthread_mutex_lock(&s->lock);
    for (;;) {
        if (!t->busy && !t->reader && !s->executor_done)
            spin_for_lane_work(s, t);
        if (!t->busy && !t->reader)
            want_drop(t);
        while (!t->busy && !t->reader && !s->executor_done)
            pthread_cond_wait(&t->wake, &s->lock);
        atomic_store_explicit(&t->kicked, 0, memory_order_relaxed);
        if (t->reader) {
            t->reading = 1;
            lane_read(s, t);
            t->reading = 0;
            continue;
        }
        if (!t->busy)
            break;
        struct gvsd_job *j = jobs_pop(&t->jobs);
        if (j == NULL) {
            t->busy = 0;
            want_reading(t);
            pthread_cond_signal(&s->idle);
            continue;
        }
        int ordered = j->ordered;
        const struct gvsd_job *n = t->jobs.head;
        j->next_same = n != NULL && ordered && n->ordered && n->op == j->op &&
                       n->slot == j->slot && j->op != NULL;
        t->serving = j;
        serve_unlocked(s, j, t->out);
        t->serving = NULL;
        if (ordered && --t->ordered == 0)
            pthread_cond_broadcast(&s->drained);
    }
    s->lanes_running--;
    pthread_cond_broadcast(&s->stopped);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Caller holds the lock.  The lane thread serving `lane`, if any. */
static struct gvsd_lane_thread *lane_busy(struct gvs_session *s,
                                          uint32_t lane)
{
    for (int i = 0; i < s->nlanes; i++)
        if (s->lanes[i].busy && s->lanes[i].lane == lane)
            return &s->lanes[i];
    return NULL;
}

static int thread_start(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t th;
    if (pthread_attr_init(&attr) != 0)
        return GVS_E_NOMEM;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : GVS_E_NOMEM;
}

/* Caller holds the lock.  A free lane thread (neither serving a lane
 * nor reading), started if none is free and the session may have more,
 * else waited for when wait is set.  NULL when none exists and none can
 * be started, or none is free and wait is not set. */
static struct gvsd_lane_thread *lane_free(struct gvs_session *s, int wait)
{
    for (;;) {
        for (int i = 0; i < s->nlanes; i++)
            if (!s->lanes[i].busy && !s->lanes[i].reader)
                return &s->lanes[i];
        if (s->nlanes < GVSD_LANE_THREADS) {
            struct gvsd_lane_thread *t = &s->lanes[s->nlanes];
            t->s = s;
            t->out = gvs_buf_new(s->opts->max_frame);
            if (t->out != NULL && pthread_cond_init(&t->wake, NULL) == 0) {
                if (thread_start(lane_main, t) == 0) {
                    s->nlanes++;
                    s->lanes_running++;
                    return t;
                }
                pthread_cond_destroy(&t->wake);
            }
            gvs_buf_free(t->out);
            t->out = NULL;
            if (s->nlanes == 0)
                return NULL;
            gvs_warn("session %u: cannot start a lane thread beyond %d",
                     s->opts->id, s->nlanes);
        }
        if (!wait)
            return NULL;
        pthread_cond_wait(&s->idle, &s->lock);
    }
}

/* Caller holds the lock.  Puts j behind lane thread t's jobs, waking t
 * when it was idle. */
static void lane_give(struct gvsd_lane_thread *t, struct gvsd_job *j)
{
    if (!t->busy) {
        want_drop(t);
        t->busy = 1;
        t->lane = j->h.lane;
        t->warm = 1;
        atomic_store_explicit(&t->kicked, 1, memory_order_release);
        pthread_cond_signal(&t->wake);
    }
    /* Behind a blocking job not yet answered, j was sent before its
     * lane saw the answer, so never ordered before other lanes'
     * requests: they pass it, as they pass the blocking one. */
    int w = waited_for(j);
    j->ordered = !w && t->blocking == 0;
    t->ordered += j->ordered;
    t->blocking += w;
    j->held = w ? t : NULL;
    jobs_push(&t->jobs, j);
}

int gvsd_next_queued(const struct gvs_call *call)
{
    struct gvs_session *s = call->session;
    pthread_mutex_lock(&s->lock);
    const struct gvsd_lane_thread *t = lane_busy(s, call->lane);
    const struct gvsd_job *j = t != NULL ? t->serving : NULL;
    const struct gvsd_job *n = t != NULL ? t->jobs.head : NULL;
    int queued = j != NULL && n != NULL && j->h.id == call->id &&
                 waited_for(j) && n->h.plugin == j->h.plugin &&
                 n->h.op == j->h.op;
    pthread_mutex_unlock(&s->lock);
    return queued;
}

/* Caller holds the lock.  Whether a lane thread not serving `lane`
 * holds an ordered job (lane_give), which a request of `lane` must not
 * pass: requests of different lanes keep the order they came in, but
 * for blocking ones, which may wait for anything, and what follows
 * them on their lane. */
static int others_pending(const struct gvs_session *s, uint32_t lane)
{
    for (int i = 0; i < s->nlanes; i++)
        if (s->lanes[i].ordered > 0 && s->lanes[i].lane != lane)
            return 1;
    return 0;
}

/* Caller holds the lock.  Whether j may run at once on a free lane
 * thread: nothing waits for or runs on the executor, and j would pass
 * no other lane's non-blocking job.  Then a client thread's requests, a
 * launch and the synchronization after it say, run one after the other
 * on one thread, with no hand-off from the executor in between. */
static int direct_ok(const struct gvs_session *s, const struct gvsd_job *j)
{
    return !s->failed && j->op != NULL && s->queue.head == NULL &&
           !s->executor_busy && !others_pending(s, j->h.lane);
}

/* Caller holds the lock.  Counts j as outstanding until it is served. */
static void account(struct gvs_session *s, struct gvsd_job *j)
{
    j->cost = gvs_buf_len(j->in) + GVSD_JOB_OVERHEAD;
    s->outstanding += j->cost;
    atomic_fetch_add(&s->inflight, 1);
}

/* Caller holds the lock.  An idle lane thread that served `lane` last,
 * or NULL. */
static struct gvsd_lane_thread *lane_warm(struct gvs_session *s,
                                          uint32_t lane)
{
    for (int i = 0; i < s->nlanes; i++) {
        struct gvsd_lane_thread *t = &s->lanes[i];
        if (!t->busy && !t->reader && t->warm && t->lane == lane)
            return t;
    }
    return NULL;
}

/* Caller holds the lock.  A request goes straight to a lane thread when
 * it can (direct_ok): the one serving its lane, else a free one; else to
 * the executor, which keeps the order of requests as they came.  Never
 * waits for a lane thread: the reader must go on. */
static void route(struct gvs_session *s, struct gvsd_job *j)
{
    struct gvsd_lane_thread *t = NULL;
    if (direct_ok(s, j) && (t = lane_busy(s, j->h.lane)) == NULL &&
        (t = lane_warm(s, j->h.lane)) == NULL)
        t = lane_free(s, 0);
    if (t != NULL) {
        lane_give(t, j);
    } else {
        jobs_push(&s->queue, j);
        atomic_fetch_add(&s->queued, 1);
        pthread_cond_signal(&s->work);
    }
}

/* Caller holds the lock.  Makes t, idle, the reader. */
static void reader_give(struct gvsd_lane_thread *t)
{
    want_drop(t);
    t->reader = 1;
    atomic_store_explicit(&t->kicked, 1, memory_order_release);
    pthread_cond_signal(&t->wake);
}

/* Caller holds the lock.  Whether an idle lane thread polls for work:
 * one that would take the reading at once. */
static int lane_spinning(const struct gvs_session *s)
{
    for (int i = 0; i < s->nlanes; i++)
        if (s->lanes[i].spinning && !s->lanes[i].busy && !s->lanes[i].reader)
            return 1;
    return 0;
}

/* Caller holds the lock, released while reading; t, the reader, is
 * about to serve j itself.  When j is a posted request of a GVS_OP_BATCH
 * op and the next request is already there, reads it (gvsd_read_ahead)
 * and sets j->next_same when it is another of the same op and lane,
 * posted, that t then serves next whatever else holds (lane_read): 1
 * then, else 0. */
static int read_ahead(struct gvs_session *s, struct gvsd_lane_thread *t,
                      struct gvsd_job *j)
{
    if (j->op == NULL || !(j->op->flags & GVS_OP_BATCH) ||
        !(j->h.flags & GVS_F_NOREPLY) || s->ahead_set)
        return 0;
    struct gvsd_job *n;
    pthread_mutex_unlock(&s->lock);
    gvsd_read_ahead(s, t->out, &n);
    pthread_mutex_lock(&s->lock);
    j->next_same = n != NULL && n->op == j->op && n->slot == j->slot &&
                   n->h.lane == j->h.lane && (n->h.flags & GVS_F_NOREPLY) &&
                   !bulky(n) && !s->failed;
    return j->next_same;
}

/* Caller holds the lock; t, the reader, serves j (direct_ok, of no
 * other thread's lane) itself and then reads on: t becomes the thread of
 * j's lane, as if given j.  When the reading was taken from it meanwhile
 * (gvsd_await_client), t is j's lane's busy thread, j an ordered job
 * of it, as if lane_give had given it j: then it returns 0, else 1. */
static int serve_reading(struct gvs_session *s, struct gvsd_lane_thread *t,
                         struct gvsd_job *j)
{
    t->lane = j->h.lane;
    t->warm = 1;
    s->serving_reader = t;
    serve_unlocked(s, j, t->out);
    if (t->reader) {
        s->serving_reader = NULL;
        return 1;
    }
    if (--t->ordered == 0)
        pthread_cond_broadcast(&s->drained);
    return 0;
}

void gvsd_await_client(struct gvs_session *s, int begin)
{
    pthread_mutex_lock(&s->lock);
    s->awaiting += begin ? 1 : -1;
    struct gvsd_lane_thread *t = s->serving_reader;
    if (begin && t != NULL) {
        s->serving_reader = NULL;
        t->reader = 0;
        t->busy = 1;
        t->ordered++;
        struct gvsd_lane_thread *next = lane_free(s, 0);
        if (next != NULL)
            reader_give(next);
        else
            s->reading_orphan = 1;
    }
    pthread_mutex_unlock(&s->lock);
}

/* Caller holds the lock, released while reading; t is the reader.
 * Reads and routes requests until one may run at once on a free lane
 * thread (direct_ok) and no other idle thread served its lane last: t
 * serves it itself, where it was read.  When it may wait (blocking, as
 * its plugin says: may_wait) or is bulky, and another idle lane thread
 * can take over the reading, that thread reads meanwhile and t returns.  A request that cannot
 * wait for long is served without passing the reading on unless an idle
 * thread polls for work: waking a sleeping one would take longer than
 * the request, and after a pause the next request would wait for that
 * wake-up too; and unless a thread waits for the client's answer
 * (gvsd_await_client), which the request may wait for in turn.
 * Between two frames it passes the reading to an idle thread that asks
 * for it (want_reading).  Returns with the reading passed on, or
 * over. */
static void lane_read(struct gvs_session *s, struct gvsd_lane_thread *t)
{
    /* The request read is the one read ahead of the last t served, which
     * said it would serve it next (read_ahead): t does, at once.  It
     * passes nothing: it follows that one on its lane, and nothing was
     * read in between. */
    int chained = 0;
    for (;;) {
        struct gvsd_job *j;
        pthread_mutex_unlock(&s->lock);
        int rc = gvsd_read(s, t->out, &j);
        int waits = rc == 1 && may_wait(s, j);
        pthread_mutex_lock(&s->lock);
        if (rc == GVSD_READ_PASS) {
            /* The thread asking is idle (it is no longer asking once it
             * has work, or stops spinning). */
            struct gvsd_lane_thread *w = s->want;
            if (w != NULL) {
                t->reader = 0;
                reader_give(w);
                return;
            }
            continue;
        }
        if (rc != 1) {
            t->reader = 0;
            s->reading_over = 1;
            s->read_rc = rc;
            pthread_cond_broadcast(&s->stopped);
            return;
        }
        account(s, j);
        struct gvsd_lane_thread *next;
        if (chained || (direct_ok(s, j) && lane_busy(s, j->h.lane) == NULL &&
                        lane_warm(s, j->h.lane) == NULL)) {
            int now = chained || (!waits && !bulky(j) && !lane_spinning(s) &&
                                  s->awaiting == 0);
            /* A run of posted requests of one op is served here, so
             * that each knows the next is coming. */
            chained = read_ahead(s, t, j);
            if (now || chained) {
                if (serve_reading(s, t, j))
                    continue;
                return;
            }
            if ((next = lane_free(s, 0)) != NULL) {
                t->reader = 0;
                reader_give(next);
                lane_give(t, j);
                return;
            }
        }
        route(s, j);
    }
}

int gvsd_reading_start(struct gvs_session *s)
{
    pthread_mutex_lock(&s->lock);
    struct gvsd_lane_thread *t = lane_free(s, 0);
    if (t != NULL)
        reader_give(t);
    pthread_mutex_unlock(&s->lock);
    return t != NULL ? 0 : GVS_E_NOMEM;
}

int gvsd_reading_wait(struct gvs_session *s)
{
    pthread_mutex_lock(&s->lock);
    while (!s->reading_over)
        pthread_cond_wait(&s->stopped, &s->lock);
    int rc = s->read_rc;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Caller holds the lock, which is released while polling: requests of a
 * busy client follow each other within microseconds, and catching the
 * next one without sleeping saves a wake-up per call. */
static void spin_for_work(struct gvs_session *s)
{
    long long ns = gvs_spin_ns();
    if (ns <= 0)
        return;
    pthread_mutex_unlock(&s->lock);
    long long until = gvs_now_ns() + ns;
    for (unsigned i = 1; atomic_load_explicit(&s->queued, memory_order_acquire) == 0; i++) {
        if (i % 64 == 0 && gvs_now_ns() > until)
            break;
        gvs_cpu_relax();
    }
    pthread_mutex_lock(&s->lock);
}

static void *executor_main(void *arg)
{
    struct gvs_session *s = arg;
    pthread_setname_np(pthread_self(), "gvsd-executor");
    struct gvs_buf *out = gvs_buf_new(s->opts->max_frame);
    pthread_mutex_lock(&s->lock);
    if (out == NULL) {
        gvs_error("session %u: out of memory", s->opts->id);
        pthread_mutex_unlock(&s->lock);
        gvsd_session_fail(s, GVSD_END_INTERNAL, GVS_E_NOMEM);
        pthread_mutex_lock(&s->lock);
    }
    for (;;) {
        if (s->queue.head == NULL && !s->reading_done)
            spin_for_work(s);
        while (s->queue.head == NULL && !s->reading_done)
            pthread_cond_wait(&s->work, &s->lock);
        struct gvsd_job *j = jobs_pop(&s->queue);
        if (j == NULL)
            break;
        atomic_fetch_sub(&s->queued, 1);
        s->executor_busy = 1;
        /* What another lane's thread took earlier goes first.  Until j is
         * on its way, nothing passes it (direct_ok sees the executor
         * busy), lane_free's wait included. */
        while (!s->failed && others_pending(s, j->h.lane))
            pthread_cond_wait(&s->drained, &s->lock);
        if (s->failed) {
            job_free_unlocked(s, job_done_locked(s, j));
            s->executor_busy = 0;
            continue;
        }
        /* A lane whose thread still serves it keeps its order: what
         * follows goes behind it, on its thread. */
        struct gvsd_lane_thread *t = lane_busy(s, j->h.lane);
        if (t == NULL && blocking(j))
            t = lane_free(s, 1);
        if (t != NULL)
            lane_give(t, j);
        else
            serve_unlocked(s, j, out);
        s->executor_busy = 0;
    }
    s->executor_done = 1;
    for (int i = 0; i < s->nlanes; i++)
        pthread_cond_signal(&s->lanes[i].wake);
    s->executor_running = 0;
    pthread_cond_broadcast(&s->stopped);
    pthread_mutex_unlock(&s->lock);
    gvs_buf_free(out);
    return NULL;
}

int gvsd_executor_start(struct gvs_session *s)
{
    pthread_mutex_lock(&s->lock);
    s->executor_running = 1;
    pthread_mutex_unlock(&s->lock);
    int rc = thread_start(executor_main, s);
    if (rc < 0) {
        pthread_mutex_lock(&s->lock);
        s->executor_running = 0;
        pthread_mutex_unlock(&s->lock);
    }
    return rc;
}

void gvsd_wait_until(struct timespec *until, unsigned ms)
{
    clock_gettime(CLOCK_REALTIME, until);
    until->tv_sec += ms / 1000;
    until->tv_nsec += (long)(ms % 1000) * 1000000;
    if (until->tv_nsec >= 1000000000) {
        until->tv_sec++;
        until->tv_nsec -= 1000000000;
    }
}

int gvsd_executor_stop(struct gvs_session *s)
{
    struct timespec until;
    gvsd_wait_until(&until, GVSD_DRAIN_MS);
    pthread_mutex_lock(&s->lock);
    s->reading_done = 1;
    pthread_cond_signal(&s->work);
    if (!s->executor_running) {
        s->executor_done = 1;
        for (int i = 0; i < s->nlanes; i++)
            pthread_cond_signal(&s->lanes[i].wake);
    }
    int rc = 0;
    while (rc != ETIMEDOUT && (s->executor_running || s->lanes_running))
        rc = pthread_cond_timedwait(&s->stopped, &s->lock, &until);
    int left = s->executor_running + s->lanes_running;
    pthread_mutex_unlock(&s->lock);
    if (left == 0)
        return 0;
    gvs_warn("session %u: %d thread(s) still busy after %d ms", s->opts->id,
             left, GVSD_DRAIN_MS);
    return GVS_E_TIMEOUT;
}

void gvsd_executor_free(struct gvs_session *s)
{
    struct gvsd_job *j;
    while ((j = jobs_pop(&s->queue)) != NULL)
        job_free(j);
    job_free(s->ahead);
    s->ahead = NULL;
    while ((j = s->spare) != NULL) {
        s->spare = j->next;
        job_free(j);
    }
    while ((j = spare_small_take(s)) != NULL)
        job_free(j);
    for (int i = 0; i < s->nlanes; i++) {
        while ((j = jobs_pop(&s->lanes[i].jobs)) != NULL)
            job_free(j);
        gvs_buf_free(s->lanes[i].out);
        pthread_cond_destroy(&s->lanes[i].wake);
    }
    s->nlanes = 0;
}
