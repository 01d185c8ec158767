#include <inttypes.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/spin.h"
#include "gvs/trace.h"
#include "session.h"
#include "stats.h"
#include "status.h"

void gvsd_session_why(struct gvs_session *s, enum gvsd_end why)
{
    pthread_mutex_lock(&s->lock);
    if (!s->ended) {
        s->ended = 1;
        s->end_reason = why;
    }
    pthread_mutex_unlock(&s->lock);
}

void gvsd_session_fail(struct gvs_session *s, enum gvsd_end why, int rc)
{
    gvsd_session_why(s, why);
    pthread_mutex_lock(&s->lock);
    int first = !s->failed;
    if (first) {
        s->fail_rc = rc;
        s->failed = 1;
    }
    pthread_cond_broadcast(&s->room);
    pthread_mutex_unlock(&s->lock);
    if (!first)
        return;
    pthread_mutex_lock(&s->send_lock);
    s->closed = 1;
    pthread_mutex_unlock(&s->send_lock);
    gvs_conn_shutdown(s->conn);
}

/* Caller holds send_lock.  Sends one frame whose body is iov[0..n-1].
 * A failed write means the client has gone (or its stream is out of
 * step): nothing more is sent. */
static int send_locked(struct gvs_session *s, struct gvs_frame_hdr *h,
                       const struct iovec *iov, int n)
{
    if (s->closed)
        return GVS_E_CLOSED;
    /* Counted first: once sent, the client may ask for the count. */
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    gvsd_stats_add_out(GVS_FRAME_HDR_LEN + (uint64_t)len);
    int rc = gvs_frame_sendv(s->conn, h, iov, n);
    if (rc < 0)
        s->closed = 1;
    return rc;
}

/* The reply's body is out's bytes followed by the handler's tail, sent
 * from where they are in one write. */
static void reply(struct gvs_session *s, const struct gvs_frame_hdr *req,
                  const struct gvs_buf *out, const void *tail,
                  size_t tail_len)
{
    struct gvs_frame_hdr h = {.plugin = req->plugin,
                              .op = req->op,
                              .flags = GVS_F_REPLY,
                              .lane = req->lane,
                              .id = req->id};
    struct iovec iov[2] = {
        {out != NULL ? (void *)gvs_buf_ptr(out) : NULL,
         out != NULL ? gvs_buf_len(out) : 0},
        {(void *)tail, tail_len},
    };
    pthread_mutex_lock(&s->send_lock);
    int was_closed = s->closed;
    int rc = send_locked(s, &h, iov, tail_len > 0 ? 2 : 1);
    pthread_mutex_unlock(&s->send_lock);
    gvs_trace(req->id, req->plugin, req->op, GVS_TRACE_REPLIED);
    if (rc < 0 && !was_closed) {
        /* After the client's close, its replies have nowhere to go. */
        pthread_mutex_lock(&s->lock);
        int gone = s->reading_done && !s->failed;
        pthread_mutex_unlock(&s->lock);
        if (gone)
            return;
        gvs_warn("session %u: sending reply %" PRIu64 " failed: %s",
                 s->opts->id, req->id, gvs_strerror(rc));
        gvsd_session_fail(s, GVSD_END_SEND_FAILED, rc);
    }
}

int gvsd_notify(struct gvs_session *s, uint16_t plugin, uint16_t op,
                const void *body, size_t len)
{
    struct iovec iov = {(void *)(uintptr_t)body, len};
    return gvsd_notify_many(s, plugin, op, &iov, 1);
}

