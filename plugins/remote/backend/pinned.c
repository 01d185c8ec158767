/*
 * Pinned staging of a lane's device-to-host bulk pieces (remote_be.h,
 * stage_d2h), for every API plugin.  Into gvsd's pageable reply buffers
 * CUDA would stage the bytes through pinned buffers of its own, copying
 * on the CPU, and the reply would be sent only after that; through a
 * pinned buffer of the lane's, a piece is one DMA and is sent from there
 * as the reply's tail.
 *
 * The buffer's two halves take a lane's pieces in turn.  While one
 * half's reply is sent, the piece that follows it in device memory is
 * DMAed into the other when the lane's next request is already here and
 * of the same op (stage_d2h_next): a copy's next piece, which the
 * frontend asks for before this one's reply is in.  Over a socket that
 * moves 1 MiB in a few hundred microseconds, the DMA of the next piece
 * then no longer waits for the send (tls: the copy of 1 MiB from the
 * GPU took 52 us of each piece's 800).  A piece read ahead that the
 * next request does not ask for is dropped; it only read device memory.
 *
 * Host-to-device pieces are not staged: they arrive in the reader's
 * frame buffers while the lane's thread copies the one before with
 * CUDA's own staging, which outruns any socket.  Pinning takes
 * milliseconds and holds the driver meanwhile, so a buffer is made only
 * for a lane's first large copy and kept; pieces below STAGE_MIN never
 * use one.  A lane's requests never overlap, so a lane's buffer needs no
 * lock.
 */
#include "state.h"

#include <stdatomic.h>

#include "gvs/proto.h"

#define STAGE_MIN ((size_t)1 << 20)
/* Lanes of a session that may hold a buffer (GVS_BULK_CHUNK bytes each);
 * the others' copies go through CUDA's own staging. */
#define STAGED_LANES_MAX 8u

static _Atomic unsigned staged_lanes;

/* The session's host (a worker serves one session). */
static const struct gvs_host_api *host;

void remote_be_pinned_open(const struct gvs_host_api *h)
{
    host = h;
}

#define HALF (GVS_BULK_CHUNK / 2)

static uint8_t *half(const struct gvs_remote_lane *l, int h)
{
    return (uint8_t *)l->d2h_stage + (size_t)h * HALF;
}

/* The lane's buffer, made on its first large piece; NULL without. */
static void *buffer(struct gvs_remote_lane *l,
                    const struct gvs_remote_pinner *pn)
{
    if (l->d2h_stage != NULL || l->d2h_unpinned)
        return l->d2h_stage;
    /* Tried once: a lane that cannot have one copies without. */
    l->d2h_unpinned = 1;
    if (atomic_fetch_add(&staged_lanes, 1) >= STAGED_LANES_MAX) {
        atomic_fetch_sub(&staged_lanes, 1);
        return NULL;
    }
    void *p = NULL;
    if (pn->host_alloc(&p, GVS_BULK_CHUNK) != pn->success || p == NULL) {
        atomic_fetch_sub(&staged_lanes, 1);
        return NULL;
    }
    l->d2h_unpinned = 0;
    l->d2h_stage = p;
    l->d2h_pinner = pn;
    return p;
}

/* Whether the lane's piece read ahead is done with (waited for when
 * wait is set), *result its copy's result. */
static int ahead_reaped(struct gvs_remote_ahead *a, int wait,
                        int32_t *result)
{
    if (!a->pending)
        return 1;
    if (!a->pinner->ahead_done(a->event, wait, result))
        return 0;
    a->pending = 0;
    return 1;
}

static int same_piece(const struct gvs_remote_piece *want,
                      const struct gvs_remote_piece *have)
{
    return want != NULL && want->src == have->src &&
           want->stream == have->stream && want->len <= have->len;
}

void *remote_be_stage_d2h(struct gvs_call *call, size_t len,
                          const struct gvs_remote_piece *p,
                          const struct gvs_remote_pinner *pn, int *read,
                          int32_t *result)
{
    *read = 0;
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (l == NULL || len < STAGE_MIN || len > GVS_BULK_CHUNK ||
        buffer(l, pn) == NULL)
        return NULL;
    struct gvs_remote_ahead *a = &l->d2h_ahead;
    int32_t r = pn->success;
    if (a->pending && same_piece(p, &a->piece) && ahead_reaped(a, 1, &r)) {
        *read = 1;
        *result = r;
        return half(l, a->half);
    }
    /* Not the piece read ahead: its half is free once its copy is done,
     * which it is by now unless its stream was busy; the other half is
     * free anyway (its reply has gone). */
    if (ahead_reaped(a, len > HALF, &r))
        return half(l, 0);
    return half(l, !a->half);
}

void remote_be_stage_d2h_next(struct gvs_call *call,
                              const struct gvs_remote_piece *p,
                              const void *buf,
                              const struct gvs_remote_pinner *pn)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (pn->ahead_copy == NULL || l == NULL || l->d2h_stage == NULL ||
        p->len > HALF || p->src + 2 * p->len < p->src ||
        l->d2h_ahead.pending || host == NULL || host->next_queued == NULL ||
        !host->next_queued(call))
        return;
    struct gvs_remote_ahead *a = &l->d2h_ahead;
    /* The event belongs to the API that made it. */
    if (a->event != NULL && a->pinner != pn) {
        a->pinner->ahead_free(a->event);
        a->event = NULL;
    }
    a->pinner = pn;
    a->half = (const uint8_t *)buf == half(l, 0);
    a->piece = (struct gvs_remote_piece){p->src + p->len, p->len, p->stream};
    a->pending = pn->ahead_copy(half(l, a->half), &a->piece, &a->event) ==
                 pn->success;
}

static void release(struct gvs_remote_lane *l, void *arg)
{
    /* Whatever context ends, no copy runs on into a buffer that may be
     * freed, and the event, made again when next needed, cannot outlive
     * its own. */
    struct gvs_remote_ahead *a = &l->d2h_ahead;
    if (a->pinner != NULL) {
        int32_t r;
        (void)ahead_reaped(a, 1, &r);
        if (a->event != NULL)
            a->pinner->ahead_free(a->event);
        *a = (struct gvs_remote_ahead){{0, 0, NULL}, NULL, NULL, 0, 0};
    }
    if (l->d2h_stage == NULL || l->d2h_pinner != arg)
        return;
    l->d2h_pinner->host_free(l->d2h_stage);
    l->d2h_stage = NULL;
    l->d2h_pinner = NULL;
    atomic_fetch_sub(&staged_lanes, 1);
}

void remote_be_stage_release(const struct gvs_remote_pinner *pn)
{
    remote_be_lanes_each(release, (void *)pn);
}

void remote_be_context_ending(struct gvs_call *call,
                              const struct gvs_remote_pinner *pn)
{
    remote_be_shared_flush(call, pn);
    (void)pn->sync(call);
    remote_be_stage_release(pn);
    remote_be_posted_release(pn);
}
