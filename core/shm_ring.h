/*
 * The shared-memory region of an shm:// connection and the byte rings in
 * it.  Internal to gvs_core.
 *
 * gvsd creates one region per connection (a memfd, sealed against
 * resizing so that neither side can make the other's accesses fault) and
 * passes it to that client alone over the setup socket, with a struct
 * gvs_shm_setup as the message's bytes.  Layout:
 *
 *   [0, GVS_SHM_CTL_SIZE)               struct gvs_shm_ctl
 *   [CTL, CTL + ring_size)              client -> server ring data
 *   [CTL + ring_size, CTL + 2 ring_size) server -> client ring data
 *
 * (A later data region for bulk copies goes after the rings, announced
 * by a new setup version.)
 *
 * Trust: the peer may write anything into the region at any moment.  So
 * sizes and offsets never come from it: the ring size arrives once in the
 * setup message and is checked against the memfd's size before mapping;
 * each side keeps its own counter privately and only reports it in the
 * region; the peer's counter is read once per use and rejected
 * (GVS_E_PROTO) when it is further than a ring's size from ours.  (The
 * producer uses the room it saw until it needs more, so a bad tail is
 * found at the next read of it.)  Data
 * copied out may change under us while it is copied; the frame decoder
 * above checks it as it would bytes from a socket.
 *
 * Counters are free-running 32-bit byte counts, masked on each use; a
 * ring is at most 1 GiB, so head - tail never wraps ambiguously.  Each
 * ring has one producer and one consumer thread at a time.
 */
#ifndef GVS_SHM_RING_H
#define GVS_SHM_RING_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define GVS_SHM_MAGIC 0x4d535647u /* "GVSM" */
#define GVS_SHM_VERSION 1u
#define GVS_SHM_CTL_SIZE 4096u
#define GVS_SHM_RING_MIN 4096u
#define GVS_SHM_RING_MAX (1u << 30)
#define GVS_SHM_RING_DEFAULT (8u << 20)

/* The setup message, native byte order (both ends share a host). */
struct gvs_shm_setup {
    uint32_t magic;
    uint32_t version;
    uint32_t ring_size; /* each ring; a power of two in [MIN, MAX] */
    uint32_t reserved;  /* 0 */
};

/* Which ring; also which side's closed flag. */
enum { GVS_SHM_C2S = 0, GVS_SHM_S2C = 1 };

/* Each counter on a cache line of its own, so that producer and consumer
 * do not invalidate each other's line on every update; the waiting flags,
 * written only around a sleep, share a third. */
struct gvs_shm_ring_ctl {
    alignas(64) _Atomic uint32_t head; /* bytes produced */
    alignas(64) _Atomic uint32_t tail; /* bytes consumed */
    alignas(64) _Atomic uint32_t consumer_waiting; /* threads asleep on head */
    _Atomic uint32_t producer_waiting;             /* threads asleep on tail */
    /* The tail at which the sleeping producer has the room it waits
     * for (gvs_shm_ring_want): the consumer wakes it then, not at every
     * read, which would cost a system call per frame of a full ring. */
    _Atomic uint32_t producer_want;
};

struct gvs_shm_ctl {
    struct gvs_shm_ring_ctl ring[2];
    /* closed[side]: that side has ended the connection. */
    alignas(64) _Atomic uint32_t closed[2];
    /* leaving[side]: that side's program is exiting (gvs_conn_leaving). */
    _Atomic uint32_t leaving[2];
};

_Static_assert(sizeof(struct gvs_shm_ctl) <= GVS_SHM_CTL_SIZE,
               "control block exceeds its page");

/* Size of the region for rings of ring_size bytes. */
size_t gvs_shm_region_size(uint32_t ring_size);

/* 1 if ring_size is one a region may have. */
int gvs_shm_ring_size_ok(uint32_t ring_size);

