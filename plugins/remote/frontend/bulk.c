/* Bulk copies (gvs_remote.h, "Bulk copies").  Host to device, the
 * pieces' requests carry the program's bytes as they are (no copy into a
 * request buffer), all but the last posted (and that one too when the
 * API proved a one-piece copy valid).  Device to host, a window of
 * piece requests in flight, each piece's bytes read by the client's
 * receiver thread straight into the program's memory
 * (gvs_client_expect_into). */
#include "remote_fe.h"

#include "gvs/err.h"
#include "gvs/proto.h"

#define EXPORT __attribute__((visibility("default")))

/* Piece requests in flight at once: enough that the backend, which
 * serves a lane's requests one after the other, always finds the next
 * one queued when a reply has left; few enough that the requests never
 * fill the socket while the server waits for us to read. */
#define D2H_WINDOW 4u
/* A piece's reply ahead of its bytes: i32 result, u32 length. */
#define D2H_HEAD 8u

static int32_t failure(const struct gvs_remote_api *api, int rc)
{
    return rc == GVS_E_NOMEM ? api->nomem : api->transport_error(rc);
}

EXPORT size_t gvs_remote_piece_len(size_t rem)
{
    return rem > GVS_REMOTE_PIECE ? GVS_REMOTE_PIECE : rem;
}

EXPORT int32_t gvs_remote_bulk_h2d(const struct gvs_remote_h2d *o)
{
    const struct gvs_remote_api *api = o->api;
    struct gvs_client *cl;
    int32_t e = api->client(&cl);
    if (e != api->success)
        return e;
    struct gvs_buf *hdr = remote_fe_bulk_buf(0);
    struct gvs_buf *rep = remote_fe_bulk_buf(1);
    int rc = hdr != NULL && rep != NULL ? 0 : GVS_E_NOMEM;
    int posted = o->post_op != 0;
    uint64_t id = 0;
    /* The pieces follow each other in the lane: a failure the backend
     * keeps is the last piece's to report. */
    if (rc == 0)
        gvs_client_lock(cl);
    for (size_t i = 0; i < o->pieces && rc == 0; i++) {
        const void *src;
        size_t len;
        gvs_buf_reset(hdr);
        rc = o->piece(o->arg, i, hdr, &src, &len);
        if (rc < 0)
            break;
        /* A posted copy's bytes land in place before these are read
         * (the lock let go meanwhile: the bytes need no sender). */
        if (remote_fe_posted_pending(src, len)) {
            gvs_client_unlock(cl);
            remote_fe_posted_wait(src, len);
            gvs_client_lock(cl);
        }
        struct iovec iov[2] = {
            {(void *)gvs_buf_ptr(hdr), gvs_buf_len(hdr)},
            {(void *)src, len},
        };
        int last = i + 1 == o->pieces;
        rc = gvs_remote_send_locked(api, cl, posted ? o->post_op : o->op,
                                    APIGEN_DEVICE,
                                    !last || posted ? GVS_F_NOREPLY : 0, iov, 2,
                                    last && !posted ? &id : NULL);
    }
    if (hdr != NULL && rep != NULL)
        gvs_client_unlock(cl);
    if (rc == 0 && o->pieces > 0 && !posted)
        rc = gvs_client_wait(cl, id, rep);
    if (rc < 0) {
        e = failure(api, rc);
    } else if (o->pieces > 0 && !posted) {
        struct apigen_call c = {NULL, rep, 0};
        e = gvs_remote_reply_result(api, &c);
        if (apigen_end(&c) < 0)
            e = api->unknown;
    }
    return e;
}

/* Sends piece i's request and announces where its bytes go, before its
 * reply can have come: the receiver puts them there itself. */
static int send_piece(const struct gvs_remote_d2h *o, struct gvs_client *cl,
                      struct gvs_buf *req, size_t i, uint64_t *id,
                      size_t *len)
{
    void *dst;
    gvs_buf_reset(req);
    int rc = o->piece(o->arg, i, req, &dst, len);
    if (rc < 0)
        return rc;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    gvs_client_lock(cl);
    rc = gvs_remote_send_locked(o->api, cl, o->op, APIGEN_DEVICE, 0, &iov, 1,
                                id);
    if (rc == 0)
        rc = gvs_client_expect_into(cl, *id, D2H_HEAD, dst, *len);
    gvs_client_unlock(cl);
    return rc;
}

/* One piece's reply: a success must come with exactly len bytes, put in
 * place by the receiver (into), a failure with none. */
static int32_t take(const struct gvs_remote_api *api, struct gvs_buf *rep,
                    int into, size_t len)
{
    struct apigen_call c = {NULL, rep, 0};
    uint32_t n = 0;
    int32_t e = gvs_remote_reply_result(api, &c);
    if (e == api->success)
        apigen_get_u32(&c, &n);
    if (apigen_end(&c) < 0)
        return api->unknown;
    if (e == api->success ? !into || n != len : into)
        return api->unknown;
    return e;
}

EXPORT int32_t gvs_remote_bulk_d2h(const struct gvs_remote_d2h *o)
{
    const struct gvs_remote_api *api = o->api;
    struct gvs_client *cl;
    int32_t e = api->client(&cl);
    if (e != api->success)
        return e;
    struct gvs_buf *req = remote_fe_bulk_buf(0);
    struct gvs_buf *rep = remote_fe_bulk_buf(1);
    if (req == NULL || rep == NULL)
        return api->nomem;
    uint64_t ids[D2H_WINDOW];
    size_t lens[D2H_WINDOW];
    size_t sent = 0, done = 0;
    int rc = 0;
    while (done < sent || (rc == 0 && sent < o->pieces)) {
        while (rc == 0 && sent < o->pieces && sent - done < D2H_WINDOW) {
            rc = send_piece(o, cl, req, sent, &ids[sent % D2H_WINDOW],
                            &lens[sent % D2H_WINDOW]);
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
            int32_t pe = wrc == 0
                             ? take(api, rep, into, lens[done % D2H_WINDOW])
                             : api->unknown;
            if (e == api->success)
                e = pe;
        } else if (rc == 0) {
            rc = wrc;
        }
        done++;
    }
    if (rc < 0)
        e = failure(api, rc);
    return e;
}
