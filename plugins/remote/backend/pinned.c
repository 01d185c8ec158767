/*
 * Pinned staging of a lane's device-to-host bulk pieces (remote_be.h,
 * stage_d2h), for every API plugin.  Into gvsd's pageable reply buffers
 * CUDA would stage the bytes through pinned buffers of its own, copying
 * on the CPU, and the reply would be sent only after that; through a
 * pinned buffer of the lane's, a piece is one DMA and is sent from there
 * as the reply's tail.
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

void *remote_be_stage_d2h(struct gvs_call *call, size_t len,
                          const struct gvs_remote_pinner *pn)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (l == NULL || len < STAGE_MIN || len > GVS_BULK_CHUNK)
        return NULL;
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

static void release(struct gvs_remote_lane *l, void *arg)
{
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
