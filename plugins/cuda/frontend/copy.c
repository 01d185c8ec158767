/* Copies between the program's memory and device memory (cuda.api,
 * MEMCPY_*; docs/driver.md "Memory"): every 1D, 2D and 3D form is a box,
 * depth slices of rows (one slice of one row for a 1D copy), split into
 * pieces, whole rows of one slice where a row fits: of
 * gvs_remote_piece_len when pipelined, else of at most GVS_BULK_CHUNK
 * bytes.  Host to device, every piece but the last is posted and the
 * last one's reply carries the first failure (the last posted too for a
 * stream-ordered copy the tables prove valid), each piece's bytes sent
 * from the program's memory as they are where they are one span of it
 * (gvs_remote_bulk_h2d, pipelined), else packed; device to host, the
 * pieces are pipelined (gvs_remote_bulk_d2h), each reply's bytes read
 * straight into the program's memory, where each piece lands in one
 * span of it (else each piece is a round trip).  Over shm:// a copy of
 * one span on both sides moves no byte through the connection
 * (gvs_remote_shared_try_copy). */
#include "call.h"

#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs_remote.h"
#include "remote_be.h"

#define PIECE_ASYNC 1u
#define PIECE_LAST 2u
#define PTDS ((uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)

/* A side in an array: its id (0: the side is linear memory) and the
 * box's corner, x in bytes. */
struct arr {
    uint64_t id, x, y, z;
};

/* A box: depth slices of rows rows of width bytes, each linear side's
 * rows pitch bytes and its slices slice bytes apart (an address of the
 * program's memory or of the device's), or a side in an array.  A piece
 * is one slice's rows (depth 1). */
struct rect {
    uint64_t dst, dpitch;
    uint64_t src, spitch;
    uint64_t width, rows;
    uint64_t depth, dslice, sslice;
    struct arr da, sa;
};

/* Where a copy of a box has come to: slice, row, column. */
struct at {
    uint64_t slice, row, col;
};

/* The bytes of r from a on. */
static uint64_t remaining(const struct rect *r, const struct at *a)
{
    return ((r->depth - a->slice) * r->rows - a->row) * r->width - a->col;
}

/* At most how many bytes the pipelined piece of r starting at a holds:
 * gvs_remote_piece_len, or where rows are shorter, the whole rows that
 * reach it (under 2 MiB).  Fewer rows, short of 1 MiB, would be copied
 * where gvsd reads them rather than while it reads the next piece
 * (server/executor.c, bulky), and from the device not through the
 * worker's pinned staging (backend/pinned.c, STAGE_MIN): rows of 4,000
 * bytes would come 262 to a piece, 48 bytes short. */
static uint64_t piece_cap(const struct rect *r, const struct at *a)
{
    uint64_t cap = gvs_remote_piece_len(remaining(r, a));
    if (r->width == 0 || r->width >= cap)
        return cap;
    return (cap + r->width - 1) / r->width * r->width;
}

/* The piece of r starting at a, of at most cap bytes: whole rows of a's
 * slice when a row fits, else a part of one row. */
static void piece(const struct rect *r, const struct at *a, uint64_t cap,
                  struct rect *p)
{
    p->dst = r->dst + a->slice * r->dslice + a->row * r->dpitch + a->col;
    p->src = r->src + a->slice * r->sslice + a->row * r->spitch + a->col;
    p->dpitch = r->dpitch;
    p->spitch = r->spitch;
    p->depth = 1;
    p->dslice = p->sslice = 0;
    p->da = r->da;
    p->sa = r->sa;
    if (r->da.id != 0)
        p->da = (struct arr){r->da.id, r->da.x + a->col, r->da.y + a->row,
                             r->da.z + a->slice};
    if (r->sa.id != 0)
        p->sa = (struct arr){r->sa.id, r->sa.x + a->col, r->sa.y + a->row,
                             r->sa.z + a->slice};
    if (a->col == 0 && r->width <= cap) {
        uint64_t fit = cap / (r->width ? r->width : 1);
        p->width = r->width;
        p->rows = r->rows - a->row < fit ? r->rows - a->row : fit;
    } else {
        p->width = r->width - a->col < cap ? r->width - a->col : cap;
        p->rows = 1;
    }
}

/* Steps a past piece p of r; 0 once r is done. */
static int advance(const struct rect *r, const struct rect *p, struct at *a)
{
    if (a->col == 0 && p->width == r->width) {
        a->row += p->rows;
    } else if ((a->col += p->width) == r->width) {
        a->col = 0;
        a->row++;
    }
    if (a->row == r->rows) {
        a->row = 0;
        a->slice++;
    }
    return a->slice < r->depth;
}

