/*
 * Connections refused for lack of room (max_sessions, max_handshakes,
 * max_handshakes_per_peer).  The refusal is a
 * HELLO reply sent at once; the parent then holds the connection, write
 * side shut, until the client closes or a deadline passes.  Closing at
 * once would make the client's HELLO, sent after we closed, fail with a
 * broken pipe before it ever reads why.
 */
#ifndef GVSD_REFUSALS_H
#define GVSD_REFUSALS_H

#include <poll.h>

#include "gvs/comm.h"
#include "reasons.h"

#define GVSD_REFUSALS_MAX 16
#define GVSD_REFUSAL_LINGER_MS 1000

struct gvsd_refusals {
    struct gvs_conn *conn[GVSD_REFUSALS_MAX];
    long long deadline[GVSD_REFUSALS_MAX];
    int n;
};

/* Tells c why (the client shows it: "too many sessions"), counts
 * reason, logs it with detail (the numbers) and holds c (closes it at
 * once when the table is full or the connection has no descriptor). */
void gvsd_refuse(struct gvsd_refusals *r, struct gvs_conn *c,
                 enum gvsd_refusal reason, const char *why,
                 const char *detail);

/* Fills pfd[0..n) for the held connections; returns n. */
int gvsd_refusals_pollfds(const struct gvsd_refusals *r, struct pollfd *pfd);

/* Milliseconds until the next deadline, -1 when nothing is held. */
int gvsd_refusals_timeout(const struct gvsd_refusals *r);

/* After poll: drains what each client sent, closes those that closed or
 * whose deadline passed.  pfd is what gvsd_refusals_pollfds filled. */
void gvsd_refusals_service(struct gvsd_refusals *r, const struct pollfd *pfd);

/* copies: the table is a forked worker's copy of the parent's, which
 * goes on holding the connections (gvs_conn_close_copy). */
void gvsd_refusals_close_all(struct gvsd_refusals *r, int copies);

#endif
