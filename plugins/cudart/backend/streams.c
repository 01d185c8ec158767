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

void be_streams_close(struct be_session *s)
{
    for (uint32_t i = 0; i < s->cap_lanes; i++) {
        struct lane_streams *ls =
            s->lanes[i] != NULL ? s->lanes[i]->ptsz_stream : NULL;
        if (ls == NULL)
            continue;
        for (int d = 0; d < ls->ndevices; d++)
            if (ls->s[d] != NULL)
                (void)cudaStreamDestroy(ls->s[d]);
        gvs_free(ls);
        s->lanes[i]->ptsz_stream = NULL;
    }
}

/* Decodes a request that is one u64 stream, enters the lane and resolves
 * the stream.  Returns c->rc (negative: malformed); *e is the result so
 * far. */
static int stream_request(struct gvs_call *call, struct apigen_call *c,
                          cudaStream_t *s, cudaError_t *e)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    if (apigen_end(c) < 0)
        return c->rc;
    *e = cudart_be_enter(call);
    if (*e == cudaSuccess)
        *e = be_stream(call, wire, s);
    return 0;
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

int cudart_be_stream_query(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e;
    if (stream_request(call, &c, &s, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaStreamQuery(s);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_stream_synchronize(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e;
    if (stream_request(call, &c, &s, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_stream_get_flags(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e;
    unsigned int flags = 0;
    if (stream_request(call, &c, &s, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaStreamGetFlags(s, &flags);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u32(&c, flags);
    return c.rc;
}

int cudart_be_stream_get_priority(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e;
    int priority = 0;
    if (stream_request(call, &c, &s, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaStreamGetPriority(s, &priority);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, priority);
    return c.rc;
}

int cudart_be_stream_get_device(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e;
    int device = 0;
    if (stream_request(call, &c, &s, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaStreamGetDevice(s, &device);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, device);
    return c.rc;
}

int cudart_be_stream_get_id(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaError_t e;
    unsigned long long id = 0;
    if (stream_request(call, &c, &s, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaStreamGetId(s, &id);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}

/* Request: u64 stream, u64 event, u32 flags.  Reply: i32. */
int cudart_be_stream_wait_event(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, event;
    uint32_t flags;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &event);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s;
    cudaEvent_t ev;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    if (e == cudaSuccess)
        e = be_event(event, &ev);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(s, ev, flags);
    apigen_put_i32(&c, e);
    return c.rc;
}
