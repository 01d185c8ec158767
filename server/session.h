/*
 * One client session, served in its own worker process: the handshake,
 * then requests dispatched to the plugins the handshake named.
 */
#ifndef GVSD_SESSION_H
#define GVSD_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "gvs/comm.h"
#include "gvs/proto.h"
#include "plugins.h"

struct gvsd_session_opts {
    uint32_t id;
    size_t max_frame;
    unsigned handshake_timeout_ms;
};

struct gvsd_session {
    const struct gvsd_session_opts *opts;
    struct gvs_conn *conn;
    const struct gvsd_plugins *plugins;
    /* The plugins named by the handshake, whose session_open succeeded,
     * and their per-session state. */
    const struct gvsd_plugin *open[GVS_MAX_PLUGINS];
    void *state[GVS_MAX_PLUGINS];
    int nopen;
    /* Reused by every request: allocated once, grown on demand. */
    struct gvs_buf *in;
    struct gvs_buf *out;
    uint64_t calls;
};

/* Serves c until the session ends, then closes it.  Returns 0 when the
 * client ended it (BYE, or a close between frames), else a negative
 * GVS_E_* code; every abnormal end has been logged. */
int gvsd_session_run(struct gvs_conn *c, const struct gvsd_plugins *ps,
                     const struct gvsd_session_opts *o);

/* handshake.c: receives and checks the HELLO (bounded by the handshake
 * timeout), opens the plugins it names and answers it.  On failure the
 * client has been told why (when it sent a frame) and it is logged. */
int gvsd_handshake(struct gvsd_session *s);

/* Sends a HELLO reply; also used by the parent to refuse a connection. */
int gvsd_hello_reply(struct gvs_conn *c, uint64_t id, int32_t status,
                     const char *message, uint32_t session);

/* Calls session_close for every plugin opened, last first. */
void gvsd_session_close_plugins(struct gvsd_session *s);

/* dispatch.c: serves one received request (header h, body in s->in).
 * Returns 0 to go on, GVSD_SESSION_END after a BYE, or a negative
 * GVS_E_* code (logged) when the session must be closed. */
#define GVSD_SESSION_END 1
int gvsd_dispatch(struct gvsd_session *s, const struct gvs_frame_hdr *h);

#endif
