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
    int stats_slot; /* its slot of the session table (stats.h), or -1 */
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

/* Records a started worker and its slot of the session table; the caller
 * checked the table is not full. */
void gvsd_workers_add(struct gvsd_workers *ws, pid_t pid, uint32_t session,
                      int stats_slot);

/* Reaps every worker that has ended, logging how (a signal is a
 * warning, unless it is the SIGTERM of a shutdown), and clears the
 * session-table slot a killed worker could not clear, without
 * blocking. */
void gvsd_workers_reap(struct gvsd_workers *ws);

/* SIGTERMs every worker, waits up to grace_ms for them, then SIGKILLs
 * the rest and reaps them. */
void gvsd_workers_stop(struct gvsd_workers *ws, unsigned grace_ms);

#endif
