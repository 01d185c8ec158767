/*
 * Pinned staging of a lane's device-to-host bulk copies (MEMCPY_D2H).
 * Into gvsd's pageable reply buffers CUDA would stage the bytes through
 * pinned buffers of its own, copying on the CPU, and the reply would be
 * sent only after that; through a pinned buffer of the lane's, a chunk is
 * one DMA and is sent from there as the reply's tail.
 *
 * Host-to-device chunks are not staged: they arrive in the reader's
 * frame buffers while the lane's thread copies the one before with
 * CUDA's own staging, which outruns any socket.  Pinning takes
 * milliseconds and holds the driver meanwhile, so a buffer is made only
 * for a lane's first large copy and kept; copies below BE_STAGE_MIN
 * never use one.  A lane's requests never overlap, so nothing here is
 * locked (be.h).
 */
#include "be.h"

#include <stdatomic.h>

#include "gvs/mem.h"
#include "gvs/proto.h"

#define BE_STAGE_MIN ((size_t)1 << 20)

struct be_stage {
    void *buf; /* GVS_BULK_CHUNK bytes, portable: any device DMAs to it */
};

/* The lane's buffer, made on first use; NULL past BE_STAGED_LANES_MAX
 * or out of pinned memory, and then for good. */
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
    if (st != NULL &&
        cudaHostAlloc(&st->buf, GVS_BULK_CHUNK, cudaHostAllocPortable) ==
            cudaSuccess) {
        l->unpinned = 0;
        l->pinned = st;
        return st;
    }
    /* Leaves nothing behind for a later cudaGetLastError. */
    (void)cudaGetLastError();
    gvs_free(st);
    atomic_fetch_sub(&s->staged_lanes, 1);
    return NULL;
}

void *be_stage_d2h(struct gvs_call *call, struct be_lane *l, size_t len)
{
    struct be_stage *st =
        len >= BE_STAGE_MIN ? stage_of(call->state, l) : NULL;
    return st != NULL ? st->buf : NULL;
}

void be_stage_free(struct be_session *s, struct be_lane *l)
{
    struct be_stage *st = l->pinned;
    if (st == NULL)
        return;
    (void)cudaFreeHost(st->buf);
    gvs_free(st);
    atomic_fetch_sub(&s->staged_lanes, 1);
    l->pinned = NULL;
}