static int empty_box(const struct rect *r)
{
    return r->width == 0 || r->rows == 0 || r->depth == 0;
}

/* A side of the layer's wire form (remote_box.h): an array's, or
 * linear memory at addr with the box's corner there. */
static void put_side(struct apigen_call *c, const struct arr *a,
                     uint64_t addr, uint64_t pitch, uint64_t slice)
{
    apigen_put_u8(c, a->id != 0);
    apigen_put_u64(c, a->id != 0 ? a->id : addr);
    apigen_put_u64(c, a->id != 0 ? 0 : pitch);
    apigen_put_u64(c, a->id != 0 || pitch == 0 ? 0 : slice / pitch);
    apigen_put_u64(c, a->x);
    apigen_put_u64(c, a->y);
    apigen_put_u64(c, a->z);
}

static void put_box(struct apigen_call *c, uint64_t w, uint64_t h,
                    uint64_t d)
{
    apigen_put_u64(c, w);
    apigen_put_u64(c, h);
    apigen_put_u64(c, d);
}

CUresult cuda_fe_copy_begin(struct apigen_call *c, uint64_t stream,
                            uint8_t flags)
{
    CUresult r = cuda_fe_begin(c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(c, stream);
    apigen_put_u8(c, flags);
    return CUDA_SUCCESS;
}

/* How many pieces r is cut into. */
static size_t count_pieces(const struct rect *r)
{
    struct at a = {0, 0, 0};
    struct rect p;
    size_t n = 0;
    do {
        piece(r, &a, piece_cap(r, &a), &p);
        n++;
    } while (advance(r, &p, &a));
    return n;
}

/* Whether every piece of r comes from, or lands in, one span of the
 * program's memory on the side whose pitch is pitch (its rows follow each
 * other there, or a piece is a part of one row). */
static int spans(const struct rect *r, uint64_t pitch)
{
    return !empty_box(r) && (r->rows == 1 || pitch == r->width);
}

/* The bytes rows of width at pitch span: 0 where they cannot be told
 * (a pitch short of the width, an overflow). */
static uint64_t span_of(uint64_t pitch, uint64_t width, uint64_t rows)
{
    if (rows > 1 && (pitch < width || rows - 1 > (UINT64_MAX - width) / pitch))
        return 0;
    return (rows - 1) * (rows > 1 ? pitch : 0) + width;
}

/* A copy within device memory is posted once the layer's tables prove
 * that the driver has nothing to refuse at once: both sides inside
 * allocations of the stream's device, one slice, no capture that could
 * make it a node.  The driver does not make the host wait for a copy
 * between device memory even in its synchronous form (CUDA's rules of
 * synchronization), so neither does gvs; a posted one's failure is the
 * lane's next synchronizing call's. */
static int may_post_d2d(const struct rect *r, uint64_t stream)
{
    CUdevice dev, ddev, sdev;
    if (r->depth != 1 || r->width == 0 || r->rows == 0 ||
        gvs_remote_capturing())
        return 0;
    uint64_t dspan = span_of(r->dpitch, r->width, r->rows);
    uint64_t sspan = span_of(r->spitch, r->width, r->rows);
    return dspan != 0 && sspan != 0 &&
           cuda_fe_mem_device_of(r->dst, dspan, &ddev) &&
           cuda_fe_mem_device_of(r->src, sspan, &sdev) &&
           cuda_fe_stream_device(stream, &dev) == 0 && dev == ddev &&
           dev == sdev;
}

/* A stream-ordered copy to device memory is posted, its last piece too,
 * once the tables prove that the driver has nothing to refuse at once:
 * its rows inside an allocation of the stream's device, one slice, no
 * capture.  The call returns once the bytes have left, as the driver's
 * returns once it staged them, and a program copying block after block
 * keeps the wire busy, no round trip between; a failure is the lane's
 * next synchronizing call's. */
static int may_post_h2d(const struct rect *r, uint64_t stream, int async)
{
    CUdevice dev, ddev;
    if (!async || r->da.id != 0 || r->depth != 1 || r->width == 0 ||
        r->rows == 0 || gvs_remote_capturing())
        return 0;
    uint64_t dspan = span_of(r->dpitch, r->width, r->rows);
    return dspan != 0 && cuda_fe_mem_device_of(r->dst, dspan, &ddev) &&
           cuda_fe_stream_device(stream, &dev) == 0 && dev == ddev;
}

/* A pipelined copy (gvs_remote_bulk_h2d, gvs_remote_bulk_d2h): the
 * pieces of r in order. */
struct pipelined {
    const struct rect *r;
    struct at a;
    uint64_t stream;
    int async;
    size_t pieces;
};

/* The request of an H2D piece p ahead of its bytes: u64 dst, u64 dpitch,
 * u64 width, u64 rows, or into an array (MEMCPY3D_TO) side, box; then
 * the blob's u32 length.  Its op. */
static uint16_t h2d_request(struct apigen_call *c, const struct rect *p)
{
    uint16_t op = CUDA_OP_MEMCPY_H2D;
    if (p->da.id != 0) {
        op = CUDA_OP_MEMCPY3D_TO;
        put_side(c, &p->da, 0, 0, 0);
        put_box(c, p->width, p->rows, 1);
    } else {
        apigen_put_u64(c, p->dst);
        apigen_put_u64(c, p->dpitch);
        apigen_put_u64(c, p->width);
        apigen_put_u64(c, p->rows);
    }
    apigen_put_u32(c, (uint32_t)(p->width * p->rows));
    return op;
}

/* The next piece of a pipelined copy, its request's header (u64 stream,
 * u8 flags: stream-ordered, and last) put into c. */
static struct rect next_piece(struct pipelined *d, struct apigen_call *c,
                              uint8_t last)
{
    struct rect p;
    piece(d->r, &d->a, piece_cap(d->r, &d->a), &p);
    (void)advance(d->r, &p, &d->a);
    apigen_put_u64(c, d->stream);
    apigen_put_u8(c, (uint8_t)((d->async ? PIECE_ASYNC : 0) | last));
    return p;
}

static int h2d_piece(void *arg, size_t i, struct gvs_buf *hdr,
                     const void **src, size_t *len)
{
    const struct pipelined *d = arg;
    struct apigen_call c = {hdr, NULL, 0};
    struct rect p =
        next_piece(arg, &c, i + 1 == d->pieces ? PIECE_LAST : 0);
    (void)h2d_request(&c, &p);
    *src = (const void *)(uintptr_t)p.src;
    *len = p.width * p.rows;
    return c.rc;
}

/* Every piece's bytes straight from the program's memory; a
 * stream-ordered copy the tables prove valid posted whole. */
static CUresult h2d_pipelined(const struct rect *r, uint64_t stream,
                              int async)
{
    struct pipelined d = {r, {0, 0, 0}, stream, async, count_pieces(r)};
    uint16_t op = r->da.id != 0 ? CUDA_OP_MEMCPY3D_TO : CUDA_OP_MEMCPY_H2D;
    struct gvs_remote_h2d o = {&cuda_fe_remote_api, op, d.pieces, h2d_piece,
                               &d, may_post_h2d(r, stream, async) ? op : 0};
    return (CUresult)gvs_remote_bulk_h2d(&o);
}

/* Request: header, u64 dst, u64 dpitch, u64 width, u64 rows, blob the
 * rows packed; into an array (MEMCPY3D_TO), header, side, box, blob.
 * Pipelined when every piece comes from one span; else each piece's
 * rows are packed into its request. */
static CUresult h2d(const struct rect *r, uint64_t stream, int async)
{
    if (spans(r, r->spitch))
        return cuda_fe_initialized() ? h2d_pipelined(r, stream, async)
                                     : CUDA_ERROR_NOT_INITIALIZED;
    struct at a = {0, 0, 0};
    int empty = empty_box(r);
    for (;;) {
        struct apigen_call c;
        struct rect p = *r;
        uint8_t *out = NULL;
        if (!empty)
            piece(r, &a, GVS_BULK_CHUNK, &p);
        int last = empty || !advance(r, &p, &a);
        CUresult e = cuda_fe_copy_begin(&c, stream,
                           (uint8_t)((async ? PIECE_ASYNC : 0) |
                                     (last ? PIECE_LAST : 0)));
        if (e != CUDA_SUCCESS)
            return e;
        uint16_t op = h2d_request(&c, &p);
        if (c.rc == 0)
            c.rc = gvs_buf_reserve(c.put, p.width * p.rows, &out);
        for (uint64_t i = 0; c.rc == 0 && i < p.rows; i++)
            memcpy(out + i * p.width,
                   (const void *)(uintptr_t)(p.src + i * p.spitch), p.width);
        if (last) {
            e = cuda_fe_run(&c, op, APIGEN_DEVICE);
            return cuda_fe_end(&c, e);
        }
        e = cuda_fe_post(&c, op, APIGEN_DEVICE);
        if (e != CUDA_SUCCESS)
            return e;
    }
}

/* The request of a D2H piece p: header, then u64 src, u64 spitch, u64
 * width, u64 rows, or from an array (MEMCPY3D_FROM) side, box; its op. */
static uint16_t d2h_request(struct apigen_call *c, const struct rect *p)
{
    if (p->sa.id != 0) {
        put_side(c, &p->sa, 0, 0, 0);
        put_box(c, p->width, p->rows, 1);
        return CUDA_OP_MEMCPY3D_FROM;
    }
    apigen_put_u64(c, p->src);
    apigen_put_u64(c, p->spitch);
    apigen_put_u64(c, p->width);
    apigen_put_u64(c, p->rows);
    return CUDA_OP_MEMCPY_D2H;
}

/* A D2H piece is never marked last: each is a round trip of its own. */
static int d2h_piece(void *arg, size_t i, struct gvs_buf *req, void **dst,
                     size_t *len)
{
    struct apigen_call c = {req, NULL, 0};
    (void)i;
    struct rect p = next_piece(arg, &c, 0);
    (void)d2h_request(&c, &p);
    *dst = (void *)(uintptr_t)p.dst;
    *len = p.width * p.rows;
    return c.rc;
}

/* Every piece's bytes straight into the program's memory. */
static CUresult d2h_pipelined(const struct rect *r, uint64_t stream,
                              int async)
{
    struct pipelined d = {r, {0, 0, 0}, stream, async, count_pieces(r)};
    struct gvs_remote_d2h o = {&cuda_fe_remote_api,
                               r->sa.id != 0 ? CUDA_OP_MEMCPY3D_FROM
                                             : CUDA_OP_MEMCPY_D2H,
                               d.pieces, d2h_piece, &d};
    return (CUresult)gvs_remote_bulk_d2h(&o);
}

/* Request: header, u64 src, u64 spitch, u64 width, u64 rows; from an
 * array (MEMCPY3D_FROM), header, side, box.  Reply: i32, blob the rows
 * packed.  Pipelined when every piece lands in one span; else each
 * piece is a round trip, its rows copied out of the reply. */
static CUresult d2h(const struct rect *r, uint64_t stream, int async)
{
    if (spans(r, r->dpitch))
        return cuda_fe_initialized() ? d2h_pipelined(r, stream, async)
                                     : CUDA_ERROR_NOT_INITIALIZED;
    struct at a = {0, 0, 0};
    int empty = empty_box(r);
    for (;;) {
        struct apigen_call c;
        struct rect p = *r;
        const uint8_t *bytes;
        size_t got = 0;
        if (!empty)
            piece(r, &a, GVS_BULK_CHUNK, &p);
        CUresult e = cuda_fe_copy_begin(&c, stream, async ? PIECE_ASYNC : 0);
        if (e != CUDA_SUCCESS)
            return e;
        uint16_t op = d2h_request(&c, &p);
        e = cuda_fe_run(&c, op, APIGEN_DEVICE);
        if (e == CUDA_SUCCESS)
            apigen_get_blob(&c, &bytes, &got);
        if (e == CUDA_SUCCESS && c.rc == 0 && got != p.width * p.rows)
            c.rc = GVS_E_PROTO;
        e = cuda_fe_end(&c, e);
        if (e != CUDA_SUCCESS)
            return e;
        for (uint64_t i = 0; i < p.rows; i++)
            memcpy((void *)(uintptr_t)(p.dst + i * p.dpitch),
                   bytes + i * p.width, p.width);
        if (empty || !advance(r, &p, &a))
            return CUDA_SUCCESS;
    }
}

/* Request: header, u64 dst, u64 dpitch, u64 src, u64 spitch, u64 width,
 * u64 rows.  Reply: i32.  One request a slice, never cut: the bytes stay
 * on the device. */
static CUresult d2d(const struct rect *r, uint64_t stream, int async)
{
    int post = may_post_d2d(r, stream); /* one slice */
    uint64_t n = r->depth ? r->depth : 1;
    for (uint64_t z = 0; z < n; z++) {
        struct apigen_call c;
        CUresult e = cuda_fe_copy_begin(&c, stream, async ? PIECE_ASYNC : 0);
        if (e != CUDA_SUCCESS)
            return e;
        apigen_put_u64(&c, r->dst + z * r->dslice);
        apigen_put_u64(&c, r->dpitch);
        apigen_put_u64(&c, r->src + z * r->sslice);
        apigen_put_u64(&c, r->spitch);
        apigen_put_u64(&c, r->depth ? r->width : 0);
        apigen_put_u64(&c, r->rows);
        if (post)
            return cuda_fe_post(&c, CUDA_OP_MEMCPY_D2D, APIGEN_DEVICE);
        e = cuda_fe_end(&c, cuda_fe_run(&c, CUDA_OP_MEMCPY_D2D,
                                        APIGEN_DEVICE));
        if (e != CUDA_SUCCESS)
            return e;
    }
    return CUDA_SUCCESS;
}

/* Request: header, side dst, side src, box.  Reply: i32.  The whole box
 * at once: the bytes stay on the device. */
static CUresult with_array(const struct rect *r, uint64_t stream, int async)
{
    struct apigen_call c;
    CUresult e = cuda_fe_copy_begin(&c, stream, async ? PIECE_ASYNC : 0);
    if (e != CUDA_SUCCESS)
        return e;
    put_side(&c, &r->da, r->dst, r->dpitch, r->dslice);
    put_side(&c, &r->sa, r->src, r->spitch, r->sslice);
    put_box(&c, r->width, r->rows, r->depth);
    return cuda_fe_end(&c, cuda_fe_run(&c, CUDA_OP_MEMCPY3D_DEV,
                                       APIGEN_DEVICE));
}

static CUresult h2h(const struct rect *r)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    for (uint64_t z = 0; z < r->depth; z++)
        for (uint64_t i = 0; i < r->rows; i++)
            memmove((void *)(uintptr_t)(r->dst + z * r->dslice +
                                        i * r->dpitch),
                    (const void *)(uintptr_t)(r->src + z * r->sslice +
                                              i * r->spitch),
                    r->width);
    return CUDA_SUCCESS;
}

