/*
 * Streams: created streams live in the session's handle table
 * (objects.h); the default streams are resolved per lane (docs/cudart.md,
 * "Streams and events").
 *
 * The handlers run on gvsd's executor and lane threads, where
 * cudaStreamPerThread would be that thread's own stream, shared by the
 * client threads it serves.  So each lane gets a stream of its own per
 * device, created with the default flags: like a per-thread default
 * stream, it synchronizes with the legacy stream and with no other.
 */
#include "be.h"
#include "cudart_ops.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

/* A lane's per-thread default streams (be_lane.ptsz_stream), one per
 * device, created on first use. */
struct lane_streams {
    int ndevices;
    cudaStream_t s[];
};

/* Caller has entered the lane (cudart_be_enter): its device is current. */
static cudaError_t lane_stream(struct gvs_call *call, cudaStream_t *out)
{
    struct be_lane *l = be_lane(call);
    if (l == NULL)
        return cudaErrorMemoryAllocation;
    struct lane_streams *ls = l->ptsz_stream;
    if (ls == NULL) {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess)
            return e;
        ls = gvs_calloc(1, sizeof(*ls) + (size_t)n * sizeof(ls->s[0]));
        if (ls == NULL)
            return cudaErrorMemoryAllocation;
        ls->ndevices = n;
        l->ptsz_stream = ls;
    }
    if (l->device < 0 || l->device >= ls->ndevices)
        return cudaErrorInvalidDevice;
    if (ls->s[l->device] == NULL) {
        cudaError_t e = cudaStreamCreateWithFlags(&ls->s[l->device],
                                                  cudaStreamDefault);
        if (e != cudaSuccess)
            return e;
    }
    *out = ls->s[l->device];
    return cudaSuccess;
}

cudaError_t be_stream(struct gvs_call *call, uint64_t wire, cudaStream_t *out)
{
    *out = NULL;
    if (wire == 0 || wire == (uint64_t)(uintptr_t)cudaStreamLegacy)
        return cudaSuccess;
    if (wire == (uint64_t)(uintptr_t)cudaStreamPerThread)
        return lane_stream(call, out);
    struct gvs_handles *t = be_handles();
    void *s = t != NULL ? gvs_handles_get(t, BE_H_STREAM, wire) : NULL;
    if (s == NULL)
        return cudaErrorInvalidResourceHandle;
    *out = s;
    return cudaSuccess;
}

cudaError_t be_enter_stream_range(struct gvs_call *call, uint64_t wire,
                                  cudaStream_t *out, uint64_t p,
                                  uint64_t len)
{
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, wire, out);
    if (e == cudaSuccess)
        e = be_check_device_range(p, len);
    return e;
}

static void lane_streams_close(struct gvs_remote_lane *rl, void *arg)
{
    struct be_lane *l = rl->slot[CUDART_PLUGIN_ID];
    struct lane_streams *ls = l != NULL ? l->ptsz_stream : NULL;
    (void)arg;
    if (ls == NULL)
        return;
    for (int d = 0; d < ls->ndevices; d++)
        if (ls->s[d] != NULL)
            (void)cudaStreamDestroy(ls->s[d]);
    gvs_free(ls);
    l->ptsz_stream = NULL;
}

void be_streams_close(struct be_session *s)
{
    (void)s;
    be_remote->lanes_each(lane_streams_close, NULL);
}

/* Request: u32 flags, i32 priority.  Reply: i32, u64 stream id. */
int cudart_be_stream_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    int32_t priority;
    apigen_get_u32(&c, &flags);
    apigen_get_i32(&c, &priority);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct gvs_handles *t = be_handles();
    cudaStream_t s = NULL;
    uint64_t id = 0;
    cudaError_t e = t != NULL ? cudart_be_enter(call)
                              : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = cudaStreamCreateWithPriority(&s, flags, priority);
    if (e == cudaSuccess && gvs_handles_add(t, BE_H_STREAM, s, &id) < 0) {
        (void)cudaStreamDestroy(s);
        e = cudaErrorMemoryAllocation;
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}

/* The default streams cannot be destroyed: natively that is
 * cudaErrorInvalidResourceHandle too. */
int cudart_be_stream_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t wire;
    apigen_get_u64(&c, &wire);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct gvs_handles *t = be_handles();
    cudaError_t e = cudart_be_enter(call);
    cudaStream_t s = t != NULL && e == cudaSuccess
                         ? gvs_handles_remove(t, BE_H_STREAM, wire)
                         : NULL;
    if (e == cudaSuccess)
        e = s != NULL ? cudaStreamDestroy(s) : cudaErrorInvalidResourceHandle;
    apigen_put_i32(&c, e);
    return c.rc;
}