int gvsd_notify_many(struct gvs_session *s, uint16_t plugin, uint16_t op,
                     const struct iovec *bodies, int n)
{
    struct gvs_frame_hdr h[GVS_FRAMES_MAX];
    if (s == NULL || plugin == 0 || bodies == NULL || n < 1 ||
        n > GVS_FRAMES_MAX)
        return GVS_E_INVAL;
    uint64_t len = 0;
    for (int i = 0; i < n; i++) {
        if (bodies[i].iov_len > 0 && bodies[i].iov_base == NULL)
            return GVS_E_INVAL;
        if (bodies[i].iov_len > UINT32_MAX)
            return GVS_E_TOOBIG;
        len += GVS_FRAME_HDR_LEN + (uint64_t)bodies[i].iov_len;
    }
    pthread_mutex_lock(&s->send_lock);
    int rc = GVS_E_CLOSED;
    if (!s->closed) {
        for (int i = 0; i < n; i++)
            h[i] = (struct gvs_frame_hdr){.plugin = plugin,
                                          .op = op,
                                          .flags = GVS_F_NOTIFY,
                                          .id = ++s->notify_id};
        gvsd_stats_add_out(len);
        rc = gvs_frames_sendv(s->conn, h, bodies, n);
        if (rc < 0)
            s->closed = 1;
    }
    pthread_mutex_unlock(&s->send_lock);
    return rc < 0 ? GVS_E_CLOSED : 0;
}

/* A local peer running as root or as gvsd's own user operates gvsd and
 * sees every session in the status; anyone else sees only its own
 * (docs/security.md, "What gvs status and the metrics reveal"). */
static int status_operator(const struct gvs_session *s)
{
    uint32_t uid, gid;
    int32_t pid;
    return gvs_conn_peer_cred(s->conn, &uid, &gid, &pid) == 0 &&
           (uid == 0 || uid == (uint32_t)geteuid());
}

static int control(struct gvs_session *s, struct gvsd_job *j)
{
    uint32_t id = s->opts->id;
    switch (j->h.op) {
    case GVS_CTL_PING:
    case GVS_CTL_STATUS:
    case GVS_CTL_LEAVING:
        if (gvs_buf_len(j->in) != 0) {
            gvs_warn("session %u: control op %u with a body of %zu bytes",
                     id, (unsigned)j->h.op, gvs_buf_len(j->in));
            gvsd_session_why(s, GVSD_END_BAD_FRAME);
            return GVS_E_PROTO;
        }
        if (j->h.op == GVS_CTL_LEAVING)
            s->leaving = 1;
        j->slot = -1;
        j->op = NULL;
        return 0;
    case GVS_CTL_BYE:
        gvsd_session_why(s, GVSD_END_BYE);
        return GVSD_SESSION_END;
    default:
        gvs_warn("session %u: unexpected control op %u", id,
                 (unsigned)j->h.op);
        gvsd_session_why(s, GVSD_END_UNKNOWN_OP);
        return GVS_E_PROTO;
    }
}

int gvsd_classify(struct gvs_session *s, struct gvsd_job *j)
{
    const struct gvs_frame_hdr *h = &j->h;
    uint32_t id = s->opts->id;
    if (h->flags & GVS_F_REPLY) {
        gvs_warn("session %u: request %" PRIu64 " is flagged as a reply", id,
                 h->id);
        gvsd_session_why(s, GVSD_END_BAD_FLAGS);
        return GVS_E_PROTO;
    }
    if (h->flags & GVS_F_NOTIFY) {
        gvs_warn("session %u: request %" PRIu64
                 " is flagged as a notification",
                 id, h->id);
        gvsd_session_why(s, GVSD_END_BAD_FLAGS);
        return GVS_E_PROTO;
    }
    if (h->plugin == 0)
        return control(s, j);
    int i = 0;
    while (i < s->nopen && s->open[i]->desc->id != h->plugin)
        i++;
    if (i == s->nopen) {
        gvs_warn("session %u: request for plugin %u, not in this session "
                 "(request %" PRIu64 ")",
                 id, (unsigned)h->plugin, h->id);
        gvsd_session_why(s, GVSD_END_UNKNOWN_PLUGIN);
        return GVS_E_NOENT;
    }
    const struct gvsd_plugin *p = s->open[i];
    const struct gvs_op *op = gvsd_plugin_op(p, h->op);
    if (op == NULL) {
        gvs_warn("session %u: plugin %s has no op %u", id, p->desc->name,
                 (unsigned)h->op);
        gvsd_session_why(s, GVSD_END_UNKNOWN_OP);
        return GVS_E_NOENT;
    }
    if ((h->flags & GVS_F_NOREPLY) && !(op->flags & GVS_OP_ASYNC_OK)) {
        gvs_warn("session %u: %s/%s cannot be sent without a reply", id,
                 p->desc->name, op->name);
        gvsd_session_why(s, GVSD_END_BAD_FLAGS);
        return GVS_E_PROTO;
    }
    j->slot = i;
    j->op = op;
    return 0;
}