/* A copy between linear device memory and host memory of one span on
 * both sides, over shm://: one DMA from or to shared memory, or the
 * staging pipeline for pageable memory (gvs_remote_shared_try_copy), no
 * byte through the connection.  A synchronous copy on the per-thread
 * stream is ordered there and waited for, as is one the tables prove
 * valid on the legacy stream.  CUDA_ERROR_NOT_SUPPORTED
 * when neither can be used: the caller sends the bytes. */
static CUresult shared(const struct rect *r, int to_dev, uint64_t stream,
                       int async)
{
    if (r->da.id != 0 || r->sa.id != 0 || r->depth != 1 ||
        (r->rows > 1 && (r->dpitch != r->width || r->spitch != r->width)) ||
        empty_box(r) || !cuda_fe_initialized())
        return CUDA_ERROR_NOT_SUPPORTED;
    unsigned flags = async            ? GVS_REMOTE_SHARED_ON_STREAM
                     : stream == PTDS ? GVS_REMOTE_SHARED_ON_STREAM |
                                            GVS_REMOTE_SHARED_WAIT
                                      : 0;
    uint64_t host = to_dev ? r->src : r->dst, dev = to_dev ? r->dst : r->src;
    size_t len = r->width * r->rows;
    CUdevice mdev, sdev;
    /* Posted as d2d's copies are (may_post_d2d); a synchronous one is
     * then ordered on its default stream and waited for there. */
    if (!gvs_remote_capturing() && cuda_fe_mem_device_of(dev, len, &mdev) &&
        cuda_fe_stream_device(stream, &sdev) == 0 && sdev == mdev)
        flags = (async ? GVS_REMOTE_SHARED_ON_STREAM
                       : GVS_REMOTE_SHARED_ON_STREAM |
                             GVS_REMOTE_SHARED_WAIT) |
                GVS_REMOTE_SHARED_PROVEN;
    return (CUresult)gvs_remote_shared_try_copy(&cuda_fe_shared, stream,
                                                flags, to_dev, dev,
                                                (void *)(uintptr_t)host, len);
}

