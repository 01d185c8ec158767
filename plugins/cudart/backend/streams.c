/*
 * Streams: created streams live in the session's handle table
 * (objects.h); the default streams are resolved per lane (docs/cudart.md,
 * "Streams and events").  cudaStreamPerThread is the lane's per-thread
 * default stream in its device's primary context, the layer's
 * (remote_be.h, ptds_stream): the driver plugin's CU_STREAM_PER_THREAD
 * there, as natively.
 */
#include "be.h"
#include "cudart_ops.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

static int32_t ptds_create(void **s)
{
    cudaStream_t st = NULL;
    cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamDefault);
    *s = st;
    return e;
}

/* Caller has entered the lane (cudart_be_enter): its device is current. */
static cudaError_t lane_stream(struct gvs_call *call, cudaStream_t *out)
{
    struct be_lane *l = be_lane(call);
    void *s = NULL;
    if (l == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t e = (cudaError_t)be_remote->ptds_stream(
        call, NULL, l->device, ptds_create, cudaErrorMemoryAllocation, &s);
    *out = s;
    return e;
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
    if (flags & cudaStreamNonBlocking)
        be_remote->stream_unordered();
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
    be_remote->shared_flush(call, &be_pinner);
    cudaStream_t s = t != NULL && e == cudaSuccess
                         ? gvs_handles_remove(t, BE_H_STREAM, wire)
                         : NULL;
    if (e == cudaSuccess)
        e = s != NULL ? cudaStreamDestroy(s) : cudaErrorInvalidResourceHandle;
    apigen_put_i32(&c, e);
    return c.rc;
}