/* One end of one ring, private to its process. */
struct gvs_shm_ring {
    struct gvs_shm_ring_ctl *ctl;
    uint8_t *data;
    uint32_t size;
    uint32_t pos; /* our counter: head as producer, tail as consumer */
    /* Producer: the counter up to which it may write, from the last
     * tail it read (checked then), so that the consumer's line is read
     * only when that room is used up, not on every put. */
    uint32_t limit;
    uint32_t want; /* producer: the room it waits for, at least 1 */
    /* Consumer: pos as of the last read, for threads that wait for data
     * while another reads (gvs_shm_ring_unread).  Ours, not the tail in
     * the region, which the peer could write. */
    _Atomic uint32_t consumed;
    int producer;
};

/* Sets r up as the producer or consumer end of ring `which` of the
 * mapped region at base (counters start at 0). */
void gvs_shm_ring_init(struct gvs_shm_ring *r, uint8_t *base,
                       uint32_t ring_size, int which, int producer);

/* Consumer: copies up to len available bytes out and hands their room
 * back; *got may be 0.  GVS_E_PROTO if the producer's counter is bad. */
int gvs_shm_ring_read(struct gvs_shm_ring *r, void *p, size_t len,
                      size_t *got);

/* Consumer: bytes available (0 or 1 is enough for a caller asking
 * "anything?"), or GVS_E_PROTO. */
int gvs_shm_ring_avail(const struct gvs_shm_ring *r, uint32_t *n);

/* Producer: copies up to len bytes into the free room; *put may be 0.
 * They stay invisible to the consumer until gvs_shm_ring_publish, so a
 * frame's pieces go out together.  GVS_E_PROTO if the consumer's
 * counter is bad. */
int gvs_shm_ring_put(struct gvs_shm_ring *r, const void *p, size_t len,
                     size_t *put);

/* Producer: makes what was put visible and wakes a sleeping consumer. */
void gvs_shm_ring_publish(struct gvs_shm_ring *r);

/* Producer: the room gvs_shm_ring_has_room and gvs_shm_ring_sleep wait
 * for: an eighth of the ring, whatever the len bytes still to put (set
 * it back to 1, with len 0, once the room came).  A producer that finds
 * the ring full thus sleeps until a good part of it is free again, and
 * is woken once for it: waiting for its own frame's few bytes, a
 * producer of small frames would be woken for every frame the consumer
 * takes, while the consumer, the slower side, has the ring's worth
 * queued. */
void gvs_shm_ring_want(struct gvs_shm_ring *r, size_t len);

/* Producer: 1 if the ring has the room asked for (gvs_shm_ring_want). */
int gvs_shm_ring_has_room(struct gvs_shm_ring *r);

/* Sleeps until the peer moves its counter (data for a consumer, the room
 * wanted for a producer), a wake-up, or timeout_ns; returns at once when
 * the ring is not empty (consumer) or has that room (producer), or the
 * counter moved since it was last read.  GVS_E_TIMEOUT when the time ran
 * out, else 0; callers recheck either way. */
int gvs_shm_ring_sleep(struct gvs_shm_ring *r, long long timeout_ns);

/* Consumer, from any thread of ours, also while another reads: 1 when
 * bytes are there that no read has taken yet. */
int gvs_shm_ring_unread(struct gvs_shm_ring *r);

/* Consumer, from a thread that does not read (while another may):
 * sleeps until there are unread bytes, a wake-up, or timeout_ns.
 * GVS_E_TIMEOUT when the time ran out, else 0; callers recheck either
 * way.  Several threads of a side may sleep on a ring at once. */
int gvs_shm_ring_sleep_unread(struct gvs_shm_ring *r, long long timeout_ns);

/* Wakes every thread of either process asleep on any counter of ctl
 * (closing: they then find the closed flag). */
void gvs_shm_wake_all(struct gvs_shm_ctl *ctl);

/* A futex on a word of memory that processes share (not _PRIVATE):
 * sleeps while *word holds val, until a wake-up or timeout_ns (GVS_E_TIMEOUT),
 * else 0; wakes every sleeper on word. */
int gvs_shm_futex_wait(_Atomic uint32_t *word, uint32_t val,
                       long long timeout_ns);
void gvs_shm_futex_wake(_Atomic uint32_t *word);

#endif
