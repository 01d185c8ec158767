/*
 * The deprecated 1D array copies: cudaMemcpyToArray, cudaMemcpyFromArray,
 * cudaMemcpyArrayToArray.  Each copies count bytes as one run through
 * the array's rows, from byte wOffset of row hOffset on, wrapping at the
 * end of a row.  The run is cut where a row of either array ends into
 * 2D copies of the copy engine (copy3d.c): a run that starts at a row's
 * start goes as whole rows at once.  The run must fit the array, checked
 * before anything is copied.
 */
#include "mem3d.h"

#include "streams.h"

#pragma GCC visibility push(default)
cudaError_t cudaMemcpyToArray_ptds(cudaArray_t dst, size_t wOffset,
                                   size_t hOffset, const void *src,
                                   size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromArray_ptds(void *dst, cudaArray_const_t src,
                                     size_t wOffset, size_t hOffset,
                                     size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
                                        size_t hOffsetDst,
                                        cudaArray_const_t src,
                                        size_t wOffsetSrc, size_t hOffsetSrc,
                                        size_t count,
                                        enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset,
                                        size_t hOffset, const void *src,
                                        size_t count, enum cudaMemcpyKind kind,
                                        cudaStream_t stream);
cudaError_t cudaMemcpyFromArrayAsync_ptsz(void *dst, cudaArray_const_t src,
                                          size_t wOffset, size_t hOffset,
                                          size_t count,
                                          enum cudaMemcpyKind kind,
                                          cudaStream_t stream);
#pragma GCC visibility pop

/* One end of a run: an array (row bytes, rows, position) or linear
 * memory (row 0 = unbounded, the address advancing). */
struct end {
    struct fe_side side;
    size_t row, rows;
};

static cudaError_t array_end(cudaArray_const_t a, size_t x, size_t y,
                             size_t count, struct end *out)
{
    uint64_t id;
    size_t elem, at, limit;
    cudaError_t e = fe_array_lookup(a, &id, &elem);
    if (e == cudaSuccess)
        e = fe_array_rows(a, &out->row, &out->rows);
    if (e != cudaSuccess)
        return e;
    if (x >= out->row || y >= out->rows ||
        __builtin_mul_overflow(y, out->row, &at) ||
        __builtin_add_overflow(at, x, &at) ||
        __builtin_add_overflow(at, count, &at) ||
        __builtin_mul_overflow(out->row, out->rows, &limit) || at > limit)
        return cudaErrorInvalidValue;
    out->side = (struct fe_side){FE_SIDE_ARRAY, id, 0, 0, x, y, 0};
    return cudaSuccess;
}

static struct end linear_end(const void *p, enum cudaMemcpyKind kind,
                             int is_dst)
{
    return (struct end){
        {fe_ptr_side(p, kind, is_dst), (uint64_t)(uintptr_t)p, 0, 0, 0, 0, 0},
        0, 0};
}

static size_t room(const struct end *e)
{
    return e->row ? e->row - e->side.x : SIZE_MAX;
}

/* Whether whole rows of width w can go at once from this end. */
static int rows_fit(const struct end *e, size_t w)
{
    return e->row == 0 || (e->side.x == 0 && e->row == w);
}

static void advance(struct end *e, size_t w, size_t h)
{
    if (e->row == 0) {
        e->side.addr += (uint64_t)w * h;
        return;
    }
    e->side.x += w;
    if (e->side.x == e->row) {
        e->side.x = 0;
        e->side.y += 1;
    }
    if (h > 1)
        e->side.y += h - 1;
}

static cudaError_t run(struct end *d, struct end *s, size_t count,
                       enum cudaMemcpyKind kind, int async, cudaStream_t stream,
                       int per_thread)
{
    if (!fe_kind_valid(kind))
        return cudaErrorInvalidMemcpyDirection;
    uint64_t wire = async ? fe_stream_wire(stream, per_thread) : 0;
    while (count > 0) {
        size_t w = count, h = 1;
        if (room(d) < w)
            w = room(d);
        if (room(s) < w)
            w = room(s);
        size_t row = d->row ? d->row : s->row;
        if (w == row && count >= 2 * row && rows_fit(d, row) &&
            rows_fit(s, row))
            h = count / row;
        /* Linear ends pitch their rows as the array packs them. */
        struct fe_side ds = d->side, ss = s->side;
        ds.pitch = d->row ? 0 : w;
        ss.pitch = s->row ? 0 : w;
        ds.ysize = d->row ? 0 : h;
        ss.ysize = s->row ? 0 : h;
        cudaError_t e = fe_copy3d(&ds, &ss, &(struct fe_box){w, h, 1}, async,
                                  wire);
        if (e != cudaSuccess)
            return e;
        advance(d, w, h);
        advance(s, w, h);
        count -= w * h;
    }
    return cudaSuccess;
}

static cudaError_t to_array(cudaArray_t dst, size_t wOffset, size_t hOffset,
                            const void *src, size_t count,
                            enum cudaMemcpyKind kind, int async,
                            cudaStream_t stream, int per_thread)
{
    struct end d, s = linear_end(src, kind, 0);
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    cudaError_t e = array_end(dst, wOffset, hOffset, count, &d);
    if (e != cudaSuccess)
        return e;
    return run(&d, &s, count, kind, async, stream, per_thread);
}

static cudaError_t from_array(void *dst, cudaArray_const_t src,
                              size_t wOffset, size_t hOffset, size_t count,
                              enum cudaMemcpyKind kind, int async,
                              cudaStream_t stream, int per_thread)
{
    struct end s, d = linear_end(dst, kind, 1);
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    cudaError_t e = array_end(src, wOffset, hOffset, count, &s);
    if (e != cudaSuccess)
        return e;
    return run(&d, &s, count, kind, async, stream, per_thread);
}

static cudaError_t array_to_array(cudaArray_t dst, size_t wOffsetDst,
                                  size_t hOffsetDst, cudaArray_const_t src,
                                  size_t wOffsetSrc, size_t hOffsetSrc,
                                  size_t count, enum cudaMemcpyKind kind)
{
    struct end d, s;
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    cudaError_t e = array_end(dst, wOffsetDst, hOffsetDst, count, &d);
    if (e == cudaSuccess)
        e = array_end(src, wOffsetSrc, hOffsetSrc, count, &s);
    if (e != cudaSuccess)
        return e;
    return run(&d, &s, count, kind, 0, NULL, 0);
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                              const void *src, size_t count,
                              enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(
        to_array(dst, wOffset, hOffset, src, count, kind, 0, NULL, 0));
}

cudaError_t cudaMemcpyToArray_ptds(cudaArray_t dst, size_t wOffset,
                                   size_t hOffset, const void *src,
                                   size_t count, enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(
        to_array(dst, wOffset, hOffset, src, count, kind, 0, NULL, 0));
}

cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset,
                                   size_t hOffset, const void *src,
                                   size_t count, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    return cudart_fe_ret(
        to_array(dst, wOffset, hOffset, src, count, kind, 1, stream, 0));
}

