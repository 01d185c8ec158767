#include "bulk.h"

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs_remote.h"

static size_t chunk_len(size_t count, size_t i)
{
    size_t off = i * GVS_BULK_CHUNK;
    return count - off < GVS_BULK_CHUNK ? count - off : GVS_BULK_CHUNK;
}

static int put_stream(struct gvs_buf *b, const struct fe_bulk_op *o)
{
    return o->has_stream ? gvs_buf_put_u64(b, o->stream) : 0;
}

cudaError_t fe_bulk_h2d(const struct fe_bulk_op *o, uint64_t dst,
                        const void *src, size_t count)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct gvs_buf *hdr = gvs_buf_new(32);
    struct gvs_buf *rep = gvs_buf_new(FE_SMALL_REPLY_MAX);
    if (hdr == NULL || rep == NULL) {
        gvs_buf_free(hdr);
        gvs_buf_free(rep);
        return cudaErrorMemoryAllocation;
    }
    size_t nchunks = (count + GVS_BULK_CHUNK - 1) / GVS_BULK_CHUNK;
    uint64_t id = 0;
    int rc = 0;
    gvs_client_lock(cl);
    for (size_t i = 0; i < nchunks && rc == 0; i++) {
        size_t off = i * GVS_BULK_CHUNK, len = chunk_len(count, i);
        gvs_buf_reset(hdr);
        rc = put_stream(hdr, o);
        if (rc == 0)
            rc = gvs_buf_put_u64(hdr, dst + off);
        if (rc == 0)
            rc = gvs_buf_put_u32(hdr, (uint32_t)len);
        if (rc < 0)
            break;
        struct iovec iov[2] = {
            {(void *)gvs_buf_ptr(hdr), gvs_buf_len(hdr)},
            {(void *)((const uint8_t *)src + off), len},
        };
        rc = fe_send_locked(cl, o->op, APIGEN_DEVICE, i + 1 < nchunks, iov, 2,
                            &id);
    }
    gvs_client_unlock(cl);
    if (rc == 0)
        rc = gvs_client_wait(cl, id, rep);
    e = rc < 0 ? fe_transport_error(rc) : fe_reply_result_only(rep);
    gvs_buf_free(hdr);
    gvs_buf_free(rep);
    return e;
}

/* A chunk's request: (stream), u64 src, u64 len. */
struct d2h {
    const struct fe_bulk_op *o;
    uint8_t *dst;
    uint64_t src;
    size_t count;
};

static int d2h_piece(void *arg, size_t i, struct gvs_buf *req, void **dst,
                     size_t *len)
{
    const struct d2h *d = arg;
    size_t off = i * GVS_BULK_CHUNK;
    *dst = d->dst + off;
    *len = chunk_len(d->count, i);
    int rc = put_stream(req, d->o);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, d->src + off);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, *len);
    return rc;
}

cudaError_t fe_bulk_d2h(const struct fe_bulk_op *o, void *dst, uint64_t src,
                        size_t count)
{
    struct d2h d = {o, dst, src, count};
    const struct gvs_remote_d2h r = {
        &fe_remote_api, o->op, (count + GVS_BULK_CHUNK - 1) / GVS_BULK_CHUNK,
        d2h_piece, &d};
    return (cudaError_t)gvs_remote_bulk_d2h(&r);
}
