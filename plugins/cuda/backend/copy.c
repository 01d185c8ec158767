/* Copies (cuda.api, MEMCPY_*): rectangles of rows between the request or
 * reply and device memory, or within device memory; a 1D copy is one
 * row.  Host to device, the pieces of one copy but its last are posted:
 * the first failure is kept in the lane and the last piece's reply says
 * it, or when the last is posted too, the lane's next synchronizing
 * call. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

#define PIECE_ASYNC CUDA_BE_PIECE_ASYNC
#define PIECE_LAST CUDA_BE_PIECE_LAST

/* The lane's failure of the posted pieces of its current copy. */
CUresult *cuda_be_piece_failed(struct gvs_call *call)
{
    struct cuda_be_lane *l = cuda_be_lane(call);
    return l != NULL ? &l->copy_failed : NULL;
}

void cuda_be_piece_report(struct gvs_call *call, struct apigen_call *c,
                          CUresult *failed, uint8_t flags)
{
    if ((flags & PIECE_LAST) || !call->noreply) {
        CUresult r = *failed;
        *failed = CUDA_SUCCESS;
        if (!call->noreply)
            apigen_put_i32(c, r);
        else if (r != CUDA_SUCCESS)
            cuda_be_posted_failure(call, (int)r);
    }
}

int cuda_be_piece_fits(uint64_t width, uint64_t rows)
{
    return rows == 0 || width <= GVS_BULK_CHUNK / rows;
}

CUresult cuda_be_check_device_rect(uint64_t p, uint64_t pitch,
                                   uint64_t width, uint64_t rows)
{
    uint64_t span;
    if (width == 0 || rows == 0)
        return CUDA_SUCCESS;
    if (rows > 1 && pitch < width)
        return CUDA_ERROR_INVALID_VALUE;
    if (__builtin_mul_overflow(rows - 1, pitch, &span) ||
        __builtin_add_overflow(span, width, &span))
        return CUDA_ERROR_INVALID_VALUE;
    return cuda_be_check_device_range(p, span);
}

/* The driver's 2D descriptor of a copy between device addresses or a
 * host buffer (host != NULL on that side). */
static CUDA_MEMCPY2D rect(uint64_t dst, void *dst_host, uint64_t dpitch,
                          uint64_t src, const void *src_host,
                          uint64_t spitch, uint64_t width, uint64_t rows)
{
    CUDA_MEMCPY2D d = {0};
    d.dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    d.dstHost = dst_host;
    d.dstDevice = dst_host ? 0 : (CUdeviceptr)dst;
    d.dstPitch = dpitch;
    d.srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    d.srcHost = src_host;
    d.srcDevice = src_host ? 0 : (CUdeviceptr)src;
    d.srcPitch = spitch;
    d.WidthInBytes = width;
    d.Height = rows;
    return d;
}

/* One row is the driver's 1D copy, as a program's own would be. */
static CUresult copy(const CUDA_MEMCPY2D *d, CUstream s, int async)
{
    size_t n = d->WidthInBytes;
    if (n == 0 || d->Height == 0)
        return CUDA_SUCCESS;
    if (d->Height > 1)
        return async ? CUDA_DRV(cuMemcpy2DAsync_v2)(d, s)
                     : CUDA_DRV(cuMemcpy2D_v2)(d);
    if (d->srcHost != NULL)
        return async ? CUDA_DRV(cuMemcpyHtoDAsync_v2)(d->dstDevice,
                                                      d->srcHost, n, s)
                     : CUDA_DRV(cuMemcpyHtoD_v2)(d->dstDevice, d->srcHost, n);
    if (d->dstHost != NULL)
        return async ? CUDA_DRV(cuMemcpyDtoHAsync_v2)(d->dstHost,
                                                      d->srcDevice, n, s)
                     : CUDA_DRV(cuMemcpyDtoH_v2)(d->dstHost, d->srcDevice, n);
    return async ? CUDA_DRV(cuMemcpyDtoDAsync_v2)(d->dstDevice, d->srcDevice,
                                                  n, s)
                 : CUDA_DRV(cuMemcpyDtoD_v2)(d->dstDevice, d->srcDevice, n);
}

/* Request: u64 stream, u8 flags, u64 dst, u64 dpitch, u64 width, u64
 * rows, blob the rows packed.  A pageable source is staged by the
 * driver before an async copy returns, so the request's bytes may go
 * once it has. */