/* A handler's tail is the plugin's doing, not the client's: a bad one
 * is a bug, and the reply it would have made is never sent.  The body
 * stays within what the client accepts by protocol, the frame maximum
 * (docs/protocol.md: bulk data is cut in chunks that fit). */
static int check_tail(const struct gvs_session *s, const struct gvs_buf *out,
                      const struct gvs_call *call)
{
    if (call->out_tail_len == 0)
        return 0;
    if (call->out_tail == NULL)
        return GVS_E_INVAL;
    size_t max = s->opts->max_frame < UINT32_MAX ? s->opts->max_frame
                                                 : UINT32_MAX;
    if (call->out_tail_len > max || gvs_buf_len(out) > max - call->out_tail_len)
        return GVS_E_TOOBIG;
    return 0;
}

void gvsd_serve(struct gvs_session *s, struct gvsd_job *j,
                struct gvs_buf *out)
{
    int noreply = (j->h.flags & GVS_F_NOREPLY) != 0;
    if (j->op == NULL) {
        if (noreply)
            return;
        if (j->h.op != GVS_CTL_STATUS) {
            reply(s, &j->h, NULL, NULL, 0);
            return;
        }
        /* The asking session is not one to show (docs/protocol.md). */
        gvsd_stats_mark_status();
        int rc = gvsd_status_encode(out, status_operator(s) ? NULL
                                                            : s->info.identity);
        if (rc < 0) {
            gvs_error("session %u: cannot encode the status: %s",
                      s->opts->id, gvs_strerror(rc));
            gvsd_session_fail(s, GVSD_END_INTERNAL, rc);
            return;
        }
        reply(s, &j->h, out, NULL, 0);
        return;
    }
    gvs_buf_reset(out);
    struct gvs_call call = {.in = j->in,
                            .out = out,
                            .state = s->state[j->slot],
                            .id = j->h.id,
                            .op = j->h.op,
                            .lane = j->h.lane,
                            .noreply = noreply,
                            .next_same = j->next_same,
                            .session = s};
    atomic_fetch_add(&s->calls, 1);
    gvsd_stats_add_call((int)(s->open[j->slot] - s->plugins->p));
    long long start = gvs_now_ns();
    gvs_trace(j->h.id, j->h.plugin, j->h.op, GVS_TRACE_RUN);
    int rc = j->op->fn(&call);
    gvs_trace(j->h.id, j->h.plugin, j->h.op, GVS_TRACE_RAN);
    /* The op trace (log level debug, docs/config.md): where a call's time
     * goes on the backend. */
    gvs_debug("session %u: lane %u id %llu %s/%s%s: %.1f us queued, %.1f us "
              "run on thread %ld",
              s->opts->id, (unsigned)j->h.lane, (unsigned long long)j->h.id,
              s->open[j->slot]->desc->name, j->op->name,
              noreply ? " (posted)" : "", (start - j->read_ns) / 1e3,
              (gvs_now_ns() - start) / 1e3, (long)gettid());
    if (rc < 0) {
        gvs_warn("session %u: %s/%s: malformed request (%s%s%s), id %" PRIu64
                 " lane %u, %zu bytes",
                 s->opts->id, s->open[j->slot]->desc->name, j->op->name,
                 gvs_strerror(rc), call.why[0] != '\0' ? ": " : "", call.why,
                 j->h.id, (unsigned)j->h.lane, gvs_buf_len(j->in));
        gvsd_session_fail(s, GVSD_END_MALFORMED, rc);
        return;
    }
    if (noreply || call.answered)
        return;
    rc = check_tail(s, out, &call);
    if (rc < 0) {
        gvs_error("session %u: %s/%s: bad reply tail (%s)", s->opts->id,
                  s->open[j->slot]->desc->name, j->op->name,
                  gvs_strerror(rc));
        gvsd_session_fail(s, GVSD_END_INTERNAL, rc);
        return;
    }
    gvsd_job_replying(s, j);
    reply(s, &j->h, out, call.out_tail, call.out_tail_len);
}
