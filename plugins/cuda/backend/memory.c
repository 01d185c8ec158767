/* Device memory (cuda.api): allocations counted against the session's
 * quota (the layer's, shared with the runtime's), copies in pieces of at
 * most GVS_BULK_CHUNK, memsets.  Device addresses are checked to be
 * device memory before the driver touches them: a host address would be
 * the worker's. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* The bulk-copy failure of a lane's posted pieces (MEMCPY_H2D), reported
 * by the transfer's last piece. */
struct cuda_be_lane {
    CUresult bulk;
};

static struct cuda_be_lane *lane_state(struct gvs_call *call)
{
    struct gvs_remote_lane *l = cuda_be_remote->lane(call);
    if (l == NULL)
        return NULL;
    if (l->slot[CUDA_PLUGIN_ID] == NULL)
        l->slot[CUDA_PLUGIN_ID] = gvs_calloc(1, sizeof(struct cuda_be_lane));
    return l->slot[CUDA_PLUGIN_ID];
}

static int is_device(uint64_t p)
{
    unsigned int type = 0;
    return CUDA_DRV(cuPointerGetAttribute)(&type,
                                           CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                           (CUdeviceptr)p) == CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_DEVICE;
}

CUresult cuda_be_check_device_range(uint64_t p, uint64_t len)
{
    if (len == 0)
        return CUDA_SUCCESS;
    if (p + len < p || !is_device(p) || !is_device(p + len - 1))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* The device of the lane's current context, for the quota's records. */
static int current_device(void)
{
    CUdevice dev = 0;
    (void)CUDA_DRV(cuCtxGetDevice)(&dev);
    return dev;
}

/* Request: u64 size.  Reply: i32, u64 address. */
int cuda_be_mem_alloc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t size;
    CUdeviceptr p = 0;
    apigen_get_u64(&c, &size);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && size == 0)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && cuda_be_remote->quota_take(size) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (r == CUDA_SUCCESS) {
        r = CUDA_DRV(cuMemAlloc_v2)(&p, (size_t)size);
        cuda_be_remote->quota_settle(r == CUDA_SUCCESS, GVS_RQ_PTR, p,
                                     current_device(), 0, size, size);
    }
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_u64(&c, p);
    return c.rc;
}

/* Request: u64 address.  Reply: i32. */
int cuda_be_mem_free(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p;
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemFree_v2)((CUdeviceptr)p);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->quota_release(GVS_RQ_PTR, p);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Reply: i32, u64 free, u64 total, as the session may see them. */
int cuda_be_cumemgetinfo_v2(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    size_t free = 0, total = 0;
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemGetInfo_v2)(&free, &total);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->quota_mem_info(&free, &total);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, free);
        apigen_put_u64(&c, total);
    }
    return c.rc;
}

/* The stream and ordering every copy and memset request starts with:
 * u64 stream, u8 flags.  Enters the lane and finds the stream. */
static CUresult get_stream(struct gvs_call *call, struct apigen_call *c,
                           CUstream *s, uint8_t *flags)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    apigen_get_u8(c, flags);
    if (c->rc < 0)
        return CUDA_SUCCESS;
    CUresult r = cuda_be_enter(call);
    return r == CUDA_SUCCESS ? cuda_be_stream(call, wire, s) : r;
}

#define PIECE_ASYNC 1u
#define PIECE_LAST 2u

/* Request: u64 stream, u8 flags, u64 dst, blob piece.  A pageable
 * source is staged by the driver before an async copy returns, so the
 * request's bytes may go once it has. */
int cuda_be_memcpy_h2d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cuda_be_lane *l = lane_state(call);
    CUstream s = NULL;
    uint8_t flags = 0;
    uint64_t dst;
    const uint8_t *data;
    size_t len;
    CUresult r = get_stream(call, &c, &s, &flags);
    apigen_get_u64(&c, &dst);
    apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > (PIECE_ASYNC | PIECE_LAST))
        return GVS_E_PROTO;
    if (l == NULL)
        return GVS_E_NOMEM;
    if (l->bulk == CUDA_SUCCESS) {
        if (r == CUDA_SUCCESS)
            r = cuda_be_check_device_range(dst, len);
        if (r == CUDA_SUCCESS && len > 0)
            r = flags & PIECE_ASYNC
                    ? CUDA_DRV(cuMemcpyHtoDAsync_v2)(dst, data, len, s)
                    : CUDA_DRV(cuMemcpyHtoD_v2)(dst, data, len);
        l->bulk = r;
    }
    if (flags & PIECE_LAST) {
        r = l->bulk;
        l->bulk = CUDA_SUCCESS;
        if (!call->noreply)
            apigen_put_i32(&c, r);
    }
    return c.rc;
}

