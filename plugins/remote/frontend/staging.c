/* Pageable copies through a region shared with the backend (shared.c),
 * for every API frontend of the process: one region, shared through the
 * ops of the API that asked first (the backend's table is the
 * session's, and each API's copy op finds it).  The region is cut into
 * slots, taken in turn by chunk after chunk, copy after copy; a chunk's
 * request names its slot, and a slot is reused only once the DMA from
 * or to it is done.  So up to STAGING_SLOTS chunks are in flight: the
 * program's memcpy of one chunk overlaps the DMA of the others, also
 * when each copy is a single chunk.
 *
 * A stream-ordered host-to-device copy that the API proved valid
 * returns once its bytes are in the slots and their requests have left,
 * as CUDA's returns once it staged pageable memory: its chunks are
 * posted (a failure is the lane's next synchronizing call's, as a posted
 * copy's) with GVS_REMOTE_SHARED_SIGNAL, and once the stream has passed
 * a chunk's copy the GPU writes a value of the client's choosing into
 * the slot's word, in a page of the region after the slots.  Whichever
 * copy next needs the slot waits for that value, polling; when it does
 * not come soon (the stream is busy, or stopped for good by a failure)
 * the copy asks the worker to wait for the slot's stream, or for the
 * device when that stream is gone.  Copies one after the other then
 * overlap the program's memcpy with the DMA of those before, and no
 * lane waits for a DMA.
 *
 * Such copies of up to PACK_MAX bytes share a slot: each takes the
 * bytes after the one before, while they come from one thread (one lane,
 * on one device or context: remote_fe_lane_epoch) and name one stream,
 * so that the stream passes them in the order sent and the last one's
 * value says the slot is free.  Each still names the slot's word; the
 * worker holds each write back until the next copy, which drops it
 * when it names the same word (backend shared.c, "held").  A slot then serves many small copies for a wait
 * of its word, and the worker's GPU write, as dear as a small copy, is
 * made once per slot instead of once per copy.
 *
 * A synchronous copy to the device that the API proved valid is
 * posted the same way, behind a mark: a STORE of no bytes on its stream
 * (signal.c), sent first, whose word the GPU writes once the stream has
 * passed the work before the copy (or the worker stores once it waited
 * for it, the device's output written).  The copy returns at that word,
 * its bytes staged: as CUDA's from pageable memory, which waits for the
 * stream's earlier work but not for its own DMA, and reports a failure
 * of that work.
 *
 * Any other copy the API proved valid (from the device either way)
 * names each chunk's word too, which the worker stores once the chunk
 * is done and the device's output written (remote_be.h, STORE): the
 * copy polls the word, and waits for the reply only when the word says
 * SIGNAL_ASK (a failure, or output) or does not come while it polls
 * (signal.c); so does a synchronous one to the device when no spare
 * word is free for its mark.  Where nothing may poll
 * (gvs_spin_busy_ns() 0) each waits for the replies.
 *
 * Pinning the region in the backend takes milliseconds and holds the
 * driver meanwhile: it is asked for ahead of the session's first device
 * op (gvs_remote_staging_kick_locked), and its reply is collected by the
 * first copy that needs the region. */
#include "remote_fe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "parcopy.h"
#include "remote_be.h"

#define EXPORT __attribute__((visibility("default")))

#define STAGING_SLOTS 4u
#define STAGING_SLOT ((size_t)2 << 20)
/* The slots' words, then those of synchronous copies (signal.c), each
 * on a line of its own, in the page after the slots. */
#define SIGNALS (STAGING_SLOTS * STAGING_SLOT)
#define REGION_LEN (SIGNALS + 4096u)
_Static_assert((STAGING_SLOTS + REMOTE_FE_SPARE_WORDS) *
                       REMOTE_FE_SIGNAL_STRIDE <=
                   4096u,
               "the words exceed their page");
/* How long a copy polls a slot's word, spinning (several times a 2 MiB
 * chunk's DMA, 40 us), then sleeping between looks, before it asks the
 * worker to wait for the slot's stream: a stream busy that long is
 * waited for as well by a round trip, and one stopped for good by a
 * failure never writes the word. */
