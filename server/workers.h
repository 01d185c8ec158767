/*
 * The parent's table of session workers: one forked process per session,
 * bounded by max_sessions.
 */
#ifndef GVSD_WORKERS_H
#define GVSD_WORKERS_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Who a connection comes from, for the per-peer handshake limit: "uid=U"
 * on unix and shm, the address without the port on tcp and tls. */
#define GVSD_PEER_KEY_MAX 64

struct gvsd_worker {
    pid_t pid;
    uint32_t session;
    struct timespec start;
    int stopping; /* gvsd sent SIGTERM while shutting down */
    int stats_slot; /* its slot of the session table (stats.h), or -1 */
    int killed;     /* killed for overrunning its handshake */
    char peer[GVSD_PEER_KEY_MAX];
};

struct gvsd_workers {
    struct gvsd_worker *w;
    int n;
    int max; /* max_sessions + max_handshakes */
};

/* Where a new connection stands against the limits, counted over the
 * workers there are. */
struct gvsd_load {
    int sessions;   /* workers serving a session */
    int handshakes; /* workers in their handshake */
    int peer_handshakes; /* of those, from the same peer */
};

/* 0 or GVS_E_NOMEM. */
int gvsd_workers_init(struct gvsd_workers *ws, int max);
void gvsd_workers_free(struct gvsd_workers *ws);

/* Counts the workers serving a session and those in their handshake
 * (the session table says which; a worker that has left its slot counts
 * as neither), and of those the ones from peer. */
void gvsd_workers_load(const struct gvsd_workers *ws, const char *peer,
                       struct gvsd_load *out);

/* Records a started worker, its slot of the session table and its peer
 * key; the caller checked there is room (n < max). */
void gvsd_workers_add(struct gvsd_workers *ws, pid_t pid, uint32_t session,
                      int stats_slot, const char *peer);

/* SIGKILLs every worker still in its handshake limit_ms after it was
 * forked (its own deadline should have ended it: this is the backstop
 * when it did not) and returns the milliseconds until the next one is
 * due, -1 when none is in its handshake or limit_ms is 0. */
int gvsd_workers_expire(struct gvsd_workers *ws, unsigned limit_ms);

/* Reaps every worker that has ended, logging how (a signal is a
 * warning, unless it is the SIGTERM of a shutdown), and clears the
 * session-table slot a killed worker could not clear, without
 * blocking. */
void gvsd_workers_reap(struct gvsd_workers *ws);

/* SIGTERMs every worker, waits up to grace_ms for them, then SIGKILLs
 * the rest and reaps them. */
void gvsd_workers_stop(struct gvsd_workers *ws, unsigned grace_ms);

#endif
