/*
 * Host callbacks (gvs_remote.h): the records of every API frontend's
 * callbacks by id, run on the client's notify thread when the backend's
 * CALLBACK_RUN comes; CALLBACK_DONE then lets the stream go on.
 */
#include "gvs/client.h"
#include "gvs/mem.h"
#include "gvs_remote.h"
#include "remote_fe.h"
#include "remote_ops.h"

#define EXPORT __attribute__((visibility("default")))

/* Callbacks enqueued and not yet run (or a graph's, kept), by id. */
static struct remote_records pending = REMOTE_RECORDS_INIT;

EXPORT uint64_t gvs_remote_callback_add(const struct gvs_remote_callback *cb)
{
    struct gvs_remote_callback *c = gvs_malloc(sizeof(*c));
    if (c != NULL)
        *c = *cb;
    return remote_records_add(&pending, c);
}

EXPORT void gvs_remote_callback_drop(uint64_t id)
{
    gvs_free(remote_records_take(&pending, id));
}

EXPORT int gvs_remote_callback_find(uint64_t id,
                                    struct gvs_remote_callback *out)
{
    return remote_records_copy(&pending, id, out, sizeof(*out));
}

/* A copy of id's record, which leaves the table unless keep: 0 or -1. */
static int take(uint64_t id, int keep, struct gvs_remote_callback *out)
{
    if (keep)
        return gvs_remote_callback_find(id, out);
    struct gvs_remote_callback *c = remote_records_take(&pending, id);
    if (c != NULL)
        *out = *c;
    gvs_free(c);
    return c != NULL ? 0 : -1;
}

/* Posted: the backend's waiting callback thread needs no answer, and the
 * notify thread must not wait behind other lanes' work. */
static void report_done(uint64_t id)
{
    struct gvs_client *cl;
    struct gvs_buf *b = gvs_buf_new(sizeof(id));
    if (b != NULL && gvs_buf_put_u64(b, id) == 0 && gvs_client_get(&cl) == 0) {
        struct iovec iov = {(void *)gvs_buf_ptr(b), gvs_buf_len(b)};
        (void)gvs_client_post(cl, REMOTE_PLUGIN_ID, REMOTE_OP_CALLBACK_DONE,
                              &iov, 1);
    }
    gvs_buf_free(b);
}

/* CALLBACK_RUN: u64 id, i32 status, u8 keep; CALLBACK_FORGET: u64 id.
 * Other notifications of the layer are handled inline (output.c) or
 * ignored (CALLBACK_WAITING). */
static void on_notify(uint16_t op, struct gvs_buf *body, void *arg)
{
    uint64_t id;
    int32_t status;
    uint8_t keep;
    struct gvs_remote_callback cb;
    (void)arg;
    if (op == REMOTE_OP_CALLBACK_FORGET) {
        if (gvs_buf_get_u64(body, &id) == 0 && gvs_buf_expect_end(body) == 0)
            gvs_remote_callback_drop(id);
        return;
    }
    if (op != REMOTE_OP_CALLBACK_RUN || gvs_buf_get_u64(body, &id) < 0 ||
        gvs_buf_get_i32(body, &status) < 0 ||
        gvs_buf_get_u8(body, &keep) < 0 || gvs_buf_expect_end(body) < 0)
        return;
    if (take(id, keep, &cb) == 0)
        cb.run(&cb, status);
    /* Even for an id we do not know: the stream must not stay held. */
    report_done(id);
}

int remote_fe_callbacks_init(void)
{
    return gvs_client_on_notify(REMOTE_PLUGIN_ID, on_notify, NULL);
}