/* Request: u64 stream, u8 async, u64 src, u64 len.  Reply: i32, blob.
 * A stream-ordered copy into the reply waits for its stream: the bytes
 * leave with the reply. */
int cuda_be_memcpy_d2h(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    uint8_t flags = 0;
    uint64_t src, len;
    uint8_t *dst;
    CUresult r = get_stream(call, &c, &s, &flags);
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > PIECE_ASYNC || len > GVS_BULK_CHUNK)
        return GVS_E_RANGE;
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(src, len);
    if (r != CUDA_SUCCESS) {
        apigen_put_i32(&c, r);
        return c.rc;
    }
    apigen_put_i32(&c, CUDA_SUCCESS);
    apigen_put_u32(&c, (uint32_t)len);
    if (c.rc == 0)
        c.rc = gvs_buf_reserve(c.put, len, &dst);
    if (c.rc < 0)
        return c.rc;
    if (len > 0 && flags & PIECE_ASYNC) {
        r = CUDA_DRV(cuMemcpyDtoHAsync_v2)(dst, src, len, s);
        if (r == CUDA_SUCCESS)
            r = CUDA_DRV(cuStreamSynchronize)(s);
    } else if (len > 0) {
        r = CUDA_DRV(cuMemcpyDtoH_v2)(dst, src, len);
    }
    if (r != CUDA_SUCCESS) {
        gvs_buf_reset(c.put);
        apigen_put_i32(&c, r);
    }
    return c.rc;
}

/* Request: u64 stream, u8 async, u64 dst, u64 src, u64 len.  Reply: i32. */
int cuda_be_memcpy_d2d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    uint8_t flags = 0;
    uint64_t dst, src, len;
    CUresult r = get_stream(call, &c, &s, &flags);
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > PIECE_ASYNC)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(dst, len);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(src, len);
    if (r == CUDA_SUCCESS && len > 0)
        r = flags & PIECE_ASYNC
                ? CUDA_DRV(cuMemcpyDtoDAsync_v2)(dst, src, len, s)
                : CUDA_DRV(cuMemcpyDtoD_v2)(dst, src, len);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: u64 stream, u8 async, u8 element size, u64 dst, u32 value,
 * u64 count.  Reply: i32. */
int cuda_be_memset(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    uint8_t flags = 0, size;
    uint64_t dst, n;
    uint32_t v;
    CUresult r = get_stream(call, &c, &s, &flags);
    apigen_get_u8(&c, &size);
    apigen_get_u64(&c, &dst);
    apigen_get_u32(&c, &v);
    apigen_get_u64(&c, &n);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > PIECE_ASYNC || (size != 1 && size != 2 && size != 4) ||
        n > UINT64_MAX / size)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(dst, n * size);
    int async = flags & PIECE_ASYNC;
    if (r == CUDA_SUCCESS && n > 0) {
        if (size == 1)
            r = async ? CUDA_DRV(cuMemsetD8Async)(dst, (unsigned char)v, n, s)
                      : CUDA_DRV(cuMemsetD8_v2)(dst, (unsigned char)v, n);
        else if (size == 2)
            r = async ? CUDA_DRV(cuMemsetD16Async)(dst, (unsigned short)v, n, s)
                      : CUDA_DRV(cuMemsetD16_v2)(dst, (unsigned short)v, n);
        else
            r = async ? CUDA_DRV(cuMemsetD32Async)(dst, v, n, s)
                      : CUDA_DRV(cuMemsetD32_v2)(dst, v, n);
    }
    apigen_put_i32(&c, r);
    return c.rc;
}