int cuda_be_memcpy_h2d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUresult *failed = cuda_be_piece_failed(call);
    CUstream s = NULL;
    uint8_t flags = 0;
    uint64_t dst, dpitch, width, rows;
    const uint8_t *data;
    size_t len;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &flags);
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &dpitch);
    apigen_get_u64(&c, &width);
    apigen_get_u64(&c, &rows);
    apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > (PIECE_ASYNC | PIECE_LAST) ||
        !cuda_be_piece_fits(width, rows) || len != width * rows)
        return GVS_E_PROTO;
    if (failed == NULL)
        return GVS_E_NOMEM;
    if (*failed == CUDA_SUCCESS) {
        if (r == CUDA_SUCCESS)
            r = cuda_be_check_device_rect(dst, dpitch, width, rows);
        if (r == CUDA_SUCCESS) {
            CUDA_MEMCPY2D d =
                rect(dst, NULL, dpitch, 0, data, width, width, rows);
            r = copy(&d, s, flags & PIECE_ASYNC);
        }
        *failed = r;
    }
    cuda_be_piece_report(call, &c, failed, flags);
    return c.rc;
}

int cuda_be_reply_rows(struct gvs_call *call, struct apigen_call *c,
                       uint64_t len,
                       CUresult (*fill)(uint8_t *rows, void *arg), void *arg,
                       CUstream s, int async)
{
    int read;
    int32_t unused;
    uint8_t *rows = cuda_be_remote->stage_d2h(call, len, NULL, &cuda_be_pinner,
                                              &read, &unused);
    if (rows != NULL) {
        CUresult r = fill(rows, arg);
        if (r == CUDA_SUCCESS && async)
            r = CUDA_DRV(cuStreamSynchronize)(s);
        apigen_put_i32(c, r);
        if (r == CUDA_SUCCESS) {
            apigen_put_u32(c, (uint32_t)len);
            call->out_tail = rows;
            call->out_tail_len = len;
        }
        return c->rc;
    }
    apigen_put_i32(c, CUDA_SUCCESS);
    apigen_put_u32(c, (uint32_t)len);
    if (c->rc == 0)
        c->rc = gvs_buf_reserve(c->put, len, &rows);
    if (c->rc < 0)
        return c->rc;
    CUresult r = fill(rows, arg);
    if (r == CUDA_SUCCESS && async)
        r = CUDA_DRV(cuStreamSynchronize)(s);
    if (r != CUDA_SUCCESS) {
        gvs_buf_reset(c->put);
        apigen_put_i32(c, r);
    }
    return c->rc;
}

/* A device rectangle into the reply's rows. */
struct d2h {
    uint64_t src, spitch, width, rows;
    CUstream s;
    int async;
};

static CUresult d2h_fill(uint8_t *rows, void *arg)
{
    const struct d2h *a = arg;
    CUDA_MEMCPY2D d = rect(0, rows, a->width, a->src, NULL, a->spitch,
                           a->width, a->rows);
    return copy(&d, a->s, a->async);
}

/* Request: u64 stream, u8 async, u64 src, u64 spitch, u64 width, u64
 * rows.  Reply: i32, blob the rows packed. */
int cuda_be_memcpy_d2h(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct d2h a = {0, 0, 0, 0, NULL, 0};
    uint8_t flags = 0;
    CUresult r = cuda_be_enter_stream(call, &c, &a.s, &flags);
    apigen_get_u64(&c, &a.src);
    apigen_get_u64(&c, &a.spitch);
    apigen_get_u64(&c, &a.width);
    apigen_get_u64(&c, &a.rows);
    if (apigen_end(&c) < 0)
        return c.rc;
    if ((flags & ~(PIECE_ASYNC | CUDA_BE_PIECE_ANY_CONTEXT)) != 0 ||
        !cuda_be_piece_fits(a.width, a.rows))
        return GVS_E_RANGE;
    int entered = r == CUDA_SUCCESS && (flags & CUDA_BE_PIECE_ANY_CONTEXT) &&
                  cuda_be_enter_library_context();
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_rect(a.src, a.spitch, a.width, a.rows);
    if (r != CUDA_SUCCESS) {
        apigen_put_i32(&c, r);
    } else {
        a.async = flags & PIECE_ASYNC;
        (void)cuda_be_reply_rows(call, &c, a.width * a.rows, d2h_fill, &a,
                                 a.s, a.async);
    }
    if (entered)
        (void)CUDA_DRV(cuCtxSetCurrent)(NULL);
    return c.rc;
}

/* Request: u64 stream, u8 async, u64 dst, u64 dpitch, u64 src, u64
 * spitch, u64 width, u64 rows.  Reply: i32. */
int cuda_be_memcpy_d2d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    uint8_t flags = 0;
    uint64_t dst, dpitch, src, spitch, width, rows;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &flags);
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &dpitch);
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &spitch);
    apigen_get_u64(&c, &width);
    apigen_get_u64(&c, &rows);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > PIECE_ASYNC)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_rect(dst, dpitch, width, rows);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_rect(src, spitch, width, rows);
    if (r == CUDA_SUCCESS) {
        CUDA_MEMCPY2D d = rect(dst, NULL, dpitch, src, NULL, spitch, width,
                               rows);
        r = copy(&d, s, flags & PIECE_ASYNC);
    }
    if (call->noreply && r != CUDA_SUCCESS)
        cuda_be_posted_failure(call, (int)r);
    apigen_put_i32(&c, r);
    return c.rc;
}
