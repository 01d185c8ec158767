/*
 * Pinned staging of a lane's bulk copies (MEMCPY_H2D, MEMCPY_D2H).  A
 * chunk's bytes arrive in, or leave from, gvsd's frame buffers, which are
 * pageable: given those, CUDA stages the bytes through pinned buffers of
 * its own, copying on the CPU and waiting for each piece's DMA.  Through
 * the lane's own pinned buffers instead, a D2H chunk is DMAed once and
 * sent from there as the reply's tail, and an H2D chunk's DMA runs while
 * the next chunk is read from the socket and copied into the other
 * buffer.
 *
 * The buffers are portable (any device may DMA from them).  Pinning
 * them takes milliseconds, so a lane's first large copy starts their
 * allocation on a thread of its own and goes on without them, as do the
 * lane's copies until they are there: no copy waits for staging.  Copies
 * below BE_STAGE_MIN never use them (CUDA's own staging does as well
 * there, and the reply is a small copy anyway).  The events telling when an H2D DMA
 * from a buffer is done belong to the device the lane was on when they
 * were made, and are made again when it moves (cudaEventRecord needs the
 * stream's device).  A lane's requests never overlap, so nothing here is
 * locked (be.h).
 */
#include "be.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "gvs/mem.h"
#include "gvs/proto.h"

#define STAGE_BUFS 2u
#define BE_STAGE_MIN ((size_t)1 << 20)

enum { STAGE_PENDING, STAGE_READY, STAGE_FAILED };

struct be_stage {
    pthread_t maker;
    _Atomic int state;
    int device; /* the lane's when the buffers were asked for */
    void *buf[STAGE_BUFS]; /* GVS_BULK_CHUNK bytes each */
    cudaEvent_t done[STAGE_BUFS]; /* NULL until the first H2D */
    int busy[STAGE_BUFS]; /* a DMA from buf[i] may still run */
    int events_device;    /* the events' */
    unsigned next;        /* the buffer the next H2D chunk goes through */
};

static void events_destroy(struct be_stage *st)
{
    for (unsigned i = 0; i < STAGE_BUFS; i++) {
        if (st->done[i] != NULL)
            (void)cudaEventDestroy(st->done[i]);
        st->done[i] = NULL;
    }
}

/* Waits for the maker, then frees what it made. */
static void stage_release(struct be_session *s, struct be_stage *st)
{
    pthread_join(st->maker, NULL);
    events_destroy(st);
    for (unsigned i = 0; i < STAGE_BUFS; i++)
        if (st->buf[i] != NULL)
            (void)cudaFreeHost(st->buf[i]);
    gvs_free(st);
    atomic_fetch_sub(&s->staged_lanes, 1);
}

/* On the lane's device, so that no other device gets a context. */
static void *stage_make(void *arg)
{
    struct be_stage *st = arg;
    int state = cudaSetDevice(st->device) == cudaSuccess ? STAGE_READY
                                                         : STAGE_FAILED;
    for (unsigned i = 0; i < STAGE_BUFS && state == STAGE_READY; i++)
        if (cudaHostAlloc(&st->buf[i], GVS_BULK_CHUNK,
                          cudaHostAllocPortable) != cudaSuccess) {
            st->buf[i] = NULL;
            state = STAGE_FAILED;
        }
    /* Leaves nothing behind for a later cudaGetLastError. */
    (void)cudaGetLastError();
    atomic_store_explicit(&st->state, state, memory_order_release);
    return NULL;
}

/* The lane's staging once its buffers are there; else NULL, and the
 * first call asks for them (at most BE_STAGED_LANES_MAX lanes do). */
