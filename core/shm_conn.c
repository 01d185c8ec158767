/*
 * The frame I/O of a connection over two rings (shm_conn.h), for shm://
 * and ivshmem://.  Waiting: a sender short of room spins for
 * gvs_spin_ns(), then sleeps the transport's way; a receiver sleeps at
 * once (its callers spin first through gvs_conn_spin_readable when they
 * expect data soon).  Sleeps last SLEEP_SLICE_NS, after which the
 * transport checks whether its peer is still there, then twice as long
 * each time nothing came, up to SLEEP_SLICE_MAX_NS: a peer that died
 * without closing is noticed within a slice (or the transport's own
 * liveness period), and an idle connection wakes once a second.  Where
 * the transport has something that wakes the sleepers when the peer
 * goes (shm://'s watcher), the slices grow to SLEEP_SLICE_WATCHED_NS:
 * an idle connection then wakes once in 10 s, a look that only matters
 * if the watcher's wake-ups all came between a sleeper's look and its
 * sleep.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "gvs/err.h"
#include "gvs/spin.h"
#include "shm_conn.h"

#define SLEEP_SLICE_NS 100000000LL
#define SLEEP_SLICE_MAX_NS 1000000000LL
#define SLEEP_SLICE_WATCHED_NS 10000000000LL

/* The slice after one that ended with nothing to do; watched: the
 * transport's check_peer said the peer's end will wake us. */
static long long next_slice(long long slice, int watched)
{
    long long max = watched ? SLEEP_SLICE_WATCHED_NS : SLEEP_SLICE_MAX_NS;
    return slice < max / 2 ? 2 * slice : max;
}

/* Whether the peer has ended the stream.  Acquire: what it sent before
 * closing is visible once this is seen. */
static int peer_ended(struct shm_conn *s)
{
    return atomic_load_explicit(&s->ctl->closed[!s->side],
                                memory_order_acquire) ||
           atomic_load(&s->peer_gone);
}

void gvs_shmconn_init(struct shm_conn *s, uint8_t *base, size_t len,
                      uint8_t *ctl_base, uint32_t ring_size, int side,
                      const struct shm_conn_waits *w)
{
    s->base = base;
    s->len = len;
    s->ctl = (struct gvs_shm_ctl *)ctl_base;
    s->side = side;
    s->waits = w;
    gvs_shm_ring_init(&s->out, ctl_base, ring_size, side, 1);
    gvs_shm_ring_init(&s->in, ctl_base, ring_size, !side, 0);
}

void gvs_shmconn_end(struct shm_conn *s)
{
    atomic_store(&s->down, 1);
    /* Release (seq_cst): the peer reads all we published before it. */
    atomic_store(&s->ctl->closed[s->side], 1);
    gvs_shm_wake_all(s->ctl);
}

int gvs_shmconn_ended(struct shm_conn *s)
{
    return atomic_load(&s->down) || peer_ended(s);
}

/* A peer that corrupts its counter gets no more service. */
static int broken(struct gvs_conn *c, int rc)
{
    c->ops->shutdown(c);
    return rc;
}

/* Waits for room for len bytes, or a good part of the ring
 * (gvs_shm_ring_want). */
static int wait_room(struct gvs_conn *c, struct shm_conn *s, size_t len)
{
    long long spin_until = gvs_now_ns() + gvs_spin_ns();
    long long slice = SLEEP_SLICE_NS;
    int rc = 0;
    gvs_shm_ring_want(&s->out, len);
    while (!gvs_shm_ring_has_room(&s->out)) {
        if (atomic_load(&s->down) || peer_ended(s)) {
            rc = GVS_E_CLOSED;
            break;
        }
        if (gvs_now_ns() < spin_until) {
            gvs_cpu_relax();
        } else if (s->waits->sleep(s, &s->out, slice) == GVS_E_TIMEOUT) {
            slice = next_slice(slice, s->waits->check_peer(c, s));
        }
    }
    gvs_shm_ring_want(&s->out, 0);
    return rc;
}

/* Frames larger than the ring go through in pieces: what fits is
 * published, then we wait for the consumer to make room. */
int gvs_shmconn_sendv(struct gvs_conn *c, const struct iovec *iov,
                      int iovcnt)
{
    struct shm_conn *s = c->priv;
    if (atomic_load(&s->down) || peer_ended(s))
        return GVS_E_CLOSED;
    for (int i = 0; i < iovcnt; i++) {
        const uint8_t *p = iov[i].iov_base;
        size_t len = iov[i].iov_len;
        while (len > 0) {
            size_t put;
            int rc = gvs_shm_ring_put(&s->out, p, len, &put);
            if (rc < 0)
                return broken(c, rc);
            p += put;
            len -= put;
            if (put == 0) {
                gvs_shm_ring_publish(&s->out);
                rc = wait_room(c, s, len);
                if (rc < 0)
                    return rc;
            }
        }
    }
    gvs_shm_ring_publish(&s->out);
    return 0;
}

int gvs_shmconn_recv_some(struct gvs_conn *c, void *p, size_t len,
                          size_t *got)
{
    struct shm_conn *s = c->priv;
    long long deadline =
        s->timeout_ms ? gvs_now_ns() + (long long)s->timeout_ms * 1000000 : 0;
    long long idle_slice = SLEEP_SLICE_NS;
    for (;;) {
        if (atomic_load(&s->down))
            return GVS_E_CLOSED;
        /* Seen before reading: data sent before a close is still read. */
        int ended = peer_ended(s);
        int rc = gvs_shm_ring_read(&s->in, p, len, got);
        if (rc < 0)
            return broken(c, rc);
        if (*got > 0)
            return 0;
        if (ended)
            return GVS_E_CLOSED;
        long long slice = idle_slice;
        if (deadline != 0) {
            long long left = deadline - gvs_now_ns();
            if (left <= 0)
                return GVS_E_TIMEOUT;
            if (left < slice)
                slice = left;
        }
        if (s->waits->sleep(s, &s->in, slice) == GVS_E_TIMEOUT) {
            idle_slice = next_slice(idle_slice, s->waits->check_peer(c, s));
        }
    }
}

int gvs_shmconn_readable(struct gvs_conn *c)
{
    struct shm_conn *s = c->priv;
    uint32_t n;
    return atomic_load(&s->down) || peer_ended(s) ||
           gvs_shm_ring_avail(&s->in, &n) < 0 || n > 0;
}

int gvs_shmconn_wait_readable(struct gvs_conn *c)
{
    struct shm_conn *s = c->priv;
    long long slice = SLEEP_SLICE_NS;
    while (!atomic_load(&s->down) && !peer_ended(s) &&
           !gvs_shm_ring_unread(&s->in)) {
        if (gvs_shm_ring_sleep_unread(&s->in, slice) == GVS_E_TIMEOUT) {
            slice = next_slice(slice, s->waits->check_peer(c, s));
        }
    }
    return 0;
}

int gvs_shmconn_set_timeout(struct gvs_conn *c, unsigned ms)
{
    struct shm_conn *s = c->priv;
    s->timeout_ms = ms;
    return 0;
}
