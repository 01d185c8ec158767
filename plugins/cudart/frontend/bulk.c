#include "bulk.h"

#include "gvs_remote.h"

static int put_stream(struct gvs_buf *b, const struct fe_bulk_op *o)
{
    return o->has_stream ? gvs_buf_put_u64(b, o->stream) : 0;
}

/* How many pieces of gvs_remote_piece_len a copy of count bytes is. */
static size_t pieces(size_t count)
{
    size_t n = 0;
    for (size_t rem = count; rem > 0; rem -= gvs_remote_piece_len(rem))
        n++;
    return n;
}

/* A piece's request: (stream), u64 dst, u32 len, the bytes.  Pieces
 * are asked for in order, from off on. */
struct h2d {
    const struct fe_bulk_op *o;
    uint64_t dst;
    const uint8_t *src;
    size_t count;
    size_t off;
};

static int h2d_piece(void *arg, size_t i, struct gvs_buf *hdr,
                     const void **src, size_t *len)
{
    struct h2d *h = arg;
    (void)i;
    *src = h->src + h->off;
    *len = gvs_remote_piece_len(h->count - h->off);
    int rc = put_stream(hdr, h->o);
    if (rc == 0)
        rc = gvs_buf_put_u64(hdr, h->dst + h->off);
    if (rc == 0)
        rc = gvs_buf_put_u32(hdr, (uint32_t)*len);
    h->off += *len;
    return rc;
}

cudaError_t fe_bulk_h2d(const struct fe_bulk_op *o, uint64_t dst,
                        const void *src, size_t count)
{
    struct h2d h = {o, dst, src, count, 0};
    const struct gvs_remote_h2d r = {&fe_remote_api, o->op,
                                     pieces(count), h2d_piece, &h,
                                     o->post_op};
    return (cudaError_t)gvs_remote_bulk_h2d(&r);
}

/* A piece's request: (stream), u64 src, u64 len.  Pieces are asked for
 * in order, from off on. */
struct d2h {
    const struct fe_bulk_op *o;
    uint8_t *dst;
    uint64_t src;
    size_t count;
    size_t off;
};

static int d2h_piece(void *arg, size_t i, struct gvs_buf *req, void **dst,
                     size_t *len)
{
    struct d2h *d = arg;
    (void)i;
    *dst = d->dst + d->off;
    *len = gvs_remote_piece_len(d->count - d->off);
    int rc = put_stream(req, d->o);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, d->src + d->off);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, *len);
    d->off += *len;
    return rc;
}

cudaError_t fe_bulk_d2h(const struct fe_bulk_op *o, void *dst, uint64_t src,
                        size_t count)
{
    struct d2h d = {o, dst, src, count, 0};
    const struct gvs_remote_d2h r = {&fe_remote_api, o->op, pieces(count),
                                     d2h_piece, &d};
    return (cudaError_t)gvs_remote_bulk_d2h(&r);
}