/* A copy whose sides are in device memory or not as dst_dev and src_dev
 * say; a host side must be a real address. */
static CUresult copy(const struct rect *r, int dst_dev, int src_dev,
                     uint64_t stream, int async)
{
    if ((!dst_dev && r->dst == 0 && !empty_box(r)) ||
        (!src_dev && r->src == 0 && !empty_box(r)))
        return CUDA_ERROR_INVALID_VALUE;
    int arrays = r->da.id != 0 || r->sa.id != 0;
    if (arrays && empty_box(r))
        return cuda_fe_initialized() ? CUDA_SUCCESS
                                     : CUDA_ERROR_NOT_INITIALIZED;
    if (dst_dev && src_dev)
        return arrays ? with_array(r, stream, async) : d2d(r, stream, async);
    if (dst_dev != src_dev) {
        CUresult e = shared(r, dst_dev, stream, async);
        if (e != CUDA_ERROR_NOT_SUPPORTED)
            return e;
    }
    if (dst_dev)
        return h2d(r, stream, async);
    if (src_dev)
        return d2h(r, stream, async);
    return h2h(r);
}

static CUresult linear(uint64_t dst, int dst_dev, uint64_t src, int src_dev,
                       size_t n, uint64_t stream, int async)
{
    const struct rect r = {dst, n, src, n, n, 1, 1, 0, 0, {0}, {0}};
    return copy(&r, dst_dev, src_dev, stream, async);
}

