/* Ends the session of a tcp or tls peer that has gone without a FIN. */
#include <time.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "session.h"

/* Looks four times per timeout, so that the end comes at most a quarter
 * late.  Not more often: every idle tcp session has one of these, and 64
 * of them looking once a second cost gvsd more than 1% of a core
 * (idle.sessions.tcp). */
static void *watch_main(void *arg)
{
    struct gvs_session *s = arg;
    unsigned ms = s->opts->cfg->tcp_ack_timeout_ms;
    unsigned period = ms / 4;
    struct gvs_conn_watch w = {0};
    pthread_mutex_lock(&s->lock);
    while (!s->watch_stop) {
        struct timespec until;
        gvsd_wait_until(&until, period > 0 ? period : 1);
        pthread_cond_timedwait(&s->watch_wake, &s->lock, &until);
        if (s->watch_stop)
            break;
        pthread_mutex_unlock(&s->lock);
        if (gvs_conn_unanswered(s->conn, ms, &w)) {
            gvs_warn("session %u: the peer has acknowledged nothing for "
                     "%u ms (tcp_ack_timeout_ms): it is gone, closing",
                     s->opts->id, ms);
            /* First, as a reply may be blocked in a write, holding the
             * send lock that gvsd_session_fail takes. */
            gvsd_session_why(s, GVSD_END_LOST);
            gvs_conn_shutdown(s->conn);
            gvsd_session_fail(s, GVSD_END_LOST, GVS_E_TIMEOUT);
            return NULL;
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int gvsd_watch_start(struct gvs_session *s)
{
    uint32_t uid, gid;
    int32_t pid;
    /* A local peer's end is always seen: its kernel closes the socket. */
    if (s->opts->cfg == NULL || s->opts->cfg->tcp_ack_timeout_ms == 0 ||
        gvs_conn_peer_cred(s->conn, &uid, &gid, &pid) != GVS_E_NOTSUP)
        return 0;
    pthread_cond_init(&s->watch_wake, NULL);
    s->watch_stop = 0;
    if (pthread_create(&s->watch, NULL, watch_main, s) != 0) {
        pthread_cond_destroy(&s->watch_wake);
        return GVS_E_NOMEM;
    }
    s->watching = 1;
    return 0;
}

void gvsd_watch_stop(struct gvs_session *s)
{
    if (!s->watching)
        return;
    pthread_mutex_lock(&s->lock);
    s->watch_stop = 1;
    pthread_cond_signal(&s->watch_wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->watch, NULL);
    pthread_cond_destroy(&s->watch_wake);
    s->watching = 0;
}