static struct be_stage *stage_of(struct be_session *s, struct be_lane *l)
{
    struct be_stage *st = l->pinned;
    if (st != NULL)
        return atomic_load_explicit(&st->state, memory_order_acquire) ==
                       STAGE_READY
                   ? st
                   : NULL;
    if (l->unpinned)
        return NULL;
    l->unpinned = 1;
    if (atomic_fetch_add(&s->staged_lanes, 1) >= BE_STAGED_LANES_MAX) {
        atomic_fetch_sub(&s->staged_lanes, 1);
        return NULL;
    }
    st = gvs_calloc(1, sizeof(*st));
    if (st != NULL) {
        st->device = l->device;
        if (pthread_create(&st->maker, NULL, stage_make, st) == 0) {
            l->unpinned = 0;
            l->pinned = st;
            return NULL;
        }
        gvs_free(st);
    }
    atomic_fetch_sub(&s->staged_lanes, 1);
    return NULL;
}

/* Waits until no DMA reads buffer i; that DMA's failure. */
static cudaError_t settle(struct be_stage *st, unsigned i)
{
    if (!st->busy[i])
        return cudaSuccess;
    st->busy[i] = 0;
    return cudaEventSynchronize(st->done[i]);
}

cudaError_t be_stage_drain(struct be_lane *l)
{
    cudaError_t first = cudaSuccess;
    if (l->pinned == NULL ||
        atomic_load_explicit(&l->pinned->state, memory_order_acquire) !=
            STAGE_READY)
        return first;
    for (unsigned i = 0; i < STAGE_BUFS; i++) {
        cudaError_t e = settle(l->pinned, i);
        if (first == cudaSuccess)
            first = e;
    }
    return first;
}

/* The events, made on the lane's device if they are not already. */
static cudaError_t events_on(struct be_lane *l)
{
    struct be_stage *st = l->pinned;
    if (st->done[0] != NULL && st->events_device == l->device)
        return cudaSuccess;
    cudaError_t e = be_stage_drain(l);
    events_destroy(st);
    for (unsigned i = 0; i < STAGE_BUFS && e == cudaSuccess; i++)
        e = cudaEventCreateWithFlags(&st->done[i], cudaEventDisableTiming);
    if (e != cudaSuccess)
        events_destroy(st);
    st->events_device = l->device;
    return e;
}

cudaError_t be_stage_h2d(struct gvs_call *call, struct be_lane *l,
                         uint64_t dst, const void *data, size_t len)
{
    struct be_stage *st =
        len >= BE_STAGE_MIN ? stage_of(call->state, l) : NULL;
    if (st == NULL)
        return cudaMemcpy((void *)(uintptr_t)dst, data, len,
                          cudaMemcpyHostToDevice);
    unsigned i = st->next;
    cudaError_t e = events_on(l);
    if (e == cudaSuccess)
        e = settle(st, i);
    if (e != cudaSuccess)
        return e;
    memcpy(st->buf[i], data, len);
    e = cudaMemcpyAsync((void *)(uintptr_t)dst, st->buf[i], len,
                        cudaMemcpyHostToDevice, cudaStreamLegacy);
    if (e != cudaSuccess)
        return e;
    e = cudaEventRecord(st->done[i], cudaStreamLegacy);
    if (e != cudaSuccess) {
        /* Nothing would tell when the buffer is free again. */
        (void)cudaStreamSynchronize(cudaStreamLegacy);
        return e;
    }
    st->busy[i] = 1;
    st->next = (i + 1) % STAGE_BUFS;
    return cudaSuccess;
}

void *be_stage_d2h(struct gvs_call *call, struct be_lane *l, size_t len,
                   cudaError_t *e)
{
    struct be_stage *st =
        len >= BE_STAGE_MIN ? stage_of(call->state, l) : NULL;
    *e = be_stage_drain(l);
    return st != NULL ? st->buf[0] : NULL;
}

void be_stage_free(struct be_session *s, struct be_lane *l)
{
    struct be_stage *st = l->pinned;
    if (st == NULL)
        return;
    (void)be_stage_drain(l);
    stage_release(s, st);
    l->pinned = NULL;
}
