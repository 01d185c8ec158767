#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gvs/err.h"
#include "shm_ring.h"

/* Not FUTEX_*_PRIVATE: the words live in a MAP_SHARED region that the
 * other process waits on too. */
static long futex(_Atomic uint32_t *word, int op, uint32_t val,
                  const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

void gvs_shm_futex_wake(_Atomic uint32_t *word)
{
    futex(word, FUTEX_WAKE, INT_MAX, NULL);
}

int gvs_shm_futex_wait(_Atomic uint32_t *word, uint32_t val,
                       long long timeout_ns)
{
    struct timespec ts = {.tv_sec = timeout_ns / 1000000000,
                          .tv_nsec = timeout_ns % 1000000000};
    long rc = futex(word, FUTEX_WAIT, val, &ts);
    return rc < 0 && errno == ETIMEDOUT ? GVS_E_TIMEOUT : 0;
}

size_t gvs_shm_region_size(uint32_t ring_size)
{
    return GVS_SHM_CTL_SIZE + 2 * (size_t)ring_size;
}

int gvs_shm_ring_size_ok(uint32_t ring_size)
{
    return ring_size >= GVS_SHM_RING_MIN && ring_size <= GVS_SHM_RING_MAX &&
           (ring_size & (ring_size - 1)) == 0;
}

void gvs_shm_ring_init(struct gvs_shm_ring *r, uint8_t *base,
                       uint32_t ring_size, int which, int producer)
{
    struct gvs_shm_ctl *ctl = (struct gvs_shm_ctl *)base;
    r->ctl = &ctl->ring[which];
    r->data = base + GVS_SHM_CTL_SIZE + (size_t)which * ring_size;
    r->size = ring_size;
    r->pos = 0;
    r->limit = 0;
    r->want = 1;
    atomic_init(&r->consumed, 0);
    r->producer = producer;
}

int gvs_shm_ring_avail(const struct gvs_shm_ring *r, uint32_t *n)
{
    /* Acquire: the bytes below head are written before head moves. */
    uint32_t head = atomic_load_explicit(&r->ctl->head, memory_order_acquire);
    *n = head - r->pos;
    return *n <= r->size ? 0 : GVS_E_PROTO;
}

/* Room for len bytes, or as much as there is: the room left below the
 * limit when that holds len, else the room the consumer has handed back
 * by now.  GVS_E_PROTO if its tail is ahead of what we produced or more
 * than a ring behind. */
static int room(struct gvs_shm_ring *r, size_t len, uint32_t *n)
{
    *n = r->limit - r->pos;
    if (*n >= len && *n <= r->size)
        return 0;
    uint32_t tail = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
    uint32_t used = r->pos - tail;
    if (used > r->size)
        return GVS_E_PROTO;
    r->limit = tail + r->size;
    *n = r->size - used;
    return 0;
}

void gvs_shm_ring_want(struct gvs_shm_ring *r, size_t len)
{
    r->want = len == 0 ? 1 : r->size / 8;
}

int gvs_shm_ring_has_room(struct gvs_shm_ring *r)
{
    uint32_t n;
    return room(r, r->want, &n) < 0 || n >= r->want;
}

/* The other side is told only when it said it sleeps.  The fence orders
 * our counter store before the flag load, pairing with the sleeper's
 * fence between its flag store and the futex's load of the counter:
 * either we see the flag, or the futex sees the new counter. */
static void wake_peer(_Atomic uint32_t *word, _Atomic uint32_t *flag)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(flag, memory_order_relaxed))
        gvs_shm_futex_wake(word);
}

/* Consumer: wake_peer for a producer that sleeps, once the tail has
 * reached what it waits for (a value it wrote: wrong, it only wakes too
 * soon or sleeps its slice). */
static void wake_producer(struct gvs_shm_ring *r)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->ctl->producer_waiting,
                             memory_order_acquire) == 0)
        return;
    uint32_t want = atomic_load_explicit(&r->ctl->producer_want,
                                         memory_order_relaxed);
    if ((int32_t)(r->pos - want) >= 0)
        gvs_shm_futex_wake(&r->ctl->tail);
}

