/*
 * cudaMemcpy2D/3D and the 2D array copies, each turned into sides and a
 * box for the copy engine (copy3d.c).  Array offsets and widths of the 2D
 * calls are in bytes, those of cudaMemcpy3D in array elements.
 */
#include "mem3d.h"

#include "streams.h"

static struct fe_side linear_side(const void *p, size_t pitch, size_t ysize,
                                  enum cudaMemcpyKind kind, int is_dst)
{
    return (struct fe_side){fe_ptr_side(p, kind, is_dst),
                            (uint64_t)(uintptr_t)p, pitch, ysize, 0, 0, 0};
}

static cudaError_t array_side(cudaArray_const_t a, size_t x, size_t y,
                              struct fe_side *out)
{
    uint64_t id;
    size_t elem;
    cudaError_t e = fe_array_lookup(a, &id, &elem);
    if (e == cudaSuccess)
        *out = (struct fe_side){FE_SIDE_ARRAY, id, 0, 0, x, y, 0};
    return e;
}

/* A 2D copy as the API gives it: width in bytes, height rows. */
static cudaError_t copy2d(const struct fe_side *dst, const struct fe_side *src,
                          size_t width, size_t height,
                          enum cudaMemcpyKind kind, int async,
                          cudaStream_t stream, int per_thread)
{
    struct fe_box box = {width, height, 1};
    if (!fe_kind_valid(kind))
        return cudaErrorInvalidMemcpyDirection;
    return fe_copy3d(dst, src, &box, async,
                     async ? fe_stream_wire(stream, per_thread) : 0);
}

static cudaError_t memcpy2d(void *dst, size_t dpitch, const void *src,
                            size_t spitch, size_t width, size_t height,
                            enum cudaMemcpyKind kind, int async,
                            cudaStream_t stream, int per_thread)
{
    struct fe_side d = linear_side(dst, dpitch, height, kind, 1);
    struct fe_side s = linear_side(src, spitch, height, kind, 0);
    /* As natively, even a single row must fit its pitch. */
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    return copy2d(&d, &s, width, height, kind, async, stream, per_thread);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
                         size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(memcpy2d(dst, dpitch, src, spitch, width, height,
                                  kind, 0, NULL, 0));
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return cudart_fe_ret(memcpy2d(dst, dpitch, src, spitch, width, height,
                                  kind, 1, stream, 0));
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                   size_t spitch, size_t width, size_t height,
                                   enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    return cudart_fe_ret(memcpy2d(dst, dpitch, src, spitch, width, height,
                                  kind, 1, stream, 1));
}

static cudaError_t to_array(cudaArray_t dst, size_t wOffset, size_t hOffset,
                            const void *src, size_t spitch, size_t width,
                            size_t height, enum cudaMemcpyKind kind,
                            int async, cudaStream_t stream, int per_thread)
{
    struct fe_side d, s = linear_side(src, spitch, height, kind, 0);
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (width > spitch)
        return cudaErrorInvalidPitchValue;
    cudaError_t e = array_side(dst, wOffset, hOffset, &d);
    if (e != cudaSuccess)
        return e;
    return copy2d(&d, &s, width, height, kind, async, stream, per_thread);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset,
                                size_t hOffset, const void *src, size_t spitch,
                                size_t width, size_t height,
                                enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(to_array(dst, wOffset, hOffset, src, spitch, width,
                                  height, kind, 0, NULL, 0));
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset,
                                     size_t hOffset, const void *src,
                                     size_t spitch, size_t width,
                                     size_t height, enum cudaMemcpyKind kind,
                                     cudaStream_t stream)
{
    return cudart_fe_ret(to_array(dst, wOffset, hOffset, src, spitch, width,
                                  height, kind, 1, stream, 0));
}

cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset,
                                          size_t hOffset, const void *src,
                                          size_t spitch, size_t width,
                                          size_t height,
                                          enum cudaMemcpyKind kind,
                                          cudaStream_t stream)
{
    return cudart_fe_ret(to_array(dst, wOffset, hOffset, src, spitch, width,
                                  height, kind, 1, stream, 1));
}

static cudaError_t from_array(void *dst, size_t dpitch, cudaArray_const_t src,
                              size_t wOffset, size_t hOffset, size_t width,
                              size_t height, enum cudaMemcpyKind kind,
                              int async, cudaStream_t stream, int per_thread)
{
    struct fe_side s, d = linear_side(dst, dpitch, height, kind, 1);
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (width > dpitch)
        return cudaErrorInvalidPitchValue;
    cudaError_t e = array_side(src, wOffset, hOffset, &s);
    if (e != cudaSuccess)
        return e;
    return copy2d(&d, &s, width, height, kind, async, stream, per_thread);
}

cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch,
                                  cudaArray_const_t src, size_t wOffset,
                                  size_t hOffset, size_t width, size_t height,
                                  enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(from_array(dst, dpitch, src, wOffset, hOffset, width,
                                    height, kind, 0, NULL, 0));
}

cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch,
                                       cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width,
                                       size_t height, enum cudaMemcpyKind kind,
                                       cudaStream_t stream)
{
    return cudart_fe_ret(from_array(dst, dpitch, src, wOffset, hOffset, width,
                                    height, kind, 1, stream, 0));
}

cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch,
                                            cudaArray_const_t src,
                                            size_t wOffset, size_t hOffset,
                                            size_t width, size_t height,
                                            enum cudaMemcpyKind kind,
                                            cudaStream_t stream)
{
    return cudart_fe_ret(from_array(dst, dpitch, src, wOffset, hOffset, width,
                                    height, kind, 1, stream, 1));
}

cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst,
                                     size_t hOffsetDst, cudaArray_const_t src,
                                     size_t wOffsetSrc, size_t hOffsetSrc,
                                     size_t width, size_t height,
                                     enum cudaMemcpyKind kind)
{
    struct fe_side d, s;
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return cudart_fe_ret(cudaErrorInvalidMemcpyDirection);
    cudaError_t e = array_side(dst, wOffsetDst, hOffsetDst, &d);
    if (e == cudaSuccess)
        e = array_side(src, wOffsetSrc, hOffsetSrc, &s);
    if (e == cudaSuccess)
        e = copy2d(&d, &s, width, height, kind, 0, NULL, 0);
    return cudart_fe_ret(e);
}

/* cudaMemcpy3D ------------------------------------------------------------ */

/* One end of a cudaMemcpy3DParms: exactly one of array and pointer. */
static cudaError_t params_side(cudaArray_t a, const struct cudaPos *pos,
                               const struct cudaPitchedPtr *ptr,
                               enum cudaMemcpyKind kind, int is_dst,
                               struct fe_side *out, size_t *elem)
{
    if ((a == NULL) == (ptr->ptr == NULL))
        return cudaErrorInvalidValue;
    if (a == NULL) {
        *out = linear_side(ptr->ptr, ptr->pitch, ptr->ysize, kind, is_dst);
        out->x = pos->x;
        out->y = pos->y;
        out->z = pos->z;
        *elem = 0;
        return cudaSuccess;
    }
    uint64_t id;
    cudaError_t e = fe_array_lookup(a, &id, elem);
    if (e != cudaSuccess)
        return e;
    if (__builtin_mul_overflow(pos->x, *elem, &out->x))
        return cudaErrorInvalidValue;
    *out = (struct fe_side){FE_SIDE_ARRAY, id, 0, 0, out->x, pos->y, pos->z};
    return cudaSuccess;
}

cudaError_t fe_copy3d_params(const struct cudaMemcpy3DParms *p,
                             struct fe_side *dst, struct fe_side *src,
                             struct fe_box *box)
{
    size_t de, se;
    if (p == NULL)
        return cudaErrorInvalidValue;
    if (!fe_kind_valid(p->kind))
        return cudaErrorInvalidMemcpyDirection;
    cudaError_t e = params_side(p->dstArray, &p->dstPos, &p->dstPtr, p->kind,
                                1, dst, &de);
    if (e == cudaSuccess)
        e = params_side(p->srcArray, &p->srcPos, &p->srcPtr, p->kind, 0, src,
                        &se);
    if (e != cudaSuccess)
        return e;
    /* The extent counts elements of the array taking part, if any. */
    if (de != 0 && se != 0 && de != se)
        return cudaErrorInvalidValue;
    size_t elem = de ? de : (se ? se : 1);
    *box = (struct fe_box){0, p->extent.height, p->extent.depth};
    if (__builtin_mul_overflow(p->extent.width, elem, &box->w))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

static cudaError_t memcpy3d(const struct cudaMemcpy3DParms *p, int async,
                            cudaStream_t stream, int per_thread)
{
    struct fe_side d, s;
    struct fe_box box;
    cudaError_t e = fe_copy3d_params(p, &d, &s, &box);
    if (e != cudaSuccess)
        return e;
    return fe_copy3d(&d, &s, &box, async,
                     async ? fe_stream_wire(stream, per_thread) : 0);
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    return cudart_fe_ret(memcpy3d(p, 0, NULL, 0));
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p,
                              cudaStream_t stream)
{
    return cudart_fe_ret(memcpy3d(p, 1, stream, 0));
}

cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                   cudaStream_t stream)
{
    return cudart_fe_ret(memcpy3d(p, 1, stream, 1));
}

/* Per-thread default stream compilation: the copy goes on the calling
 * thread's stream.  The backend's async copy of pageable memory returns
 * when the synchronous one would (staged for host to device, complete
 * for device to host), so these still behave synchronously. */
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(memcpy2d(dst, dpitch, src, spitch, width, height,
                                  kind, 1, NULL, 1));
}

cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
    return cudart_fe_ret(memcpy3d(p, 1, NULL, 1));
}

cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t wOffset,
                                     size_t hOffset, const void *src,
                                     size_t spitch, size_t width,
                                     size_t height, enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(to_array(dst, wOffset, hOffset, src, spitch, width,
                                  height, kind, 1, NULL, 1));
}

cudaError_t cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch,
                                       cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width,
                                       size_t height, enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(from_array(dst, dpitch, src, wOffset, hOffset, width,
                                    height, kind, 1, NULL, 1));
}

cudaError_t cudaMemcpy2DArrayToArray_ptds(
    cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
    cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t width,
    size_t height, enum cudaMemcpyKind kind)
{
    return cudaMemcpy2DArrayToArray(dst, wOffsetDst, hOffsetDst, src,
                                    wOffsetSrc, hOffsetSrc, width, height,
                                    kind);
}