/* One side of a 1D copy with an array: an array at a byte offset, or
 * linear memory (device memory or not). */
struct end1 {
    CUarray array;
    size_t offset;
    uint64_t addr;
    int dev;
};

static struct end1 in_array(CUarray a, size_t offset)
{
    return (struct end1){a, offset, 0, 1};
}

static struct end1 in_memory(uint64_t addr, int dev)
{
    return (struct end1){NULL, 0, addr, dev};
}

/* n bytes from one row of an array to another side.  An array's handle
 * is its id. */
static CUresult one_row(struct end1 d, struct end1 s, size_t n,
                        uint64_t stream, int async)
{
    struct rect r = {d.addr, n, s.addr, n, n, 1, 1, 0, 0, {0}, {0}};
    r.da = (struct arr){(uint64_t)(uintptr_t)d.array, d.offset, 0, 0};
    r.sa = (struct arr){(uint64_t)(uintptr_t)s.array, s.offset, 0, 0};
    return copy(&r, d.dev, s.dev, stream, async);
}

/* A unified-address side: device memory when it lies in a range known
 * here. */
static int dev(uint64_t p)
{
    return cuda_fe_mem_is_device(p);
}

/* One side of a CUDA_MEMCPY2D or CUDA_MEMCPY3D: its address at (x, y,
 * z), slices height rows apart, or its array; whether it is device
 * memory (an array is). */