cudaError_t cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset,
                                        size_t hOffset, const void *src,
                                        size_t count, enum cudaMemcpyKind kind,
                                        cudaStream_t stream)
{
    return cudart_fe_ret(
        to_array(dst, wOffset, hOffset, src, count, kind, 1, stream, 1));
}

cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src,
                                size_t wOffset, size_t hOffset, size_t count,
                                enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(
        from_array(dst, src, wOffset, hOffset, count, kind, 0, NULL, 0));
}

cudaError_t cudaMemcpyFromArray_ptds(void *dst, cudaArray_const_t src,
                                     size_t wOffset, size_t hOffset,
                                     size_t count, enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(
        from_array(dst, src, wOffset, hOffset, count, kind, 0, NULL, 0));
}

cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src,
                                     size_t wOffset, size_t hOffset,
                                     size_t count, enum cudaMemcpyKind kind,
                                     cudaStream_t stream)
{
    return cudart_fe_ret(
        from_array(dst, src, wOffset, hOffset, count, kind, 1, stream, 0));
}

cudaError_t cudaMemcpyFromArrayAsync_ptsz(void *dst, cudaArray_const_t src,
                                          size_t wOffset, size_t hOffset,
                                          size_t count,
                                          enum cudaMemcpyKind kind,
                                          cudaStream_t stream)
{
    return cudart_fe_ret(
        from_array(dst, src, wOffset, hOffset, count, kind, 1, stream, 1));
}

cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst,
                                   size_t hOffsetDst, cudaArray_const_t src,
                                   size_t wOffsetSrc, size_t hOffsetSrc,
                                   size_t count, enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(array_to_array(dst, wOffsetDst, hOffsetDst, src,
                                        wOffsetSrc, hOffsetSrc, count, kind));
}

cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
                                        size_t hOffsetDst,
                                        cudaArray_const_t src,
                                        size_t wOffsetSrc, size_t hOffsetSrc,
                                        size_t count, enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(array_to_array(dst, wOffsetDst, hOffsetDst, src,
                                        wOffsetSrc, hOffsetSrc, count, kind));
}
