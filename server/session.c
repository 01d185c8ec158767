#include <time.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "session.h"

static double elapsed_s(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) +
           (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static int serve(struct gvsd_session *s)
{
    uint32_t id = s->opts->id;
    for (;;) {
        struct gvs_frame_hdr h;
        int rc = gvs_frame_recv(s->conn, s->opts->max_frame, &h, s->in);
        if (rc == GVS_E_CLOSED)
            return 0;
        if (rc < 0) {
            gvs_warn("session %u: bad frame: %s", id, gvs_strerror(rc));
            return rc;
        }
        rc = gvsd_dispatch(s, &h);
        if (rc == GVSD_SESSION_END)
            return 0;
        if (rc < 0)
            return rc;
    }
}

int gvsd_session_run(struct gvs_conn *c, const struct gvsd_plugins *ps,
                     const struct gvsd_session_opts *o)
{
    struct gvsd_session s = {.opts = o, .conn = c, .plugins = ps};
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    s.in = gvs_buf_new(o->max_frame);
    s.out = gvs_buf_new(o->max_frame);
    int rc = s.in != NULL && s.out != NULL ? gvsd_handshake(&s) : GVS_E_NOMEM;
    if (rc == 0)
        rc = serve(&s);
    gvsd_session_close_plugins(&s);
    gvs_info("session %u: ended after %.3f s, %llu call(s)%s", o->id,
             elapsed_s(&start), (unsigned long long)s.calls,
             rc == 0 ? "" : " (closed on error)");
    gvs_buf_free(s.in);
    gvs_buf_free(s.out);
    gvs_conn_close(c);
    return rc;
}
