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
 * The buffers are portable (any device may DMA from them) and allocated
 * at the lane's first bulk copy.  The events telling when an H2D DMA
 * from a buffer is done belong to the device the lane was on when they
 * were made, and are made again when it moves (cudaEventRecord needs the
 * stream's device).  A lane's requests never overlap, so nothing here is
 * locked (be.h).
 */
#include "be.h"

#include <string.h>

#include "gvs/mem.h"
#include "gvs/proto.h"

#define STAGE_BUFS 2u

struct be_stage {
    void *buf[STAGE_BUFS]; /* GVS_BULK_CHUNK bytes each */
    cudaEvent_t done[STAGE_BUFS]; /* NULL until the first H2D */
    int busy[STAGE_BUFS]; /* a DMA from buf[i] may still run */
    int device;           /* the events' */
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

static void stage_release(struct be_session *s, struct be_stage *st)
{
    events_destroy(st);
    for (unsigned i = 0; i < STAGE_BUFS; i++)
        if (st->buf[i] != NULL)
            (void)cudaFreeHost(st->buf[i]);
    gvs_free(st);
    atomic_fetch_sub(&s->staged_lanes, 1);
}

/* The lane's staging, made on first use; NULL past BE_STAGED_LANES_MAX
 * or out of (pinned) memory, and then for good. */
static struct be_stage *stage_of(struct be_session *s, struct be_lane *l)
{
    if (l->pinned != NULL || l->unpinned)
        return l->pinned;
    l->unpinned = 1;
    if (atomic_fetch_add(&s->staged_lanes, 1) >= BE_STAGED_LANES_MAX) {
        atomic_fetch_sub(&s->staged_lanes, 1);
        return NULL;
    }
    struct be_stage *st = gvs_calloc(1, sizeof(*st));
    if (st == NULL) {
        atomic_fetch_sub(&s->staged_lanes, 1);
        return NULL;
    }
    for (unsigned i = 0; i < STAGE_BUFS; i++)
        if (cudaHostAlloc(&st->buf[i], GVS_BULK_CHUNK,
                          cudaHostAllocPortable) != cudaSuccess) {
            /* Leaves nothing behind for a later cudaGetLastError. */
            (void)cudaGetLastError();
            st->buf[i] = NULL;
            stage_release(s, st);
            return NULL;
        }
    l->unpinned = 0;
    l->pinned = st;
    return st;
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
    for (unsigned i = 0; l->pinned != NULL && i < STAGE_BUFS; i++) {
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
    if (st->done[0] != NULL && st->device == l->device)
        return cudaSuccess;
    cudaError_t e = be_stage_drain(l);
    events_destroy(st);
    for (unsigned i = 0; i < STAGE_BUFS && e == cudaSuccess; i++)
        e = cudaEventCreateWithFlags(&st->done[i], cudaEventDisableTiming);
    if (e != cudaSuccess)
        events_destroy(st);
    st->device = l->device;
    return e;
}

cudaError_t be_stage_h2d(struct gvs_call *call, struct be_lane *l,
                         uint64_t dst, const void *data, size_t len)
{
    struct be_stage *st = stage_of(call->state, l);
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

void *be_stage_d2h(struct gvs_call *call, struct be_lane *l, cudaError_t *e)
{
    struct be_stage *st = stage_of(call->state, l);
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
