/* Pageable copies through a region shared with the backend (shared.c),
 * for every API frontend of the process: one region, shared through the
 * ops of the API that asked first (the backend's table is the
 * session's, and each API's copy op finds it).  The region is cut into
 * slots, taken in turn by chunk after chunk, copy after copy; a chunk's
 * request names its slot, and a slot is reused only once the reply of
 * its last chunk has come, which the backend sends once the DMA from or
 * to it is done.  So up to STAGING_SLOTS chunks are in flight: the
 * program's memcpy of one chunk overlaps the DMA of the others, also
 * when each copy is a single chunk.
 *
 * A stream-ordered host-to-device copy that the API proved valid
 * returns once its bytes are in the slots and their requests have left,
 * as CUDA's returns once it staged pageable memory: its chunks go with
 * GVS_F_LATER, and their replies, which only free the slots (a failure
 * is the lane's next synchronizing call's, as a posted copy's), are
 * collected by whichever copy next needs the slot.  Copies one after
 * the other then overlap the program's memcpy with the DMA of those
 * before.
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

#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "parcopy.h"
#include "remote_be.h"

#define EXPORT __attribute__((visibility("default")))

#define STAGING_SLOTS 4u
#define STAGING_SLOT ((size_t)2 << 20)
/* Below these a copy gains nothing over sending the bytes.  A
 * device-to-host copy gains from a few KiB: sent as bytes, the worker's
 * CUDA copies them into pageable memory, slower than a DMA into a slot
 * (docs/performance.md, "Staging slots in turn"). */
#define STAGING_MIN_H2D ((size_t)64 << 10)
#define STAGING_MIN_D2H ((size_t)4 << 10)

/* Held for a whole copy: a thread that finds it taken sends its bytes
 * instead of waiting. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
enum { UNTRIED, PREPARING, READY, UNAVAILABLE };
/* Moves from UNTRIED under the client lock, from PREPARING under lock. */
static _Atomic int state;
static struct remote_fe_shared_pending pending;
static uint8_t *region;
/* Under lock: the request of a GVS_F_LATER chunk whose reply is still
 * owed, by slot; 0 for none. */
static uint64_t owed[STAGING_SLOTS];
/* Under lock: the slot the next chunk takes.  Were every copy to start
 * at slot 0, a copy of one chunk would wait for the one before it. */
static unsigned next_slot;

/* The child's session is new: the parent's region means nothing to its
 * backend.  A copy may have been running in another thread of the
 * parent: the lock starts afresh. */
static void fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    if (atomic_load(&state) == READY)
        munmap(region, STAGING_SLOTS * STAGING_SLOT);
    else if (atomic_load(&state) == PREPARING)
        munmap(pending.p, pending.len);
    atomic_store(&state, UNTRIED);
    region = NULL;
    memset(owed, 0, sizeof(owed));
    next_slot = 0;
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
    int later; /* chunks sent with GVS_F_LATER, not waited for */
    uint64_t dev;
    size_t len;
    unsigned first; /* chunk 0's slot */
    uint64_t ids[STAGING_SLOTS]; /* chunk i's request at i % STAGING_SLOTS */
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

static void send_chunk(struct pipeline *p, size_t i)
{
    size_t off = i * STAGING_SLOT;
    p->rc = remote_fe_shared_copy_request(p->req, p->stream, p->flags,
                                          p->h2d, p->dev + off, slot_of(p, i),
                                          chunk_len(p, i));
    if (p->rc < 0)
        return;
    struct iovec iov = {(void *)gvs_buf_ptr(p->req), gvs_buf_len(p->req)};
    gvs_client_lock(p->cl);
    p->rc = gvs_remote_send_locked(p->sh->api, p->cl, p->sh->copy,
                                   APIGEN_DEVICE, p->later ? GVS_F_LATER : 0,
                                   &iov, 1, &p->ids[i % STAGING_SLOTS]);
    gvs_client_unlock(p->cl);
    if (p->rc == 0 && p->later)
        owed[slot_index(p, i)] = p->ids[i % STAGING_SLOTS];
}

/* Frees chunk i's slot of an earlier copy's chunk whose reply is owed.
 * Its result is not this copy's: the backend latched a failure. */
static void settle(struct pipeline *p, size_t i)
{
    uint64_t id = owed[slot_index(p, i)];
    if (id == 0)
        return;
    owed[slot_index(p, i)] = 0;
    int rc = gvs_client_wait(p->cl, id, p->rep);
    if (rc < 0 && p->rc == 0)
        p->rc = rc;
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

/* Every chunk sent is waited for, even after a failure, now or (later)
 * by the slot's next user: each reply must be collected, and a slot must
 * not be reused while a DMA may touch it. */
static void run(struct pipeline *p, uint8_t *host)
{
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
        /* A chunk sent LATER is done once sent: its slot's next user
         * collects the reply. */
        if (!p->later && wait_chunk(p, done) && !h2d && p->e == ok)
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
        e = remote_fe_shared_start_locked(sh, cl,
                                          STAGING_SLOTS * STAGING_SLOT,
                                          &pending);
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

int32_t remote_fe_staged_copy(const struct gvs_remote_shared *sh,
                              uint64_t stream, unsigned flags, int h2d,
                              uint64_t dev, void *host, size_t len)
{
    const struct gvs_remote_api *api = sh->api;
    if (len < (h2d ? STAGING_MIN_H2D : STAGING_MIN_D2H) ||
        !remote_fe_shared_possible(sh))
        return sh->notsup;
    if (pthread_mutex_trylock(&lock) != 0)
        return sh->notsup;
    /* PROVEN is the frontend's alone, never on the wire. */
    int later = h2d && (flags & GVS_REMOTE_SHARED_PROVEN) &&
                (flags & GVS_REMOTE_SHARED_ON_STREAM);
    struct pipeline p = {.sh = sh,
                         .stream = stream,
                         .flags = flags & ~(unsigned)GVS_REMOTE_SHARED_PROVEN,
                         .h2d = h2d,
                         .later = later,
                         .dev = dev,
                         .len = len,
                         .first = next_slot,
                         .e = api->success};
    int32_t e = sh->notsup;
    if (api->client(&p.cl) == api->success && ready(p.cl)) {
        p.req = gvs_buf_new(64);
        p.rep = gvs_buf_new(64);
        if (p.req != NULL && p.rep != NULL) {
            run(&p, host);
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
