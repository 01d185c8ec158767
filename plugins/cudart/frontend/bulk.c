#include "bulk.h"

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* D2H chunk requests in flight at once: enough that the backend, which
 * serves a lane's chunks one after the other, always finds the next one
 * queued when a reply has left; few enough that the requests never fill
 * the socket while the server waits for us to read. */
#define D2H_WINDOW 4u
/* A D2H chunk's reply ahead of its bytes: i32 result, u32 length. */
#define D2H_HEAD 8u

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

/* Sends one chunk's request and announces where its bytes go, before
 * its reply can have come: the receiver puts them there itself. */
static int d2h_send(struct gvs_client *cl, struct gvs_buf *req,
                    const struct fe_bulk_op *o, uint64_t src, void *dst,
                    size_t len, uint64_t *id)
{
    gvs_buf_reset(req);
    int rc = put_stream(req, o);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, src);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, len);
    if (rc < 0)
        return rc;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    gvs_client_lock(cl);
    rc = fe_send_locked(cl, o->op, APIGEN_DEVICE, 0, &iov, 1, id);
    if (rc == 0)
        rc = gvs_client_expect_into(cl, *id, D2H_HEAD, dst, len);
    gvs_client_unlock(cl);
    return rc;
}

/* One chunk's reply: a success must come with exactly len bytes, put in
 * place by the receiver (into), a failure with none. */
static cudaError_t d2h_take(struct gvs_buf *rep, int into, size_t len)
{
    struct apigen_call c = {NULL, rep, 0};
    uint32_t n = 0;
    cudaError_t e = fe_reply_result(&c);
    if (e == cudaSuccess)
        apigen_get_u32(&c, &n);
    if (apigen_end(&c) < 0)
        return cudaErrorUnknown;
    if (e == cudaSuccess ? !into || n != len : into)
        return cudaErrorUnknown;
    return e;
}

cudaError_t fe_bulk_d2h(const struct fe_bulk_op *o, void *dst, uint64_t src,
                        size_t count)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct gvs_buf *req = gvs_buf_new(32);
    struct gvs_buf *rep = gvs_buf_new(FE_SMALL_REPLY_MAX);
    if (req == NULL || rep == NULL) {
        gvs_buf_free(req);
        gvs_buf_free(rep);
        return cudaErrorMemoryAllocation;
    }
    size_t nchunks = (count + GVS_BULK_CHUNK - 1) / GVS_BULK_CHUNK;
    uint64_t ids[D2H_WINDOW];
    size_t sent = 0, done = 0;
    int rc = 0;
    while (done < sent || (rc == 0 && sent < nchunks)) {
        while (rc == 0 && sent < nchunks && sent - done < D2H_WINDOW) {
            rc = d2h_send(cl, req, o, src + sent * GVS_BULK_CHUNK,
                          (uint8_t *)dst + sent * GVS_BULK_CHUNK,
                          chunk_len(count, sent), &ids[sent % D2H_WINDOW]);
            if (rc == 0)
                sent++;
        }
        if (done == sent)
            break;
        int into;
        int wrc = gvs_client_wait_into(cl, ids[done % D2H_WINDOW], rep, &into);
        if (wrc == 0 || wrc == GVS_E_TOOBIG) {
            /* A reply too big for rep is a bad one; the connection is
             * still in step. */
            cudaError_t ce =
                wrc == 0 ? d2h_take(rep, into, chunk_len(count, done))
                         : cudaErrorUnknown;
            if (e == cudaSuccess)
                e = ce;
        } else if (rc == 0) {
            rc = wrc;
        }
        done++;
    }
    if (rc < 0)
        e = fe_transport_error(rc);
    gvs_buf_free(req);
    gvs_buf_free(rep);
    return e;
}
