/*
 * The metrics endpoint (config metrics_listen, docs/config.md): a plain
 * TCP listener in gvsd's parent answering HTTP GET /metrics with the
 * counters of the session table (stats.h) in Prometheus text format.
 * Every label set is bounded (reasons, plugins, directions, the host's
 * GPUs) but the per-session series', which come and go with the
 * sessions and are served only when asked for (metrics_sessions).
 *
 * It lives in the parent's poll loop, so nothing here may block: sockets
 * are non-blocking, a request is at most GVSD_METRICS_REQUEST_MAX bytes,
 * a connection is dropped GVSD_METRICS_TIMEOUT_MS after it was accepted
 * whatever it is doing, and at most GVSD_METRICS_CONNS are served at once
 * (more are closed on accept).  A slow or hostile HTTP client costs a
 * poll entry, never a wait.
 */
#ifndef GVSD_METRICS_H
#define GVSD_METRICS_H

#include <poll.h>
#include <stddef.h>

#include "gvs/config.h"
#include "plugins.h"

#define GVSD_METRICS_CONNS 4
#define GVSD_METRICS_REQUEST_MAX 2048
#define GVSD_METRICS_TIMEOUT_MS 2000
/* Entries gvsd_metrics_pollfds may fill. */
#define GVSD_METRICS_POLLFDS (1 + GVSD_METRICS_CONNS)

struct gvsd_metrics_conn {
    int fd;
    int state; /* reading the request, writing the reply, draining */
    long long deadline; /* CLOCK_MONOTONIC ms */
    size_t inlen;
    char in[GVSD_METRICS_REQUEST_MAX];
    char *out;
    size_t outlen, outoff;
};

struct gvsd_metrics {
    int fd; /* the listener; -1 when there is no endpoint */
    int sessions; /* the per-session series too */
    const struct gvsd_plugins *plugins; /* names the calls' plugin label */
    int n;
    struct gvsd_metrics_conn conn[GVSD_METRICS_CONNS];
};

/* Binds and listens on cfg->metrics_listen (tcp://host:port), and has
 * the host's GPUs listed (gvsd_stats_learn_gpus); none: no endpoint, m
 * stays idle.  The per-session series are served when
 * cfg->metrics_sessions; ps (which must outlive m) names the plugins.
 * 0, or a negative GVS_E_* code after logging why. */
int gvsd_metrics_open(struct gvsd_metrics *m, const struct gvs_config *cfg,
                      const struct gvsd_plugins *ps);

/* Fills pfd[0..GVSD_METRICS_POLLFDS): the listener, then each
 * connection; entries unused (all of them without an endpoint) get fd
 * -1, which poll skips. */
void gvsd_metrics_pollfds(const struct gvsd_metrics *m, struct pollfd *pfd);

/* Milliseconds until the next deadline, -1 when no connection is open. */
int gvsd_metrics_timeout(const struct gvsd_metrics *m);

/* After poll, with pfd as gvsd_metrics_pollfds filled it: reads, answers
 * and closes what is ready or late, then accepts what is pending. */
void gvsd_metrics_service(struct gvsd_metrics *m, const struct pollfd *pfd);

/* Closes the listener and every connection (a forked worker closes its
 * copies this way too: nothing is shut down for the parent). */
void gvsd_metrics_close(struct gvsd_metrics *m);

#endif