int gvs_shm_ring_read(struct gvs_shm_ring *r, void *p, size_t len,
                      size_t *got)
{
    uint32_t n;
    *got = 0;
    int rc = gvs_shm_ring_avail(r, &n);
    if (rc < 0 || n == 0)
        return rc;
    if (len > n)
        len = n;
    uint32_t off = r->pos & (r->size - 1);
    size_t first = r->size - off < len ? r->size - off : len;
    memcpy(p, r->data + off, first);
    memcpy((uint8_t *)p + first, r->data, len - first);
    r->pos += (uint32_t)len;
    atomic_store_explicit(&r->consumed, r->pos, memory_order_relaxed);
    /* Release: our reads of the room are done before it is reused. */
    atomic_store_explicit(&r->ctl->tail, r->pos, memory_order_release);
    wake_producer(r);
    *got = len;
    return 0;
}

int gvs_shm_ring_put(struct gvs_shm_ring *r, const void *p, size_t len,
                     size_t *put)
{
    uint32_t n;
    *put = 0;
    int rc = room(r, len, &n);
    if (rc < 0 || n == 0)
        return rc;
    if (len > n)
        len = n;
    uint32_t off = r->pos & (r->size - 1);
    size_t first = r->size - off < len ? r->size - off : len;
    memcpy(r->data + off, p, first);
    memcpy(r->data, (const uint8_t *)p + first, len - first);
    r->pos += (uint32_t)len;
    *put = len;
    return 0;
}

void gvs_shm_ring_publish(struct gvs_shm_ring *r)
{
    atomic_store_explicit(&r->ctl->head, r->pos, memory_order_release);
    wake_peer(&r->ctl->head, &r->ctl->consumer_waiting);
}

/* Sleeps on word while it holds blocked, said through flag: a count of
 * sleepers, as threads of one side may sleep on a ring together (a
 * reader short of a frame's end, and one waiting for the next frame). */
static int sleep_on(_Atomic uint32_t *word, _Atomic uint32_t *flag,
                    uint32_t blocked, long long timeout_ns)
{
    atomic_fetch_add_explicit(flag, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    int rc = gvs_shm_futex_wait(word, blocked, timeout_ns);
    atomic_fetch_sub_explicit(flag, 1, memory_order_relaxed);
    return rc;
}

int gvs_shm_ring_sleep(struct gvs_shm_ring *r, long long timeout_ns)
{
    /* The value the peer's counter has while we must wait: the futex
     * returns at once if it differs. */
    if (r->producer) {
        uint32_t n;
        if (room(r, r->want, &n) < 0 || n >= r->want)
            return 0;
        /* Before the count: the consumer reads it once it sees one. */
        atomic_store_explicit(&r->ctl->producer_want,
                              r->pos - r->size + r->want,
                              memory_order_relaxed);
        return sleep_on(&r->ctl->tail, &r->ctl->producer_waiting,
                        r->limit - r->size, timeout_ns);
    }
    return sleep_on(&r->ctl->head, &r->ctl->consumer_waiting, r->pos,
                    timeout_ns);
}

int gvs_shm_ring_unread(struct gvs_shm_ring *r)
{
    return atomic_load_explicit(&r->ctl->head, memory_order_acquire) !=
           atomic_load_explicit(&r->consumed, memory_order_relaxed);
}

int gvs_shm_ring_sleep_unread(struct gvs_shm_ring *r, long long timeout_ns)
{
    return sleep_on(&r->ctl->head, &r->ctl->consumer_waiting,
                    atomic_load_explicit(&r->consumed, memory_order_relaxed),
                    timeout_ns);
}

void gvs_shm_wake_all(struct gvs_shm_ctl *ctl)
{
    for (int i = 0; i < 2; i++) {
        gvs_shm_futex_wake(&ctl->ring[i].head);
        gvs_shm_futex_wake(&ctl->ring[i].tail);
    }
}