static CUresult side(CUmemorytype type, const void *host, CUdeviceptr d,
                     CUarray array, size_t x, size_t y, size_t z,
                     size_t pitch, size_t height, uint64_t *addr,
                     struct arr *a, int *is_dev)
{
    uint64_t base;
    *a = (struct arr){0, 0, 0, 0};
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        base = (uint64_t)(uintptr_t)host;
        *is_dev = 0;
        break;
    case CU_MEMORYTYPE_DEVICE:
        base = d;
        *is_dev = 1;
        break;
    case CU_MEMORYTYPE_UNIFIED:
        base = d;
        *is_dev = dev(d);
        break;
    case CU_MEMORYTYPE_ARRAY:
        if (array == NULL)
            return CUDA_ERROR_INVALID_VALUE;
        *a = (struct arr){(uint64_t)(uintptr_t)array, x, y, z};
        *addr = 0;
        *is_dev = 1;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    *addr = base + (z * height + y) * pitch + x;
    return CUDA_SUCCESS;
}

/* A box whose slices follow each other on both sides is rows of one
 * slice: fewer, larger pieces. */
static void merge_slices(struct rect *r)
{
    if (r->depth > 1 && r->da.id == 0 && r->sa.id == 0 &&
        r->dpitch >= r->width && r->spitch >= r->width &&
        r->dslice == r->rows * r->dpitch && r->sslice == r->rows * r->spitch) {
        r->rows *= r->depth;
        r->depth = 1;
    }
    if (r->depth == 1)
        r->dslice = r->sslice = 0;
}

/* Whether a linear side's pitch cannot hold the box's rows (an array's
 * pitch is not one). */
static int narrow(CUmemorytype type, size_t pitch, size_t width)
{
    return type != CU_MEMORYTYPE_ARRAY && width > pitch;
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, uint64_t stream, int async)
{
    struct rect r;
    int dd = 0, sd = 0;
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->Height > 1 &&
        (narrow(p->srcMemoryType, p->srcPitch, p->WidthInBytes) ||
         narrow(p->dstMemoryType, p->dstPitch, p->WidthInBytes)))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult e = side(p->dstMemoryType, p->dstHost, p->dstDevice,
                      p->dstArray, p->dstXInBytes, p->dstY, 0, p->dstPitch,
                      0, &r.dst, &r.da, &dd);
    if (e == CUDA_SUCCESS)
        e = side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray,
                 p->srcXInBytes, p->srcY, 0, p->srcPitch, 0, &r.src, &r.sa,
                 &sd);
    if (e != CUDA_SUCCESS)
        return e;
    r.dpitch = p->dstPitch;
    r.spitch = p->srcPitch;
    r.width = p->WidthInBytes;
    r.rows = p->Height;
    r.depth = 1;
    r.dslice = r.sslice = 0;
    return copy(&r, dd, sd, stream, async);
}

/* As the driver checks a 3D copy: pitches that hold a row, slice heights
 * that hold the box's rows, the reserved fields NULL. */
