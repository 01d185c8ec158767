#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/proto.h"

static int is_device_memory(uint64_t p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, (const void *)(uintptr_t)p) !=
        cudaSuccess) {
        /* Leaves nothing behind for a later cudaGetLastError. */
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* One driver query (its type and range), half the cost of asking the
 * runtime about both ends of a range, on the path of every copy.  That
 * query, unlike cuPointerGetAttribute, answers an unknown address with
 * empty values rather than an error. */
uint64_t be_device_left(uint64_t p)
{
    be_driver_attrs_fn attrs = be_driver()->attrs;
    if (attrs == NULL)
        return 0;
    CUmemorytype type = (CUmemorytype)0;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute which[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                    CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[3] = {&type, &start, &size};
    if (attrs(3, which, data, (CUdeviceptr)p) != CUDA_SUCCESS ||
        type != CU_MEMORYTYPE_DEVICE || p < start || p - start >= size)
        return 0;
    return size - (p - start);
}

/* 0 also when the query cannot tell: the caller then asks about both
 * ends, which also accepts a range across adjacent allocations, as
 * CUDA's copies do. */
static int in_one_allocation(uint64_t p, uint64_t len)
{
    uint64_t left = be_device_left(p);
    return left > 0 && len <= left;
}

cudaError_t be_check_device_range(uint64_t p, uint64_t len)
{
    if (len == 0)
        return cudaSuccess;
    if (p + len < p)
        return cudaErrorInvalidValue;
    if (in_one_allocation(p, len))
        return cudaSuccess;
    if ((!is_device_memory(p) || !is_device_memory(p + len - 1)) &&
        !be_remote->graph_range_has(p, len))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

int cudart_be_cudamemset(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t ptr, count;
    int32_t value;
    apigen_get_u64(&c, &ptr);
    apigen_get_i32(&c, &value);
    apigen_get_u64(&c, &count);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(ptr, count);
    if (e == cudaSuccess)
        e = cudaMemset((void *)(uintptr_t)ptr, value, (size_t)count);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Posted chunks latch the first failure in their lane and are skipped
 * after it; the final chunk (the only one waited for) reports it and
 * clears the latch for the lane's next transfer. */
int cudart_be_memcpy_h2d(struct gvs_call *call)
{
    struct be_lane *s = be_lane(call);
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t dst;
    const uint8_t *data;
    size_t len;
    apigen_get_u64(&c, &dst);
    apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (s == NULL)
        return GVS_E_NOMEM;
    if (s->latched == cudaSuccess) {
        cudaError_t e = cudart_be_enter(call);
        if (e == cudaSuccess)
            e = be_check_device_range(dst, len);
        if (e == cudaSuccess && len > 0)
            e = be_memcpy((void *)(uintptr_t)dst, data, len,
                          cudaMemcpyHostToDevice);
        s->latched = e;
    }
    if (!call->noreply) {
        apigen_put_i32(&c, s->latched);
        s->latched = cudaSuccess;
    }
    return c.rc;
}

/* len bytes from device address src to dst, done when it returns: with
 * cudaMemcpy, or on *s and the stream waited for. */
static cudaError_t d2h_done(void *dst, uint64_t src, uint64_t len,
                            const cudaStream_t *s)
{
    if (len == 0)
        return cudaSuccess;
    if (s == NULL)
        return be_memcpy(dst, (const void *)(uintptr_t)src, len,
                         cudaMemcpyDeviceToHost);
    cudaError_t e = be_memcpy_async(dst, (const void *)(uintptr_t)src, len,
                                    cudaMemcpyDeviceToHost, *s);
    return e == cudaSuccess ? cudaStreamSynchronize(*s) : e;
}

int be_reply_d2h(struct gvs_call *call, struct apigen_call *c, uint64_t src,
                 uint64_t len, const cudaStream_t *s)
{
    const struct gvs_remote_piece p = {src, len, s != NULL ? *s : NULL};
    int read;
    int32_t r;
    void *stage = be_remote->stage_d2h(call, len, &p, &be_pinner, &read, &r);
    if (stage != NULL) {
        cudaError_t e = read ? (cudaError_t)r : d2h_done(stage, src, len, s);
        apigen_put_i32(c, e);
        if (e != cudaSuccess)
            return c->rc;
        be_remote->stage_d2h_next(call, &p, stage, &be_pinner);
        apigen_put_u32(c, (uint32_t)len);
        call->out_tail = stage;
        call->out_tail_len = len;
        return c->rc;
    }
    /* Through CUDA's staging into the reply itself, behind the result
     * and the length, taken back out if the copy fails. */
    uint8_t *dst;
    apigen_put_i32(c, cudaSuccess);
    apigen_put_u32(c, (uint32_t)len);
    if (c->rc == 0)
        c->rc = gvs_buf_reserve(c->put, len, &dst);
    if (c->rc < 0)
        return c->rc;
    cudaError_t e = d2h_done(dst, src, len, s);
    if (e != cudaSuccess) {
        c->rc = gvs_buf_unput(c->put, len + 8);
        apigen_put_i32(c, e);
    }
    return c->rc;
}

/* Request: u64 src, u64 len (<= GVS_BULK_CHUNK).  Reply: i32 result,
 * then on success u32 len and the bytes, which are DMAed into the lane's
 * pinned staging and sent from there as the reply's tail. */
int cudart_be_memcpy_d2h(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t src, len;
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (len > GVS_BULK_CHUNK)
        return GVS_E_RANGE;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(src, len);
    if (e == cudaSuccess)
        return be_reply_d2h(call, &c, src, len, NULL);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_memcpy_d2d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t dst, src, count;
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &count);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(dst, count);
    if (e == cudaSuccess)
        e = be_check_device_range(src, count);
    if (e == cudaSuccess && count > 0)
        e = be_memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src,
                      (size_t)count, cudaMemcpyDeviceToDevice);
    apigen_put_i32(&c, e);
    return c.rc;
}
