/* Descriptors the client passes beside its frames, and the data area of
 * its connection (session.h). */
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/spin.h"
#include "session.h"

int gvsd_area(struct gvs_session *s, void **base, size_t *len)
{
    return gvs_conn_area(s->conn, base, len);
}

/* Caller holds fd_lock. */
static int claim(struct gvs_session *s, uint64_t tag, int *fd)
{
    for (int i = 0; i < s->nfds; i++) {
        if (s->fds[i].tag != tag)
            continue;
        *fd = s->fds[i].fd;
        s->fds[i] = s->fds[--s->nfds];
        return 1;
    }
    return 0;
}

/* Requests may run out of their arrival order (lanes), so a descriptor
 * for a later request may be read first: it is kept for it.  A client
 * that passes more than it names fills the stash and is cut off. */
int gvsd_recv_fd(struct gvs_session *s, uint64_t tag, int *fd)
{
    *fd = -1;
    if (!(gvs_conn_caps(s->conn) & GVS_CONN_CAP_FDS))
        return GVS_E_NOTSUP;
    long long deadline = gvs_now_ns() + (long long)GVSD_FD_WAIT_MS * 1000000;
    int rc = 0;
    pthread_mutex_lock(&s->fd_lock);
    while (rc == 0 && !claim(s, tag, fd)) {
        long long left = deadline - gvs_now_ns();
        if (left <= 0) {
            rc = GVS_E_TIMEOUT;
            break;
        }
        int got;
        uint64_t got_tag;
        rc = gvs_conn_recv_fd(s->conn, (unsigned)(left / 1000000) + 1, &got,
                              &got_tag);
        if (rc < 0)
            break;
        if (s->nfds == GVSD_FD_STASH) {
            close(got);
            rc = GVS_E_PROTO;
            break;
        }
        s->fds[s->nfds].tag = got_tag;
        s->fds[s->nfds].fd = got;
        s->nfds++;
    }
    pthread_mutex_unlock(&s->fd_lock);
    if (rc < 0)
        gvs_warn("session %u: descriptor %llu: %s", s->opts->id,
                 (unsigned long long)tag, gvs_strerror(rc));
    return rc;
}

void gvsd_fds_close(struct gvs_session *s)
{
    while (s->nfds > 0)
        close(s->fds[--s->nfds].fd);
}