static CUresult copy3d(const CUDA_MEMCPY3D *p, uint64_t stream, int async)
{
    struct rect r;
    int dd = 0, sd = 0;
    if (p == NULL || p->reserved0 != NULL || p->reserved1 != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int rows = p->Height > 1 || p->Depth > 1;
    if (rows && (narrow(p->srcMemoryType, p->srcPitch, p->WidthInBytes) ||
                 narrow(p->dstMemoryType, p->dstPitch, p->WidthInBytes)))
        return CUDA_ERROR_INVALID_VALUE;
    if (p->Depth > 1 &&
        (narrow(p->srcMemoryType, p->srcHeight, p->Height) ||
         narrow(p->dstMemoryType, p->dstHeight, p->Height)))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult e = side(p->dstMemoryType, p->dstHost, p->dstDevice,
                      p->dstArray, p->dstXInBytes, p->dstY, p->dstZ,
                      p->dstPitch, p->dstHeight, &r.dst, &r.da, &dd);
    if (e == CUDA_SUCCESS)
        e = side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray,
                 p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch,
                 p->srcHeight, &r.src, &r.sa, &sd);
    if (e != CUDA_SUCCESS)
        return e;
    r.dpitch = p->dstPitch;
    r.spitch = p->srcPitch;
    r.width = p->WidthInBytes;
    r.rows = p->Height;
    r.depth = p->Depth;
    r.dslice = (uint64_t)p->dstPitch * p->dstHeight;
    r.sslice = (uint64_t)p->srcPitch * p->srcHeight;
    merge_slices(&r);
    return copy(&r, dd, sd, stream, async);
}

static uint64_t sw(CUstream s, int per_thread)
{
    return cuda_fe_stream_wire(s, per_thread);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return linear(dst, 1, (uint64_t)(uintptr_t)src, 0, n, 0, 0);
}

CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
    return linear(dst, 1, (uint64_t)(uintptr_t)src, 0, n, PTDS, 0);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return linear((uint64_t)(uintptr_t)dst, 0, src, 1, n, 0, 0);
}

CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    return linear((uint64_t)(uintptr_t)dst, 0, src, 1, n, PTDS, 0);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return linear(dst, 1, src, 1, n, 0, 0);
}

CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return linear(dst, 1, src, 1, n, PTDS, 0);
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return linear(dst, dev(dst), src, dev(src), n, 0, 0);
}

CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return linear(dst, dev(dst), src, dev(src), n, PTDS, 0);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
                              CUstream s)
{
    return linear(dst, 1, (uint64_t)(uintptr_t)src, 0, n, sw(s, 0), 1);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src,
                                   size_t n, CUstream s)
{
    return linear(dst, 1, (uint64_t)(uintptr_t)src, 0, n, sw(s, 1), 1);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
                              CUstream s)
{
    return linear((uint64_t)(uintptr_t)dst, 0, src, 1, n, sw(s, 0), 1);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n,
                                   CUstream s)
{
    return linear((uint64_t)(uintptr_t)dst, 0, src, 1, n, sw(s, 1), 1);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
                              CUstream s)
{
    return linear(dst, 1, src, 1, n, sw(s, 0), 1);
}

CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src,
                                   size_t n, CUstream s)
{
    return linear(dst, 1, src, 1, n, sw(s, 1), 1);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
                       CUstream s)
{
    return linear(dst, dev(dst), src, dev(src), n, sw(s, 0), 1);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
                            CUstream s)
{
    return linear(dst, dev(dst), src, dev(src), n, sw(s, 1), 1);
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
    return copy2d(pCopy, 0, 0);
}

CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    return copy2d(pCopy, PTDS, 0);
}

/* The backend's driver copies any alignment. */
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
    return copy2d(pCopy, 0, 0);
}

CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    return copy2d(pCopy, PTDS, 0);
}

CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream s)
{
    return copy2d(pCopy, sw(s, 0), 1);
}

CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream s)
{
    return copy2d(pCopy, sw(s, 1), 1);
}

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
    return copy3d(pCopy, 0, 0);
}

CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{
    return copy3d(pCopy, PTDS, 0);
}

CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream s)
{
    return copy3d(pCopy, sw(s, 0), 1);
}

CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream s)
{
    return copy3d(pCopy, sw(s, 1), 1);
}

/* A 3D copy between contexts is a 3D copy: the session's addresses are
 * unified across its devices, and the backend's driver copies between
 * them in the lane's context.  A side's context (ignored for an array)
 * must be one of the session's, or none. */
