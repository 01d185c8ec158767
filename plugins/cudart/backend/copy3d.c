#include <stdio.h>

#include "mem3d.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "objects.h"

cudaError_t be_check_linear(const struct gvs_remote_side *s,
                            const struct gvs_remote_box *b)
{
    uint64_t first, len;
    int span = gvs_remote_linear_span(s, b, &first, &len);
    if (span != 0)
        return span > 0 ? cudaErrorInvalidPitchValue : cudaErrorInvalidValue;
    return be_check_device_range(first, len);
}

static cudaError_t side_elem(const struct gvs_remote_side *s, cudaArray_t *a,
                             size_t *elem)
{
    *elem = 0;
    if (s->kind != GVS_RSIDE_ARRAY)
        return cudaSuccess;
    cudaError_t e = be_array(s->addr, a);
    if (e == cudaSuccess)
        e = be_array_elem(*a, elem);
    return e;
}

/* One end of the copy: array, device memory (checked), or worker buffer
 * (a packed box). */
static cudaError_t fill_end(const struct gvs_remote_side *s,
                            const struct gvs_remote_box *b, cudaArray_t a, size_t elem, cudaArray_t *arr,
                            struct cudaPos *pos, struct cudaPitchedPtr *ptr)
{
    if (s->kind == GVS_RSIDE_ARRAY) {
        if (s->x % elem != 0)
            return cudaErrorInvalidValue;
        *arr = a;
        *pos = (struct cudaPos){s->x / elem, s->y, s->z};
        return cudaSuccess;
    }
    if (s->kind == GVS_RSIDE_HOST) {
        *ptr = (struct cudaPitchedPtr){(void *)(uintptr_t)s->addr, b->w, b->w,
                                   b->h};
        return cudaSuccess;
    }
    if (s->kind == GVS_RSIDE_SHARED) {
        /* The client's rows, all in one region it shared: the worker's
         * mapping of them, pinned, which a graph's node may reach. */
        uint64_t first, len;
        int span = gvs_remote_linear_span(s, b, &first, &len);
        if (span != 0)
            return span > 0 ? cudaErrorInvalidPitchValue : cudaErrorInvalidValue;
        uint8_t *w = be_remote->shared_host(first, len);
        if (w == NULL)
            return cudaErrorInvalidValue;
        *ptr = (struct cudaPitchedPtr){w - (first - s->addr), s->pitch, s->pitch,
                                       s->ysize};
        *pos = (struct cudaPos){s->x, s->y, s->z};
        return cudaSuccess;
    }
    cudaError_t e = be_check_linear(s, b);
    if (e != cudaSuccess)
        return e;
    *ptr = (struct cudaPitchedPtr){(void *)(uintptr_t)s->addr, s->pitch,
                                   s->pitch, s->ysize};
    *pos = (struct cudaPos){s->x, s->y, s->z};
    return cudaSuccess;
}

cudaError_t be_copy_params(const struct gvs_remote_side *dst,
                           const struct gvs_remote_side *src,
                           const struct gvs_remote_box *b,
                           struct cudaMemcpy3DParms *p)
{
    cudaArray_t da = NULL, sa = NULL;
    size_t de, se;
    *p = (struct cudaMemcpy3DParms){0};
    cudaError_t e = side_elem(dst, &da, &de);
    if (e == cudaSuccess)
        e = side_elem(src, &sa, &se);
    if (e != cudaSuccess)
        return e;
    if (de != 0 && se != 0 && de != se)
        return cudaErrorInvalidValue;
    size_t elem = de ? de : (se ? se : 1);
    if (b->w % elem != 0)
        return cudaErrorInvalidValue;
    e = fill_end(dst, b, da, elem, &p->dstArray, &p->dstPos, &p->dstPtr);
    if (e == cudaSuccess)
        e = fill_end(src, b, sa, elem, &p->srcArray, &p->srcPos, &p->srcPtr);
    p->extent = (struct cudaExtent){b->w / elem, b->h, b->d};
    int src_host = src->kind == GVS_RSIDE_HOST || src->kind == GVS_RSIDE_SHARED;
    int dst_host = dst->kind == GVS_RSIDE_HOST || dst->kind == GVS_RSIDE_SHARED;
    p->kind = src_host && dst_host ? cudaMemcpyHostToHost
              : src_host           ? cudaMemcpyHostToDevice
              : dst_host           ? cudaMemcpyDeviceToHost
                                   : cudaMemcpyDeviceToDevice;
    return e;
}

/* A copy of worker memory into a capturing stream would leave the graph
 * pointing at a request buffer that is gone once the op returns. */
