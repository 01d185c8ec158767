/* Managed memory (cuda.api, docs/driver.md "Managed memory"): the
 * pages the client's shadow pushes; hints, prefetches and range
 * attributes (the allocations are memory.c's).  Every
 * range is checked to be device (or managed) memory first: a host
 * address would be the worker's. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"

/* The most bytes a range attribute takes (AccessedBy lists a device a
 * 4-byte slot). */
#define RANGE_ATTR_MAX 1024u

/* Request: u64 dst, blob bytes.  Reply (unless posted): i32. */
int cuda_be_managed_push(struct gvs_call *call)
{
    struct cuda_be_session *s = call->state;
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t dst;
    const uint8_t *data = NULL;
    size_t len = 0;
    apigen_get_u64(&c, &dst);
    apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(dst, len);
    if (r == CUDA_SUCCESS && len > 0)
        r = CUDA_DRV(cuMemcpyHtoD_v2)((CUdeviceptr)dst, data, len);
    if (r != CUDA_SUCCESS)
        s->host->log(GVS_LOG_WARN, "managed memory push to 0x%llx failed: %d",
                     (unsigned long long)dst, (int)r);
    if (!call->noreply)
        apigen_put_i32(&c, r);
    return c.rc;
}

#define HINT_ADVISE 0
#define HINT_PREFETCH 1

/* Request: u64 stream, u8 0, u64 address, u64 count, u8 kind, i32
 * advice, i32 location type, i32 location id, u32 flags.  Reply: i32. */
int cuda_be_mem_hint(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream st = NULL;
    uint8_t zero = 0, kind;
    uint64_t p, count;
    int32_t advice, type, id;
    uint32_t flags;
    CUresult r = cuda_be_enter_stream(call, &c, &st, &zero);
    apigen_get_u64(&c, &p);
    apigen_get_u64(&c, &count);
    apigen_get_u8(&c, &kind);
    apigen_get_i32(&c, &advice);
    apigen_get_i32(&c, &type);
    apigen_get_i32(&c, &id);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (zero != 0 || kind > HINT_PREFETCH)
        return GVS_E_PROTO;
    CUmemLocation loc;
    loc.type = (CUmemLocationType)type;
    loc.id = id;
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(p, count);
    if (r == CUDA_SUCCESS && kind == HINT_ADVISE)
        r = CUDA_DRV(cuMemAdvise_v2)((CUdeviceptr)p, (size_t)count,
                                     (CUmem_advise)advice, loc);
    else if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemPrefetchAsync_v2)((CUdeviceptr)p, (size_t)count,
                                            loc, flags, st);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: u64 data size, i32 attribute, u64 address, u64 count.  Reply:
 * i32, blob the data. */
int cuda_be_mem_range_attribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t size, p, count;
    int32_t attr;
    uint8_t data[RANGE_ATTR_MAX];
    apigen_get_u64(&c, &size);
    apigen_get_i32(&c, &attr);
    apigen_get_u64(&c, &p);
    apigen_get_u64(&c, &count);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (size > RANGE_ATTR_MAX)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(p, count);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemRangeGetAttribute)(
            data, (size_t)size, (CUmem_range_attribute)attr, (CUdeviceptr)p,
            (size_t)count);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_blob(&c, data, (size_t)size);
    return c.rc;
}
