/*
 * Stream-ordered copies and memsets, memory information, prefetches
 * (docs/cudart.md, "Async copies").  Every device range is checked with
 * be_check_device_range, so that no client can make the worker copy to
 * or from its own host memory.
 */
#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "objects.h"

/* A host-to-device request's u64 stream, u64 dst, blob data, enqueued:
 * c->rc when malformed (*e untouched), else 0 and CUDA's result in *e,
 * unless skip (a failure latched before: the bytes are dropped). */
static int h2d_enqueue(struct gvs_call *call, struct apigen_call *c,
                       int skip, cudaError_t *e)
{
    uint64_t stream, dst;
    const uint8_t *data;
    size_t len;
    apigen_get_u64(c, &stream);
    apigen_get_u64(c, &dst);
    apigen_get_blob(c, &data, &len);
    if (apigen_end(c) < 0)
        return c->rc;
    if (skip)
        return 0;
    cudaStream_t s;
    *e = be_enter_stream_range(call, stream, &s, dst, len);
    if (*e == cudaSuccess && len > 0)
        *e = be_memcpy_async((void *)(uintptr_t)dst, data, len,
                             cudaMemcpyHostToDevice, s);
    return 0;
}

/* Request: u64 stream, u64 dst, blob data.  Reply (last chunk only):
 * i32.  The data is the request's: CUDA copies pageable memory to its
 * staging before cudaMemcpyAsync returns, so it may go with the request.
 * Posted chunks latch the first failure in the lane, as for MEMCPY_H2D. */
int cudart_be_memcpy_async_h2d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct be_lane *l = be_lane(call);
    cudaError_t e = cudaSuccess;
    int rc = h2d_enqueue(call, &c, l == NULL || l->latched != cudaSuccess,
                         &e);
    if (rc < 0)
        return rc;
    if (l == NULL)
        return GVS_E_NOMEM;
    if (l->latched == cudaSuccess)
        l->latched = e;
    if (!call->noreply) {
        apigen_put_i32(&c, l->latched);
        l->latched = cudaSuccess;
    }
    return c.rc;
}

/* As MEMCPY_ASYNC_H2D, one piece alone: a posted one's failure is
 * latched for the lane's next synchronizing call. */
int cudart_be_memcpy_async_h2d_posted(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaError_t e = cudaSuccess;
    int rc = h2d_enqueue(call, &c, 0, &e);
    if (rc < 0)
        return rc;
    if (call->noreply && e != cudaSuccess)
        be_async_error(call, e);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 stream, u64 src, u64 len (<= GVS_BULK_CHUNK).  Reply:
 * i32, and on success u32 len and the bytes (be_reply_d2h).  The reply
 * carries the bytes, so the copy must be done before it leaves: the
 * stream is waited for (CUDA returns only once a copy to pageable
 * memory is done anyway).  Hence the op is blocking. */
int cudart_be_memcpy_async_d2h(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, src, len;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (len > GVS_BULK_CHUNK)
        return GVS_E_RANGE;
    cudaStream_t s;
    cudaError_t e = be_enter_stream_range(call, stream, &s, src, len);
    if (e == cudaSuccess)
        return be_reply_d2h(call, &c, src, len, &s);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 stream, u64 dst, u64 src, u64 count.  Reply: i32. */
int cudart_be_memcpy_async_d2d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, dst, src, count;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &count);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s;
    cudaError_t e = be_enter_stream_range(call, stream, &s, dst, count);
    if (e == cudaSuccess)
        e = be_check_device_range(src, count);
    /* Through the layer either way: a copy with a reply follows the
     * copies batched before it. */
    if (e == cudaSuccess && count > 0)
        e = be_copy_posted(call, s, (void *)(uintptr_t)dst,
                           (const void *)(uintptr_t)src, (size_t)count,
                           cudaMemcpyDeviceToDevice);
    /* The copies batched before this one come first, their failures
     * too. */
    if (e != cudaSuccess || !call->next_same)
        be_remote->batch_flush(call);
    if (call->noreply && e != cudaSuccess)
        be_async_error(call, e);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 stream, u64 ptr, i32 value, u64 count.  Reply: i32. */
int cudart_be_memset_async(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, ptr, count;
    int32_t value;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &ptr);
    apigen_get_i32(&c, &value);
    apigen_get_u64(&c, &count);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s;
    cudaError_t e = be_enter_stream_range(call, stream, &s, ptr, count);
    if (e == cudaSuccess && count > 0)
        e = cudaMemsetAsync((void *)(uintptr_t)ptr, value, (size_t)count, s);
    if (e != cudaSuccess && call->noreply)
        be_async_error(call, e);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 stream, u64 ptr, u64 count, i32 location type, i32
 * location id, u32 flags.  Reply: i32. */
int cudart_be_mem_prefetch_async(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, ptr, count;
    int32_t type, id;
    uint32_t flags;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &ptr);
    apigen_get_u64(&c, &count);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &id);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s;
    struct cudaMemLocation loc = {(enum cudaMemLocationType)type, id};
    cudaError_t e = be_enter_stream_range(call, stream, &s, ptr, count);
    if (e == cudaSuccess)
        e = cudaMemPrefetchAsync((const void *)(uintptr_t)ptr, (size_t)count,
                                 loc, flags, s);
    apigen_put_i32(&c, e);
    return c.rc;
}
