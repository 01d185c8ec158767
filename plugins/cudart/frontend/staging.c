/* Pageable copies through a region shared with the backend (shared.h).
 * The region is cut into slots; a chunk's request names its slot, and a
 * slot is reused only once the reply of its last chunk has come, which
 * the backend sends once the DMA from or to it is done.  So up to
 * STAGING_SLOTS chunks are in flight: the program's memcpy of one chunk
 * overlaps the DMA of the others.
 *
 * Pinning the region in the backend takes milliseconds and holds the
 * driver meanwhile: it is asked for ahead of the session's first device
 * op (fe_staging_kick_locked), and its reply is collected by the first
 * copy that needs the region. */
#include "shared.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "cudart_ops.h"
#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "parcopy.h"

#define STAGING_SLOTS 4u
#define STAGING_SLOT ((size_t)2 << 20)
/* Below this a copy gains nothing over sending the bytes. */
#define STAGING_MIN ((size_t)64 << 10)

/* Held for a whole copy: a thread that finds it taken sends its bytes
 * instead of waiting. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
enum { UNTRIED, PREPARING, READY, UNAVAILABLE };
/* Moves from UNTRIED under the client lock, from PREPARING under lock. */
static _Atomic int state;
static struct fe_shared_pending pending;
static uint8_t *region;

/* The child's session is new: the parent's region means nothing to its
 * backend.  A copy may have been running in another thread of the
 * parent: the lock starts afresh. */
void fe_staging_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    if (atomic_load(&state) == READY)
        munmap(region, STAGING_SLOTS * STAGING_SLOT);
    else if (atomic_load(&state) == PREPARING)
        munmap(pending.p, pending.len);
    atomic_store(&state, UNTRIED);
    region = NULL;
    fe_parallel_memcpy_fork_child();
}

struct pipeline {
    struct gvs_client *cl;
    struct gvs_buf *req, *rep;
    uint64_t stream;
    unsigned flags;
    enum cudaMemcpyKind kind;
    uint64_t dev;
    size_t len;
    uint64_t ids[STAGING_SLOTS];
    cudaError_t e; /* the first failure */
    int rc;        /* a transport failure: nothing more is sent */
};

static size_t chunk_len(const struct pipeline *p, size_t i)
{
    size_t off = i * STAGING_SLOT;
    return p->len - off < STAGING_SLOT ? p->len - off : STAGING_SLOT;
}

static uint8_t *slot_of(size_t i)
{
    return region + (i % STAGING_SLOTS) * STAGING_SLOT;
}

static void send_chunk(struct pipeline *p, size_t i)
{
    size_t off = i * STAGING_SLOT;
    p->rc = fe_shared_copy_request(p->req, p->stream, p->flags, p->kind,
                                   p->dev + off, slot_of(i), chunk_len(p, i));
    if (p->rc < 0)
        return;
    struct iovec iov = {(void *)gvs_buf_ptr(p->req), gvs_buf_len(p->req)};
    gvs_client_lock(p->cl);
    p->rc = fe_send_locked(p->cl, CUDART_OP_MEMCPY_SHARED, APIGEN_DEVICE, 0,
                           &iov, 1, &p->ids[i % STAGING_SLOTS]);
    gvs_client_unlock(p->cl);
}

/* Collects chunk i's reply; 1 when it succeeded. */
static int wait_chunk(struct pipeline *p, size_t i)
{
    int rc = gvs_client_wait(p->cl, p->ids[i % STAGING_SLOTS], p->rep);
    cudaError_t e = cudaErrorUnknown;
    if (rc < 0) {
        if (p->rc == 0)
            p->rc = rc;
    } else {
        struct apigen_call c = {NULL, p->rep, 0};
        e = fe_reply_result(&c);
        if (apigen_end(&c) < 0)
            e = cudaErrorUnknown;
    }
    if (e != cudaSuccess && p->e == cudaSuccess)
        p->e = e;
    return rc == 0 && e == cudaSuccess;
}

/* Every chunk sent is waited for, even after a failure: each reply must
 * be collected, and a slot must not be reused while a DMA may touch it. */
static void run(struct pipeline *p, uint8_t *host)
{
    size_t n = (p->len + STAGING_SLOT - 1) / STAGING_SLOT;
    size_t sent = 0, done = 0;
    int h2d = p->kind == cudaMemcpyHostToDevice;
    while (done < n) {
        while (sent < n && sent - done < STAGING_SLOTS && p->rc == 0 &&
               p->e == cudaSuccess) {
            if (h2d)
                fe_parallel_memcpy(slot_of(sent), host + sent * STAGING_SLOT,
                                   chunk_len(p, sent));
            send_chunk(p, sent);
            if (p->rc == 0)
                sent++;
        }
        if (done == sent)
            break;
        if (wait_chunk(p, done) && !h2d && p->e == cudaSuccess)
            fe_parallel_memcpy(host + done * STAGING_SLOT, slot_of(done),
                               chunk_len(p, done));
        done++;
    }
}

void fe_staging_kick_locked(struct gvs_client *cl)
{
    if (atomic_load(&state) != UNTRIED)
        return;
    cudaError_t e = cudaErrorNotSupported;
    if (gvs_client_caps(cl) & GVS_CONN_CAP_FDS)
        e = fe_shared_start_locked(cl, STAGING_SLOTS * STAGING_SLOT, &pending);
    atomic_store(&state, e == cudaSuccess ? PREPARING : UNAVAILABLE);
}

/* Caller holds lock.  Whether the region is there, collecting the
 * reply that says so the first time. */
static int ready(struct gvs_client *cl)
{
    if (atomic_load(&state) == PREPARING) {
        uint64_t dev;
        void *p;
        int ok = fe_shared_finish(cl, &pending, &p, &dev) == cudaSuccess;
        region = ok ? p : NULL;
        atomic_store(&state, ok ? READY : UNAVAILABLE);
    }
    return atomic_load(&state) == READY;
}

cudaError_t fe_staged_copy(uint64_t stream, unsigned flags,
                           enum cudaMemcpyKind kind, uint64_t dev,
                           void *host, size_t len)
{
    if (len < STAGING_MIN || !fe_shared_possible())
        return cudaErrorNotSupported;
    if (pthread_mutex_trylock(&lock) != 0)
        return cudaErrorNotSupported;
    struct pipeline p = {.stream = stream,
                         .flags = flags,
                         .kind = kind,
                         .dev = dev,
                         .len = len};
    cudaError_t e = cudaErrorNotSupported;
    if (fe_client(&p.cl) == cudaSuccess && ready(p.cl)) {
        p.req = gvs_buf_new(64);
        p.rep = gvs_buf_new(64);
        if (p.req != NULL && p.rep != NULL) {
            run(&p, host);
            e = p.rc == GVS_E_NOMEM ? cudaErrorMemoryAllocation
                : p.rc < 0          ? fe_transport_error(p.rc)
                                    : p.e;
        } else {
            e = cudaErrorMemoryAllocation;
        }
        gvs_buf_free(p.req);
        gvs_buf_free(p.rep);
    }
    pthread_mutex_unlock(&lock);
    return e;
}
