/*
 * Memory hints and queries, the profiler and the location-based pool
 * API's handlers (api/80-misc.api).  Every pointer is checked to lie in
 * device or managed memory before CUDA sees it, so a client never names
 * the worker's own memory.
 */
#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

#include <cuda_profiler_api.h>

#include "gvs/mem.h"

/* Bounds of MEM_RANGE_ATTRS: CUDA has fewer attributes, and the largest
 * value (the devices of cudaMemRangeAttributeAccessedBy) is an int per
 * device. */
#define BE_MAX_RANGE_ATTRS 16u
#define BE_RANGE_DATA_MAX ((uint64_t)32 << 10)

int cudart_be_pointer_attrs(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t ptr;
    apigen_get_u64(&c, &ptr);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cudaPointerAttributes a = {0};
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(ptr, 1);
    if (e == cudaSuccess)
        e = cudaPointerGetAttributes(&a, (const void *)(uintptr_t)ptr);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_i32(&c, a.type);
        apigen_put_i32(&c, a.device);
        apigen_put_u64(&c, (uint64_t)(uintptr_t)a.devicePointer);
        apigen_put_u64(&c, (uint64_t)(uintptr_t)a.hostPointer);
    }
    return c.rc;
}

int cudart_be_profiler(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t start;
    apigen_get_i32(&c, &start);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = start ? cudaProfilerStart() : cudaProfilerStop();
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_mem_advise(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t ptr, count;
    int32_t advice, type, id;
    apigen_get_u64(&c, &ptr);
    apigen_get_u64(&c, &count);
    apigen_get_i32(&c, &advice);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(ptr, count);
    if (e == cudaSuccess)
        e = cudaMemAdvise((const void *)(uintptr_t)ptr, (size_t)count,
                          (enum cudaMemoryAdvise)advice,
                          (struct cudaMemLocation){
                              (enum cudaMemLocationType)type, id});
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_stream_attach_mem(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, ptr, length;
    uint32_t flags;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &ptr);
    apigen_get_u64(&c, &length);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s;
    /* Length 0 attaches the whole allocation ptr starts. */
    cudaError_t e =
        be_enter_stream_range(call, stream, &s, ptr, length ? length : 1);
    if (e == cudaSuccess)
        e = cudaStreamAttachMemAsync(s, (void *)(uintptr_t)ptr,
                                     (size_t)length, flags);
    apigen_put_i32(&c, e);
    return c.rc;
}

static cudaError_t discard(cudaStream_t s, uint64_t ptr, uint64_t count,
                           int prefetch, struct cudaMemLocation loc,
                           unsigned long long flags)
{
    void *p = (void *)(uintptr_t)ptr;
    size_t n = (size_t)count, idx = 0;
    if (!prefetch)
        return cudaMemDiscardBatchAsync(&p, &n, 1, flags, s);
    return cudaMemDiscardAndPrefetchBatchAsync(&p, &n, 1, &loc, &idx, 1,
                                               flags, s);
}

int cudart_be_mem_discard(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, ptr, count, flags;
    int32_t prefetch, type, id;
    apigen_get_u64(&c, &stream);
    apigen_get_u64(&c, &ptr);
    apigen_get_u64(&c, &count);
    apigen_get_i32(&c, &prefetch);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &id);
    apigen_get_u64(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s;
    cudaError_t e = be_enter_stream_range(call, stream, &s, ptr, count);
    if (e == cudaSuccess)
        e = discard(s, ptr, count, prefetch != 0,
                    (struct cudaMemLocation){(enum cudaMemLocationType)type,
                                             id},
                    flags);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 pointer, u64 count, u32 n, n x {i32 attribute, u64 size}.
 * Reply: i32, n x blob value (the size asked for). */
int cudart_be_mem_range_attrs(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t ptr, count, total = 0;
    uint32_t n;
    enum cudaMemRangeAttribute attrs[BE_MAX_RANGE_ATTRS];
    size_t sizes[BE_MAX_RANGE_ATTRS];
    void *data[BE_MAX_RANGE_ATTRS];
    apigen_get_u64(&c, &ptr);
    apigen_get_u64(&c, &count);
    apigen_get_u32(&c, &n);
    if (c.rc == 0 && (n == 0 || n > BE_MAX_RANGE_ATTRS))
        return GVS_E_RANGE;
    for (uint32_t i = 0; c.rc == 0 && i < n; i++) {
        int32_t a;
        uint64_t size;
        apigen_get_i32(&c, &a);
        apigen_get_u64(&c, &size);
        if (size == 0 || size > BE_RANGE_DATA_MAX - total)
            return GVS_E_RANGE;
        attrs[i] = (enum cudaMemRangeAttribute)a;
        sizes[i] = (size_t)size;
        total += size;
    }
    if (apigen_end(&c) < 0)
        return c.rc;
    uint8_t *buf = gvs_calloc(1, (size_t)total);
    if (buf == NULL)
        return GVS_E_NOMEM;
    for (uint32_t i = 0, off = 0; i < n; off += (uint32_t)sizes[i++])
        data[i] = buf + off;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(ptr, count);
    if (e == cudaSuccess)
        e = n == 1 ? cudaMemRangeGetAttribute(data[0], sizes[0], attrs[0],
                                              (const void *)(uintptr_t)ptr,
                                              (size_t)count)
                   : cudaMemRangeGetAttributes(data, sizes, attrs, n,
                                               (const void *)(uintptr_t)ptr,
                                               (size_t)count);
    apigen_put_i32(&c, e);
    for (uint32_t i = 0; e == cudaSuccess && i < n; i++)
        apigen_put_blob(&c, data[i], sizes[i]);
    gvs_free(buf);
    return c.rc;
}