#define SETTLE_SPIN_NS 200000LL
#define SETTLE_POLL_NS 20000000LL
/* Below these a copy gains nothing over sending the bytes.  A
 * device-to-host copy gains from a few KiB: sent as bytes, the worker's
 * CUDA copies them into pageable memory, slower than a DMA into a slot
 * (docs/performance.md, "Staging slots in turn").  A posted copy gains
 * sooner: it needs no reply, and its bytes do not cross the connection;
 * from the device at any size, to it from 4 KiB, packed (the worker's
 * DMA from a slot is cheaper than its CUDA's copy of pageable bytes from
 * the request: measured on the H200, docs/performance.md "Small posted
 * copies packed"). */
#define STAGING_MIN_H2D ((size_t)64 << 10)
#define STAGING_MIN_D2H ((size_t)4 << 10)
#define STAGING_MIN_POSTED_H2D ((size_t)4 << 10)
/* A synchronous one the API proved valid, its word stored. */
#define STAGING_MIN_STORE_H2D ((size_t)32 << 10)
/* The largest posted copy that shares a slot, and where in the slot each
 * one starts (a DMA from a line's start). */
#define PACK_MAX (STAGING_SLOT / 4)
#define PACK_ALIGN ((size_t)256)

/* Held for a whole copy: a thread that finds it taken sends its bytes
 * instead of waiting. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
enum { UNTRIED, PREPARING, READY, UNAVAILABLE };
/* Moves from UNTRIED under the client lock, from PREPARING under lock. */
static _Atomic int state;
static struct remote_fe_shared_pending pending;
static uint8_t *region;
/* Under lock, by slot: the value its word is to take once a posted
 * chunk's copy is done (0: none owed), and that chunk's stream. */
static uint32_t owed[STAGING_SLOTS];
static uint64_t owed_stream[STAGING_SLOTS];
/* Under lock: the slot the next chunk takes.  Were every copy to start
 * at slot 0, a copy of one chunk would wait for the one before it. */
static unsigned next_slot;
/* Under lock: the slot that posted copies are packed into (open), the
 * bytes of it they took, and the lane and stream they share. */
static struct pack {
    int open;
    unsigned slot;
    size_t fill;
    uint64_t epoch, stream;
} pack;

/* The child's session is new: the parent's region means nothing to its
 * backend.  A copy may have been running in another thread of the
 * parent: the lock starts afresh. */
static void fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    if (atomic_load(&state) == READY)
        munmap(region, REGION_LEN);
    else if (atomic_load(&state) == PREPARING)
        munmap(pending.p, pending.len);
    atomic_store(&state, UNTRIED);
    region = NULL;
    memset(owed, 0, sizeof(owed));
    memset(owed_stream, 0, sizeof(owed_stream));
    next_slot = 0;
    memset(&pack, 0, sizeof(pack));
    remote_fe_parallel_memcpy_fork_child();
}

