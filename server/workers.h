/*
 * The parent's table of session workers: one forked process per session,
 * bounded by max_sessions.
 */
#ifndef GVSD_WORKERS_H
#define GVSD_WORKERS_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct gvsd_worker {
    pid_t pid;
    uint32_t session;
    struct timespec start;
    int stopping; /* gvsd sent SIGTERM while shutting down */
};

struct gvsd_workers {
    struct gvsd_worker *w;
    int n;
    int max;
};

/* 0 or GVS_E_NOMEM. */
int gvsd_workers_init(struct gvsd_workers *ws, int max);
void gvsd_workers_free(struct gvsd_workers *ws);

static inline int gvsd_workers_full(const struct gvsd_workers *ws)
{
    return ws->n >= ws->max;
}

/* Records a started worker; the caller checked the table is not full. */
void gvsd_workers_add(struct gvsd_workers *ws, pid_t pid, uint32_t session);

/* Reaps every worker that has ended, logging how (a signal is a
 * warning, unless it is the SIGTERM of a shutdown), without blocking. */
void gvsd_workers_reap(struct gvsd_workers *ws);

/* SIGTERMs every worker, waits up to grace_ms for them, then SIGKILLs
 * the rest and reaps them. */
void gvsd_workers_stop(struct gvsd_workers *ws, unsigned grace_ms);

#endif
