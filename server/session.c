#include <stdio.h>
#include <time.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/spin.h"
#include "gvs/trace.h"
#include "session.h"
#include "stats.h"

static double elapsed_s(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) +
           (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* The session's lock is taken for each request by the thread reading
 * them and by the one serving them, a few hundred nanoseconds apart when
 * a client posts calls faster than the GPU takes them: a waiter spins
 * briefly before it sleeps (glibc's adaptive mutex), since a sleep and
 * its wake-up cost the serving thread microseconds each time. */
static void session_lock_init(pthread_mutex_t *m)
{
#ifdef __GLIBC__
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) == 0) {
        int ok =
            pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP) == 0 &&
            pthread_mutex_init(m, &a) == 0;
        pthread_mutexattr_destroy(&a);
        if (ok)
            return;
    }
#endif
    pthread_mutex_init(m, NULL);
}

static int failed_rc(struct gvs_session *s)
{
    if (!atomic_load_explicit(&s->failed, memory_order_acquire))
        return 0;
    pthread_mutex_lock(&s->lock);
    int rc = s->failed ? s->fail_rc : 0;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* While requests are being served their replies, and the client's next
 * requests, are due: the reader polls longer (gvs_spin_busy_ns). */
static int serving(void *arg)
{
    struct gvs_session *s = arg;
    return atomic_load_explicit(&s->inflight, memory_order_relaxed) > 0;
}

/* Polls for a frame: while requests are being served, for up to
 * gvs_spin_busy_ns(); otherwise, after the last one was, for
 * gvs_spin_ns() or the session's rhythm (gvs_spin_hot_next), the longer.
 * A client issuing calls back to back sends the next one within
 * microseconds of a reply, also of one that took the GPU a while (a
 * large copy), and one that works on the host between its calls sends it
 * within the quiet times it kept so far: caught so without a sleep and a
 * wake-up (over ivshmem a polled sleep of tens of microseconds).  1 when
 * a frame is there, 0 when none came, -1 when another thread asks for
 * the reading first.  *idle_since is when the session was last seen
 * serving, or the start. */
static int reader_spin(struct gvs_session *s, long long *idle_since)
{
    long long ns = gvs_spin_ns();
    if (ns > 0 && s->hot_ns > ns)
        ns = s->hot_ns;
    long long start = gvs_now_ns(), now = start, last_served = start;
    for (;;) {
        *idle_since = last_served;
        if (gvs_conn_readable(s->conn))
            return 1;
        if (atomic_load_explicit(&s->reader_wanted, memory_order_relaxed))
            return -1;
        if (ns <= 0)
            return 0;
        if (serving(s)) {
            last_served = now;
            if (now - start >= gvs_spin_busy_ns())
                return 0;
        } else if (now - last_served >= ns) {
            return 0;
        }
        gvs_cpu_relax();
        now = gvs_now_ns();
    }
}

/* Whether the client has hung up without leaving (gvs_conn_vanished),
 * looked at when frame h was read, unless h ends the session in order
 * (BYE) or says the program leaves, and once a millisecond at most (a
 * poll() of its socket): a killed program's requests still in the ring
 * are then dropped unread instead of served one after another, which,
 * posted copies and launches waiting for a full GPU queue, could take
 * seconds; natively the driver abandons a killed process's work.  (Over
 * a socket, what the peer sent before its end is read, and the queue
 * dropped at the end of the stream.) */
static int vanished(struct gvs_session *s, const struct gvs_frame_hdr *h,
                    long long now)
{
    if (s->leaving ||
        (h->plugin == 0 &&
         (h->op == GVS_CTL_LEAVING || h->op == GVS_CTL_BYE)) ||
        now - s->hangup_look_ns < 1000000)
        return 0;
    s->hangup_look_ns = now;
    return gvs_conn_vanished(s->conn);
}

/* gvsd_read; ahead: gvsd_read_ahead's, which returns 0 at once when no
 * frame is there (a frame begun is read to its end). */
static int read_next(struct gvs_session *s, struct gvs_buf *out,
                     struct gvsd_job **jp, int ahead)
{
    uint32_t id = s->opts->id;
    unsigned idle = s->opts->cfg != NULL ? s->opts->cfg->idle_timeout_ms : 0;
    *jp = NULL;
    for (;;) {
        long long idle_since = gvs_now_ns();
        if (ahead && !gvs_conn_readable(s->conn))
            return GVSD_READ_PASS;
        if (!ahead && reader_spin(s, &idle_since) < 0)
            return GVSD_READ_PASS;
        struct gvs_frame_hdr h;
        char why[128];
        int rc = gvs_frame_recv_hdr_why(s->conn, s->opts->max_frame, &h, why,
                                        sizeof(why));
        /* Chosen once the length is known, so that a bulk chunk goes into
         * a buffer that already holds one. */
        struct gvsd_job *j = gvsd_job_get(s, rc == 0 ? h.len : 0);
        if (j == NULL) {
            gvs_error("session %u: out of memory", id);
            return GVS_E_NOMEM;
        }
        if (rc == 0) {
            rc = gvs_frame_recv_body(s->conn, h.len, j->in);
            j->h = h;
            gvsd_stats_add_in(GVS_FRAME_HDR_LEN + (uint64_t)h.len);
            if (rc == GVS_E_PROTO)
                snprintf(why, sizeof(why),
                         "stream ended inside the %u-byte body of request "
                         "%llu",
                         (unsigned)h.len, (unsigned long long)h.id);
        }
        j->read_ns = gvs_now_ns();
        if (rc == 0) {
            gvs_trace(h.id, h.plugin, h.op, GVS_TRACE_READ);
            s->hot_ns = gvs_spin_hot_next(s->hot_ns, j->read_ns - idle_since);
        }
        /* A failing op shuts the connection down to stop us here. */
        int failed = failed_rc(s);
        if (rc == 0 && failed == 0 && vanished(s, &h, j->read_ns))
            rc = GVS_E_CLOSED;
        if (rc == 0 && failed == 0)
            rc = gvsd_classify(s, j);
        else if (failed < 0)
            rc = failed;
        else if (rc == GVS_E_CLOSED && s->leaving)
            rc = GVSD_SESSION_END;
        else if (rc == GVS_E_CLOSED)
            /* Its queued requests are dropped (the session fails). */
            gvs_info("session %u: the client's connection ended without "
                     "its exit: dropping the requests not yet started",
                     id);
        else if (rc == GVS_E_TIMEOUT)
            gvs_warn("session %u: idle for %u ms, closing", id, idle);
        else if (rc == GVS_E_IO)
            /* The kernel gave up on the connection: keepalive probes
             * went unanswered, or the network reported the peer
             * unreachable. */
            gvs_warn("session %u: connection lost: the peer stopped "
                     "answering, or the network failed",
                     id);
        else
            gvs_warn("session %u: bad frame: %s%s%s", id, gvs_strerror(rc),
                     why[0] != '\0' ? ": " : "", why);
        if (rc != 0 && failed == 0)
            gvsd_session_why(s, rc == GVSD_SESSION_END ? GVSD_END_CLOSED
                                : rc == GVS_E_CLOSED   ? GVSD_END_VANISHED
                                : rc == GVS_E_TIMEOUT  ? GVSD_END_IDLE
                                : rc == GVS_E_IO       ? GVSD_END_LOST
                                : rc == GVS_E_TOOBIG   ? GVSD_END_FRAME_TOO_BIG
                                                       : GVSD_END_BAD_FRAME);
        if (rc == 0 && j->op != NULL && (j->op->flags & GVS_OP_INLINE)) {
            gvsd_serve(s, j, out);
            rc = failed_rc(s);
        } else if (rc == 0) {
            *jp = j;
            return 1;
        }
        gvsd_job_put(s, j);
        if (rc != 0)
            return rc == GVSD_SESSION_END ? 0 : rc;
    }
}

int gvsd_read(struct gvs_session *s, struct gvs_buf *out,
              struct gvsd_job **jp)
{
    if (!s->ahead_set)
        return read_next(s, out, jp, 0);
    s->ahead_set = 0;
    *jp = s->ahead;
    s->ahead = NULL;
    return s->ahead_rc;
}

void gvsd_read_ahead(struct gvs_session *s, struct gvs_buf *out,
                     struct gvsd_job **jp)
{
    *jp = NULL;
    if (s->ahead_set)
        return;
    int rc = read_next(s, out, &s->ahead, 1);
    if (rc == GVSD_READ_PASS)
        return;
    s->ahead_rc = rc;
    s->ahead_set = 1;
    *jp = s->ahead;
}

/* Serves the session on the executor and lane threads, one of which
 * reads at a time.  Returns how the session ended; *drained is 0 when
 * ops still ran past GVSD_DRAIN_MS: the plugins' state may not be freed
 * then. */
static int serve_threaded(struct gvs_session *s, int *drained)
{
    /* idle_timeout_ms: a client that sends nothing for that long (not
     * even the keepalives our clients send) has gone or hangs; the
     * receive timeout ends its session.  Reads apart, the connection's
     * timeout bounds nothing (shm's sends ignore it). */
    unsigned idle = s->opts->cfg != NULL ? s->opts->cfg->idle_timeout_ms : 0;
    int rc = gvs_conn_set_timeout(s->conn, idle);
    if (rc < 0) {
        gvs_error("session %u: cannot set the idle timeout: %s", s->opts->id,
                  gvs_strerror(rc));
        return rc;
    }
    rc = gvsd_executor_start(s);
    if (rc == 0 && (rc = gvsd_watch_start(s)) < 0)
        gvsd_executor_stop(s);
    if (rc == 0 && (rc = gvsd_reading_start(s)) < 0) {
        gvsd_watch_stop(s);
        gvsd_executor_stop(s);
    }
    if (rc < 0) {
        gvs_error("session %u: cannot start its threads", s->opts->id);
        return rc;
    }
    rc = gvsd_reading_wait(s);
    if (rc < 0)
        gvsd_session_fail(s, GVSD_END_INTERNAL, rc);
    gvsd_watch_stop(s);
    *drained = gvsd_executor_stop(s) == 0;
    int failed = failed_rc(s);
    return rc < 0 ? rc : failed;
}

int gvsd_session_run(struct gvs_conn *c, const struct gvsd_plugins *ps,
                     const struct gvsd_session_opts *o)
{
    struct gvs_session s = {.opts = o, .conn = c, .plugins = ps};
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_mutex_init(&s.send_lock, NULL);
    pthread_mutex_init(&s.fd_lock, NULL);
    session_lock_init(&s.lock);
    pthread_cond_init(&s.work, NULL);
    pthread_cond_init(&s.room, NULL);
    pthread_cond_init(&s.idle, NULL);
    pthread_cond_init(&s.stopped, NULL);
    pthread_cond_init(&s.drained, NULL);
    s.in = gvs_buf_new(o->max_frame);
    s.out = gvs_buf_new(o->max_frame);
    int drained = 1;
    /* Until a token says otherwise, the peer is who it is and the
     * default quota applies (the handshake may refine both). */
    snprintf(s.info.identity, sizeof(s.info.identity), "%s",
             gvs_conn_peer(c));
    s.info.memory_quota = o->cfg != NULL ? o->cfg->memory_quota : 0;
    int rc = s.in != NULL && s.out != NULL ? gvsd_handshake(&s) : GVS_E_NOMEM;
    int handshaken = rc == 0;
    if (rc == 0)
        gvsd_jobs_prepare(&s);
    if (rc == 0)
        rc = serve_threaded(&s, &drained);
    pthread_mutex_lock(&s.send_lock);
    s.closed = 1;
    pthread_mutex_unlock(&s.send_lock);
    /* A refused handshake was counted and logged as such. */
    if (handshaken) {
        enum gvsd_end why = s.ended    ? s.end_reason
                            : rc == 0 ? GVSD_END_CLOSED
                                      : GVSD_END_INTERNAL;
        gvsd_count_end(why);
        gvs_info("session %u: ended after %.3f s, %llu call(s): %s", o->id,
                 elapsed_s(&start), (unsigned long long)atomic_load(&s.calls),
                 gvsd_end_label(why));
    }
    /* Threads still inside a plugin keep using what it holds; the
     * worker's exit reclaims everything then. */
    if (!drained)
        return rc < 0 ? rc : GVS_E_TIMEOUT;
    gvsd_session_close_plugins(&s);
    gvsd_executor_free(&s);
    gvsd_fds_close(&s);
    gvs_buf_free(s.in);
    gvs_buf_free(s.out);
    /* Out of the table before the client can see the end: a client that
     * reconnects at once must not find its old session, or handshake,
     * still counted against the limits. */
    gvsd_stats_leave();
    gvs_conn_close(c);
    return rc;
}