static CUresult copy3d_peer(const CUDA_MEMCPY3D_PEER *p, uint64_t stream,
                            int async)
{
    CUdevice dev;
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if ((p->srcMemoryType != CU_MEMORYTYPE_ARRAY && p->srcContext != NULL &&
         cuda_fe_ctx_device_of(p->srcContext, &dev) != 0) ||
        (p->dstMemoryType != CU_MEMORYTYPE_ARRAY && p->dstContext != NULL &&
         cuda_fe_ctx_device_of(p->dstContext, &dev) != 0))
        return CUDA_ERROR_INVALID_CONTEXT;
    const CUDA_MEMCPY3D c = {
        .srcXInBytes = p->srcXInBytes, .srcY = p->srcY, .srcZ = p->srcZ,
        .srcLOD = p->srcLOD, .srcMemoryType = p->srcMemoryType,
        .srcHost = p->srcHost, .srcDevice = p->srcDevice,
        .srcArray = p->srcArray, .srcPitch = p->srcPitch,
        .srcHeight = p->srcHeight,
        .dstXInBytes = p->dstXInBytes, .dstY = p->dstY, .dstZ = p->dstZ,
        .dstLOD = p->dstLOD, .dstMemoryType = p->dstMemoryType,
        .dstHost = p->dstHost, .dstDevice = p->dstDevice,
        .dstArray = p->dstArray, .dstPitch = p->dstPitch,
        .dstHeight = p->dstHeight,
        .WidthInBytes = p->WidthInBytes, .Height = p->Height,
        .Depth = p->Depth,
    };
    return copy3d(&c, stream, async);
}

CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy)
{
    return copy3d_peer(pCopy, 0, 0);
}

CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *pCopy)
{
    return copy3d_peer(pCopy, PTDS, 0);
}

CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream s)
{
    return copy3d_peer(pCopy, sw(s, 0), 1);
}

CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *pCopy,
                                  CUstream s)
{
    return copy3d_peer(pCopy, sw(s, 1), 1);
}

#define HOST(p) in_memory((uint64_t)(uintptr_t)(p), 0)

CUresult cuMemcpyHtoA_v2(CUarray dst, size_t off, const void *src, size_t n)
{
    return one_row(in_array(dst, off), HOST(src), n, 0, 0);
}

CUresult cuMemcpyHtoA_v2_ptds(CUarray dst, size_t off, const void *src,
                              size_t n)
{
    return one_row(in_array(dst, off), HOST(src), n, PTDS, 0);
}

CUresult cuMemcpyAtoH_v2(void *dst, CUarray src, size_t off, size_t n)
{
    return one_row(HOST(dst), in_array(src, off), n, 0, 0);
}

CUresult cuMemcpyAtoH_v2_ptds(void *dst, CUarray src, size_t off, size_t n)
{
    return one_row(HOST(dst), in_array(src, off), n, PTDS, 0);
}

CUresult cuMemcpyDtoA_v2(CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
    return one_row(in_array(dst, off), in_memory(src, 1), n, 0, 0);
}

CUresult cuMemcpyDtoA_v2_ptds(CUarray dst, size_t off, CUdeviceptr src,
                              size_t n)
{
    return one_row(in_array(dst, off), in_memory(src, 1), n, PTDS, 0);
}

CUresult cuMemcpyAtoD_v2(CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
    return one_row(in_memory(dst, 1), in_array(src, off), n, 0, 0);
}

CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr dst, CUarray src, size_t off,
                              size_t n)
{
    return one_row(in_memory(dst, 1), in_array(src, off), n, PTDS, 0);
}

CUresult cuMemcpyAtoA_v2(CUarray dst, size_t doff, CUarray src, size_t soff,
                         size_t n)
{
    return one_row(in_array(dst, doff), in_array(src, soff), n, 0, 0);
}

CUresult cuMemcpyAtoA_v2_ptds(CUarray dst, size_t doff, CUarray src,
                              size_t soff, size_t n)
{
    return one_row(in_array(dst, doff), in_array(src, soff), n, PTDS, 0);
}

CUresult cuMemcpyHtoAAsync_v2(CUarray dst, size_t off, const void *src,
                              size_t n, CUstream s)
{
    return one_row(in_array(dst, off), HOST(src), n, sw(s, 0), 1);
}

CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray dst, size_t off, const void *src,
                                   size_t n, CUstream s)
{
    return one_row(in_array(dst, off), HOST(src), n, sw(s, 1), 1);
}

CUresult cuMemcpyAtoHAsync_v2(void *dst, CUarray src, size_t off, size_t n,
                              CUstream s)
{
    return one_row(HOST(dst), in_array(src, off), n, sw(s, 0), 1);
}

CUresult cuMemcpyAtoHAsync_v2_ptsz(void *dst, CUarray src, size_t off,
                                   size_t n, CUstream s)
{
    return one_row(HOST(dst), in_array(src, off), n, sw(s, 1), 1);
}
