/*
 * A connection over the two rings of shm_ring.h, shared by shm:// (one
 * region per connection, futex wake-ups, a unix socket beside it) and
 * ivshmem:// (a slot of a region QEMU shares with a guest, where no
 * futex reaches the other side: polled waits and heartbeats).  The frame
 * I/O is written once here (comm_shm.c); a transport says how its side
 * waits and how it learns that the peer has gone.  Internal to gvs_core.
 */
#ifndef GVS_SHM_CONN_H
#define GVS_SHM_CONN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "comm_impl.h"
#include "shm_ring.h"

struct shm_conn;

struct shm_conn_waits {
    /* Waits until the peer moves ring r's counter (shm_ring.h,
     * gvs_shm_ring_sleep) or timeout_ns passed: 0, or GVS_E_TIMEOUT. */
    int (*sleep)(struct shm_conn *s, struct gvs_shm_ring *r,
                 long long timeout_ns);
    /* After a sleep that timed out: sets s->peer_gone once the peer is
     * found gone without closing.  Returns 1 when something else will
     * wake this side's sleepers should the peer go (shm_watch.h), so
     * that they may sleep longer; 0 when only these looks notice it. */
    int (*check_peer)(struct gvs_conn *c, struct shm_conn *s);
};

struct shm_conn {
    uint8_t *base; /* the mapping, munmap'd at close */
    size_t len;
    struct gvs_shm_ctl *ctl;
    struct gvs_shm_ring in, out;
    int side; /* the ring we produce into: also our closed flag */
    unsigned timeout_ms;
    atomic_int down;      /* ended here: every call fails */
    atomic_int peer_gone; /* the peer has gone without closing */
    const struct shm_conn_waits *waits;
};

/* Sets s up over the region whose control block is at ctl_base (rings of
 * ring_size after it), producing into ring `side`.  base/len: the
 * mapping to release at close. */
void gvs_shmconn_init(struct shm_conn *s, uint8_t *base, size_t len,
                      uint8_t *ctl_base, uint32_t ring_size, int side,
                      const struct shm_conn_waits *w);

/* The gvs_conn_ops of either transport, on c->priv, a struct shm_conn. */
int gvs_shmconn_sendv(struct gvs_conn *c, const struct iovec *iov,
                      int iovcnt);
int gvs_shmconn_recv_some(struct gvs_conn *c, void *p, size_t len,
                          size_t *got);
int gvs_shmconn_readable(struct gvs_conn *c);
/* gvs_conn_wait_readable, where the transport's sleep is the futex of
 * gvs_shm_ring_sleep_unread (shm://, not ivshmem's polled one). */
int gvs_shmconn_wait_readable(struct gvs_conn *c);
int gvs_shmconn_set_timeout(struct gvs_conn *c, unsigned ms);
/* 1 once the connection has ended here or the peer has ended it. */
int gvs_shmconn_ended(struct shm_conn *s);
/* Ends the connection here: every later call fails, the peer finds our
 * closed flag (and, where it sleeps on a futex, is woken). */
void gvs_shmconn_end(struct shm_conn *s);

#endif