static cudaError_t run_copy(struct gvs_call *call,
                            const struct cudaMemcpy3DParms *p, uint8_t async,
                            uint64_t stream)
{
    if (!async)
        return cudaMemcpy3D(p);
    cudaStream_t s;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = be_stream(call, stream, &s);
    if (e == cudaSuccess && p->kind != cudaMemcpyDeviceToDevice)
        e = cudaStreamIsCapturing(s, &cs);
    if (e == cudaSuccess && cs != cudaStreamCaptureStatusNone)
        e = cudaErrorStreamCaptureUnsupported;
    if (e == cudaSuccess)
        e = cudaMemcpy3DAsync(p, s);
    return e;
}

static void get_tail(struct apigen_call *c, uint8_t *async, uint64_t *stream)
{
    apigen_get_u8(c, async);
    apigen_get_u64(c, stream);
    if (c->rc == 0 && *async > 1)
        c->rc = GVS_E_PROTO;
}

/* Posted pieces latch the first failure and skip the rest, as
 * MEMCPY_H2D's chunks do; the last piece reports it. */
int cudart_be_memcpy3d_to(struct gvs_call *call)
{
    struct be_lane *s = be_lane(call);
    struct apigen_call c = {call->out, call->in, 0};
    struct gvs_remote_side dst;
    struct gvs_remote_box b;
    uint8_t async;
    uint64_t stream;
    const uint8_t *data;
    size_t len;
    gvs_remote_get_side(&c, &dst);
    gvs_remote_get_box(&c, &b);
    get_tail(&c, &async, &stream);
    apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (len != gvs_remote_box_bytes(&b) || len == 0) {
        snprintf(call->why, sizeof(call->why),
                 "%zu data bytes for a box of %llu", len,
                 (unsigned long long)gvs_remote_box_bytes(&b));
        return GVS_E_PROTO;
    }
    if (s == NULL)
        return GVS_E_NOMEM;
    if (s->latched == cudaSuccess) {
        struct gvs_remote_side src = {GVS_RSIDE_HOST,
                                      (uint64_t)(uintptr_t)data, 0, 0,
                                      0, 0, 0};
        struct cudaMemcpy3DParms p;
        cudaError_t e = cudart_be_enter(call);
        if (e == cudaSuccess)
            e = be_copy_params(&dst, &src, &b, &p);
        if (e == cudaSuccess)
            e = run_copy(call, &p, async, stream);
        s->latched = e;
    }
    if (!call->noreply) {
        apigen_put_i32(&c, s->latched);
        s->latched = cudaSuccess;
    }
    return c.rc;
}

int cudart_be_memcpy3d_from(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct gvs_remote_side src;
    struct gvs_remote_box b;
    uint8_t async;
    uint64_t stream;
    uint8_t *rows;
    gvs_remote_get_side(&c, &src);
    gvs_remote_get_box(&c, &b);
    get_tail(&c, &async, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    uint64_t len = gvs_remote_box_bytes(&b);
    if (len == 0 || len > GVS_BULK_CHUNK)
        return GVS_E_RANGE;
    /* The rows go straight into the reply, behind its result and blob
     * length, and are taken back out if the copy fails. */
    apigen_put_i32(&c, cudaSuccess);
    apigen_put_u32(&c, (uint32_t)len);
    if (c.rc == 0)
        c.rc = gvs_buf_reserve(call->out, len, &rows);
    if (c.rc < 0)
        return c.rc;
    struct gvs_remote_side dst = {GVS_RSIDE_HOST, (uint64_t)(uintptr_t)rows,
                                  0, 0, 0, 0, 0};
    struct cudaMemcpy3DParms p;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_copy_params(&dst, &src, &b, &p);
    if (e == cudaSuccess)
        e = run_copy(call, &p, async, stream);
    if (e != cudaSuccess) {
        c.rc = gvs_buf_unput(call->out, len + 8);
        apigen_put_i32(&c, e);
    }
    return c.rc;
}

int cudart_be_memcpy3d_dev(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct gvs_remote_side dst, src;
    struct gvs_remote_box b;
    uint8_t async;
    uint64_t stream;
    gvs_remote_get_side(&c, &dst);
    gvs_remote_get_side(&c, &src);
    gvs_remote_get_box(&c, &b);
    get_tail(&c, &async, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cudaMemcpy3DParms p;
    /* The frontend sends no empty box; an overflowing one is refused. */
    cudaError_t e = gvs_remote_box_bytes(&b) == 0 ? cudaErrorInvalidValue
                                          : cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_copy_params(&dst, &src, &b, &p);
    if (e == cudaSuccess)
        e = run_copy(call, &p, async, stream);
    apigen_put_i32(&c, e);
    return c.rc;
}
