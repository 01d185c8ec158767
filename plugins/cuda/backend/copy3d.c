/* Copies with an array side (cuda.api, MEMCPY3D_*): boxes of the
 * layer's wire form (remote_box.h), each side an array of the session's
 * table or device memory checked to be device memory, the host side the
 * request's or the reply's packed rows; the driver's cuMemcpy3D does
 * them. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "remote_box.h"

/* One side of a CUDA_MEMCPY3D. */
struct end {
    CUmemorytype type;
    void *host;
    CUdeviceptr dev;
    CUarray array;
    size_t x, y, z, pitch, height;
};

static CUresult end_of(const struct gvs_remote_side *s,
                       const struct gvs_remote_box *b, struct end *e)
{
    uint64_t first, len;
    *e = (struct end){.x = s->x, .y = s->y, .z = s->z};
    switch (s->kind) {
    case GVS_RSIDE_ARRAY:
        e->type = CU_MEMORYTYPE_ARRAY;
        return cuda_be_array(s->addr, &e->array);
    case GVS_RSIDE_HOST:
        e->type = CU_MEMORYTYPE_HOST;
        e->host = (void *)(uintptr_t)s->addr;
        e->pitch = b->w;
        e->height = b->h;
        return CUDA_SUCCESS;
    default:
        if (gvs_remote_linear_span(s, b, &first, &len) != 0)
            return CUDA_ERROR_INVALID_VALUE;
        e->type = CU_MEMORYTYPE_DEVICE;
        e->dev = (CUdeviceptr)s->addr;
        e->pitch = s->pitch;
        e->height = s->ysize;
        return cuda_be_check_device_range(first, len);
    }
}

/* Copies box from src to dst on stream s (async) or not. */
static CUresult copy(const struct gvs_remote_side *dst,
                     const struct gvs_remote_side *src,
                     const struct gvs_remote_box *b, CUstream s, int async)
{
    struct end d, f;
    CUresult r = end_of(dst, b, &d);
    if (r == CUDA_SUCCESS)
        r = end_of(src, b, &f);
    if (r != CUDA_SUCCESS)
        return r;
    CUDA_MEMCPY3D p = {
        .srcXInBytes = f.x, .srcY = f.y, .srcZ = f.z,
        .srcMemoryType = f.type, .srcHost = f.host, .srcDevice = f.dev,
        .srcArray = f.array, .srcPitch = f.pitch, .srcHeight = f.height,
        .dstXInBytes = d.x, .dstY = d.y, .dstZ = d.z,
        .dstMemoryType = d.type, .dstHost = d.host, .dstDevice = d.dev,
        .dstArray = d.array, .dstPitch = d.pitch, .dstHeight = d.height,
        .WidthInBytes = b->w, .Height = b->h, .Depth = b->d,
    };
    return async ? CUDA_DRV(cuMemcpy3DAsync_v2)(&p, s)
                 : CUDA_DRV(cuMemcpy3D_v2)(&p);
}

/* A host piece's box: one slice that fits in a request. */
static int host_piece(const struct gvs_remote_box *b)
{
    return b->d == 1 && b->w > 0 && b->h > 0 &&
           cuda_be_piece_fits(b->w, b->h);
}

/* Request: u64 stream, u8 flags, side dst, box, blob the rows packed.
 * Posted pieces keep the first failure, as MEMCPY_H2D's do; a pageable
 * source is staged by the driver before an async copy returns, so the
 * request's bytes may go once it has. */
int cuda_be_memcpy3d_to(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUresult *failed = cuda_be_piece_failed(call);
    struct gvs_remote_side dst;
    struct gvs_remote_box b;
    CUstream s = NULL;
    uint8_t flags = 0;
    const uint8_t *data;
    size_t len;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &flags);
    gvs_remote_get_side(&c, &dst);
    gvs_remote_get_box(&c, &b);
    apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > (CUDA_BE_PIECE_ASYNC | CUDA_BE_PIECE_LAST) ||
        !host_piece(&b) || len != b.w * b.h)
        return GVS_E_PROTO;
    if (failed == NULL)
        return GVS_E_NOMEM;
    if (*failed == CUDA_SUCCESS) {
        struct gvs_remote_side src = {GVS_RSIDE_HOST,
                                      (uint64_t)(uintptr_t)data, 0, 0,
                                      0, 0, 0};
        if (r == CUDA_SUCCESS)
            r = copy(&dst, &src, &b, s, flags & CUDA_BE_PIECE_ASYNC);
        *failed = r;
    }
    cuda_be_piece_report(call, &c, failed, flags);
    return c.rc;
}

/* A side's box into the reply's rows. */
struct from {
    struct gvs_remote_side src;
    struct gvs_remote_box b;
    CUstream s;
    int async;
};

static CUresult from_fill(uint8_t *rows, void *arg)
{
    const struct from *a = arg;
    struct gvs_remote_side dst = {GVS_RSIDE_HOST, (uint64_t)(uintptr_t)rows,
                                  0, 0, 0, 0, 0};
    return copy(&dst, &a->src, &a->b, a->s, a->async);
}

/* Request: u64 stream, u8 flags, side src, box.  Reply: i32, blob the
 * rows packed. */
int cuda_be_memcpy3d_from(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct from a;
    uint8_t flags = 0;
    a.s = NULL;
    CUresult r = cuda_be_enter_stream(call, &c, &a.s, &flags);
    gvs_remote_get_side(&c, &a.src);
    gvs_remote_get_box(&c, &a.b);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > CUDA_BE_PIECE_ASYNC || !host_piece(&a.b))
        return GVS_E_RANGE;
    if (r != CUDA_SUCCESS) {
        apigen_put_i32(&c, r);
        return c.rc;
    }
    a.async = flags & CUDA_BE_PIECE_ASYNC;
    return cuda_be_reply_rows(call, &c, a.b.w * a.b.h, from_fill, &a, a.s,
                              a.async);
}

/* Request: u64 stream, u8 flags, side dst, side src, box.  Reply: i32.
 * The frontend sends no empty box; an overflowing one is refused. */
int cuda_be_memcpy3d_dev(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct gvs_remote_side dst, src;
    struct gvs_remote_box b;
    CUstream s = NULL;
    uint8_t flags = 0;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &flags);
    gvs_remote_get_side(&c, &dst);
    gvs_remote_get_side(&c, &src);
    gvs_remote_get_box(&c, &b);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > CUDA_BE_PIECE_ASYNC)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS && gvs_remote_box_bytes(&b) == 0)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = copy(&dst, &src, &b, s, flags & CUDA_BE_PIECE_ASYNC);
    apigen_put_i32(&c, r);
    return c.rc;
}
