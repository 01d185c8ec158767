/*
 * The watcher of a shm:// connection: a thread asleep in poll() on the
 * connection's unix socket, which the kernel wakes when the peer dies
 * (even by SIGKILL) or either side shuts the connection down.  It then
 * marks the peer gone and wakes every futex sleeper of the region, so
 * that those sleep without a time limit instead of waking each second to
 * look at the socket themselves: an idle session costs no wake-up at
 * all (64 idle sessions, 64 wake-ups a second before, 0.65-1.9% of a
 * core on the project's VMs).  Internal to gvs_core.
 *
 * The futex wait cannot also wait for the socket, so a peer's death that
 * lands between a sleeper's last look and its futex call would be
 * missed by a single wake-up: the watcher wakes the sleepers again after
 * 1, 10 and 100 ms, and the sleepers' own looks still come, though
 * rarely (shm_conn.c, SLEEP_SLICE_WATCHED_NS).
 */
#ifndef GVS_SHM_WATCH_H
#define GVS_SHM_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "shm_conn.h"

struct shm_watch {
    int sock;
    struct shm_conn *s;
    /* The process whose thread watches: 0 none, -pid being started.
     * gvsd accepts in its parent and serves in a forked worker, which
     * starts its own. */
    _Atomic pid_t owner;
    pthread_t thread;
    int stop[2]; /* a pipe: a byte ends the thread */
};

/* Sets w up for the connection s over sock; no thread yet. */
void gvs_shm_watch_init(struct shm_watch *w, int sock, struct shm_conn *s);

/* Starts the watcher in this process unless it runs: 1 once it runs, 0
 * when it could not start (the caller keeps looking itself). */
int gvs_shm_watch_ensure(struct shm_watch *w);

/* Ends and joins this process's watcher, if any, and releases what a
 * parent's left behind in a forked child.  Before the connection's
 * socket and mapping go. */
void gvs_shm_watch_end(struct shm_watch *w);

#endif