__attribute__((constructor)) static void staging_init(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

struct pipeline {
    const struct gvs_remote_shared *sh;
    struct gvs_client *cl;
    struct gvs_buf *req, *rep;
    uint64_t stream;
    unsigned flags;
    int h2d;
    /* Chunks posted with a signal, whose words the slots' next users
     * wait for (posted); or whose words the worker stores before their
     * replies, waited for here (store). */
    int posted, store;
    uint64_t dev;
    size_t len;
    unsigned first; /* chunk 0's slot */
    /* Chunk i's request at i % STAGING_SLOTS, and its word's value. */
    uint64_t ids[STAGING_SLOTS];
    uint32_t values[STAGING_SLOTS];
    int32_t e; /* the first failure */
    int rc;        /* a transport failure: nothing more is sent */
};

static size_t chunk_len(const struct pipeline *p, size_t i)
{
    size_t off = i * STAGING_SLOT;
    return p->len - off < STAGING_SLOT ? p->len - off : STAGING_SLOT;
}

static unsigned slot_index(const struct pipeline *p, size_t i)
{
    return (unsigned)((p->first + i) % STAGING_SLOTS);
}

static uint8_t *slot_of(const struct pipeline *p, size_t i)
{
    return region + slot_index(p, i) * STAGING_SLOT;
}

static _Atomic uint32_t *word_of(unsigned slot)
{
    return (_Atomic uint32_t *)(region + SIGNALS +
                                slot * REMOTE_FE_SIGNAL_STRIDE);
}

/* Sends the copy of len bytes between p->dev + off and the slot's bytes
 * at at, chunk i of the pipeline's. */
static void send_piece(struct pipeline *p, size_t i, unsigned slot,
                       uint8_t *at, size_t off, size_t len)
{
    uint32_t value = remote_fe_signal_value();
    /* The GPU writes a posted chunk's word, for the slot's next user
     * (SIGNAL); the worker stores a waited one's before its reply
     * (STORE). */
    unsigned flags = p->posted  ? p->flags | GVS_REMOTE_SHARED_SIGNAL
                     : p->store ? p->flags | GVS_REMOTE_SHARED_STORE
                                : p->flags;
    p->rc = remote_fe_shared_copy_request(p->req, p->stream, flags, p->h2d,
                                          p->dev + off, at, len);
    if (p->rc == 0 && (p->posted || p->store))
        p->rc = gvs_buf_put_u64(p->req, (uint64_t)(uintptr_t)word_of(slot));
    if (p->rc == 0 && (p->posted || p->store))
        p->rc = gvs_buf_put_u32(p->req, value);
    if (p->rc < 0)
        return;
    p->values[i % STAGING_SLOTS] = value;
    struct iovec iov = {(void *)gvs_buf_ptr(p->req), gvs_buf_len(p->req)};
    gvs_client_lock(p->cl);
    p->rc = gvs_remote_send_locked(
        p->sh->api, p->cl, p->posted ? p->sh->copy_posted : p->sh->copy,
        APIGEN_DEVICE, p->posted ? GVS_F_NOREPLY : 0, &iov, 1,
        p->posted ? NULL : &p->ids[i % STAGING_SLOTS]);
    gvs_client_unlock(p->cl);
    if (p->rc == 0 && p->posted) {
        owed[slot] = value;
        owed_stream[slot] = p->stream;
    }
}

static void send_chunk(struct pipeline *p, size_t i)
{
    send_piece(p, i, slot_index(p, i), slot_of(p, i), i * STAGING_SLOT,
               chunk_len(p, i));
}

/* The worker waits for the stream (ON_STREAM), else the device, with a
 * copy of no bytes: the API's result. */
static int32_t wait_for(struct pipeline *p, uint64_t stream, unsigned flags,
                        unsigned slot)
{
    return remote_fe_shared_copy(p->sh, stream, flags, 1, 0,
                                 region + slot * STAGING_SLOT, 0);
}

/* Frees chunk i's slot of an earlier copy's posted chunk: once its word
 * takes the value owed, or once the worker has waited for the chunk's
 * stream, else (the stream gone meanwhile) for the device.  Whatever
 * that wait answers, nothing writes the slot any more: a failure stops
 * the context.  Its result is not this copy's: the backend latched a
 * failure of the chunk. */
static void settle(struct pipeline *p, size_t i)
{
    unsigned slot = slot_index(p, i);
    if (owed[slot] == 0)
        return;
    if (remote_fe_signal_wait(word_of(slot), owed[slot], SETTLE_SPIN_NS,
                              SETTLE_POLL_NS) == 0 &&
        wait_for(p, owed_stream[slot],
                 GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT,
                 slot) != p->sh->api->success)
        (void)wait_for(p, owed_stream[slot], GVS_REMOTE_SHARED_WAIT, slot);
    owed[slot] = 0;
}

/* Collects chunk i's reply; 1 when it succeeded. */
static int wait_chunk(struct pipeline *p, size_t i)
{
    int rc = gvs_client_wait(p->cl, p->ids[i % STAGING_SLOTS], p->rep);
    const struct gvs_remote_api *api = p->sh->api;
    int32_t e = api->unknown;
    if (rc < 0) {
        if (p->rc == 0)
            p->rc = rc;
    } else {
        struct apigen_call c = {NULL, p->rep, 0};
        e = gvs_remote_reply_result(api, &c);
        if (apigen_end(&c) < 0)
            e = api->unknown;
    }
    if (e != api->success && p->e == api->success)
        p->e = e;
    return rc == 0 && e == api->success;
}

/* Chunk i of a copy whose words the worker stores: done at its word,
 * unless the word asks (a failure, or output written) or does not come
 * while the copy may poll; then its reply is collected.  1 when it
 * succeeded. */
static int await_chunk(struct pipeline *p, size_t i)
{
    const struct gvs_remote_api *api = p->sh->api;
    int32_t e;
    if (!remote_fe_stored(p->sh, p->cl, p->ids[i % STAGING_SLOTS],
                          p->stream, word_of(slot_index(p, i)),
                          p->values[i % STAGING_SLOTS], &e))
        return wait_chunk(p, i);
    if (e != api->success && p->e == api->success)
        p->e = e;
    return e == api->success && p->e == api->success;
}

/* The lane the copy will be sent on, brought in line first (its device
 * or context), as the send would: 0 when that failed (p->rc). */
static uint64_t lane_now(struct pipeline *p)
{
    const struct gvs_remote_api *api = p->sh->api;
    gvs_client_lock(p->cl);
    p->rc = api->before_send_locked != NULL
                ? api->before_send_locked(p->cl, APIGEN_DEVICE)
                : 0;
    gvs_client_unlock(p->cl);
    return p->rc == 0 ? remote_fe_lane_epoch() : 0;
}

/* A posted copy of at most PACK_MAX bytes, after those of the open slot
 * when it shares their lane and stream and they leave it room, else at
 * the start of the next slot, which opens once its last user is done. */
static void pack_copy(struct pipeline *p, const uint8_t *host)
{
    uint64_t epoch = lane_now(p);
    if (p->rc < 0)
        return;
    size_t room = (p->len + PACK_ALIGN - 1) & ~(PACK_ALIGN - 1);
    if (!pack.open || pack.epoch != epoch || pack.stream != p->stream ||
        room > STAGING_SLOT - pack.fill) {
        pack.open = 0;
        p->first = next_slot;
        settle(p, 0);
        if (p->rc < 0)
            return;
        pack = (struct pack){1, next_slot, 0, epoch, p->stream};
        next_slot = (next_slot + 1) % STAGING_SLOTS;
    }
    uint8_t *at = region + pack.slot * STAGING_SLOT + pack.fill;
    remote_fe_parallel_memcpy(at, host, p->len);
    send_piece(p, 0, pack.slot, at, 0, p->len);
    pack.fill += room;
}

/* Every chunk sent is waited for, even after a failure, now or (later)
 * by the slot's next user: each reply must be collected, and a slot must
 * not be reused while a DMA may touch it. */
static void run(struct pipeline *p, uint8_t *host)
{
    /* The slots are taken in turn from the next: the one packed into
     * may come round again. */
    pack.open = 0;
    size_t n = (p->len + STAGING_SLOT - 1) / STAGING_SLOT;
    size_t sent = 0, done = 0;
    int h2d = p->h2d;
    int32_t ok = p->sh->api->success;
    while (done < n) {
        while (sent < n && sent - done < STAGING_SLOTS && p->rc == 0 &&
               p->e == ok) {
            settle(p, sent);
            if (p->rc < 0)
                break;
            if (h2d)
                remote_fe_parallel_memcpy(slot_of(p, sent),
                                          host + sent * STAGING_SLOT,
                                          chunk_len(p, sent));
            send_chunk(p, sent);
            if (p->rc == 0)
                sent++;
        }
        if (done == sent)
            break;
        /* A posted chunk is done once sent: its slot's next user waits
         * for its word. */
        if (!p->posted &&
            (p->store ? await_chunk(p, done) : wait_chunk(p, done)) &&
            !h2d && p->e == ok)
            remote_fe_parallel_memcpy(host + done * STAGING_SLOT,
                                      slot_of(p, done), chunk_len(p, done));
        done++;
    }
    next_slot = slot_index(p, sent);
}

EXPORT void
gvs_remote_staging_kick_locked(const struct gvs_remote_shared *sh,
                               struct gvs_client *cl)
{
    if (atomic_load(&state) != UNTRIED)
        return;
    int32_t e = sh->notsup;
    if (gvs_client_caps(cl) & (GVS_CONN_CAP_FDS | GVS_CONN_CAP_AREA))
        e = remote_fe_shared_start_locked(sh, cl, REGION_LEN, &pending);
    atomic_store(&state, e == sh->api->success ? PREPARING : UNAVAILABLE);
}

/* Caller holds lock.  Whether the region is there, collecting the
 * reply that says so the first time. */
static int ready(struct gvs_client *cl)
{
    if (atomic_load(&state) == PREPARING) {
        uint64_t dev;
        void *p;
        int ok = remote_fe_shared_finish(cl, &pending, &p, &dev) ==
                 pending.sh->api->success;
        region = ok ? p : NULL;
        atomic_store(&state, ok ? READY : UNAVAILABLE);
    }
    return atomic_load(&state) == READY;
}

_Atomic uint32_t *remote_fe_staging_words(const struct gvs_remote_shared *sh)
{
    if (atomic_load(&state) == PREPARING && pthread_mutex_trylock(&lock) == 0) {
        struct gvs_client *cl;
        if (sh->api->client(&cl) == sh->api->success)
            (void)ready(cl);
        pthread_mutex_unlock(&lock);
    }
    return atomic_load(&state) == READY ? word_of(STAGING_SLOTS) : NULL;
}

int32_t remote_fe_staged_copy(const struct gvs_remote_shared *sh,
                              uint64_t stream, unsigned flags, int sync,
                              int h2d, uint64_t dev, void *host, size_t len)
{
    const struct gvs_remote_api *api = sh->api;
    /* PROVEN is the frontend's alone, never on the wire.  A proven copy
     * that must be done when it returns waits for its chunks' words,
     * which it does polling (where nothing may poll, for their
     * replies); one that need not is posted. */
    int proven = (flags & GVS_REMOTE_SHARED_PROVEN) &&
                 (flags & GVS_REMOTE_SHARED_ON_STREAM);
    int wait = sync || !h2d;
    /* A synchronous one to the device is posted behind its mark. */
    int marked = proven && sync && h2d && sh->copy_posted != 0 &&
                 gvs_spin_busy_ns() > 0;
    int posted = proven && (!wait || marked) && sh->copy_posted != 0;
    int store = proven && wait && !posted && gvs_spin_busy_ns() > 0;
    size_t least = posted  ? STAGING_MIN_POSTED_H2D
                   : store ? (h2d ? STAGING_MIN_STORE_H2D : 1)
                           : (h2d ? STAGING_MIN_H2D : STAGING_MIN_D2H);
    if (len < least || !remote_fe_shared_possible(sh))
        return sh->notsup;
    if (pthread_mutex_trylock(&lock) != 0)
        return sh->notsup;
    unsigned wire = flags & ~(unsigned)GVS_REMOTE_SHARED_PROVEN;
    struct pipeline p = {.sh = sh,
                         .stream = stream,
                         .flags = posted ? GVS_REMOTE_SHARED_ON_STREAM
                                  : store ? GVS_REMOTE_SHARED_ON_STREAM |
                                                GVS_REMOTE_SHARED_WAIT
                                          : wire,
                         .h2d = h2d,
                         .posted = posted,
                         .store = store,
                         .dev = dev,
                         .len = len,
                         .first = next_slot,
                         .e = api->success};
    int32_t e = sh->notsup;
    if (api->client(&p.cl) == api->success && ready(p.cl)) {
        p.req = gvs_buf_new(64);
        p.rep = gvs_buf_new(64);
        if (p.req != NULL && p.rep != NULL) {
            struct remote_fe_signalled mark;
            if (marked && !remote_fe_signalled_begin(sh, stream, 1, dev,
                                                     region, 0, &mark)) {
                /* No word free for the mark: the copy waits for its
                 * own, stored once it is done. */
                marked = p.posted = 0;
                p.store = 1;
                p.flags = GVS_REMOTE_SHARED_ON_STREAM |
                          GVS_REMOTE_SHARED_WAIT;
            }
            if (p.posted && len <= PACK_MAX)
                pack_copy(&p, host);
            else
                run(&p, host);
            if (marked) {
                int32_t m = remote_fe_signalled_end(sh, &mark);
                if (p.e == api->success)
                    p.e = m;
            }
            e = p.rc == GVS_E_NOMEM ? api->nomem
                : p.rc < 0          ? api->transport_error(p.rc)
                                    : p.e;
        } else {
            e = api->nomem;
        }
        gvs_buf_free(p.req);
        gvs_buf_free(p.rep);
    }
    pthread_mutex_unlock(&lock);
    return e;
}
