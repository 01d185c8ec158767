/* The round trips of generated calls, for every API frontend
 * (gvs_remote.h). */
#include <pthread.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs_remote.h"
#include "remote_fe.h"

#define EXPORT __attribute__((visibility("default")))

/* Request and reply buffers of the generated calls, one pair per thread,
 * kept between calls; a second pair for the copies of shared memory
 * (remote_fe_copy_buf), which a generated call's own code may make
 * while its pair is in use; and a third for the bulk copies
 * (remote_fe_bulk_buf), which a failed copy of shared memory falls back
 * to. */
static pthread_key_t bufs_key;
static pthread_once_t bufs_once = PTHREAD_ONCE_INIT;

struct bufs {
    struct gvs_buf *req;
    struct gvs_buf *rep;
    struct gvs_buf *copy_req;
    struct gvs_buf *copy_rep;
    struct gvs_buf *bulk_req;
    struct gvs_buf *bulk_rep;
};

static void bufs_free(void *p)
{
    struct bufs *b = p;
    gvs_buf_free(b->req);
    gvs_buf_free(b->rep);
    gvs_buf_free(b->copy_req);
    gvs_buf_free(b->copy_rep);
    gvs_buf_free(b->bulk_req);
    gvs_buf_free(b->bulk_rep);
    gvs_free(b);
}

static void bufs_init(void)
{
    (void)pthread_key_create(&bufs_key, bufs_free);
}

static struct bufs *thread_bufs(void)
{
    pthread_once(&bufs_once, bufs_init);
    struct bufs *b = pthread_getspecific(bufs_key);
    if (b != NULL)
        return b;
    b = gvs_calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    /* Storage grows on demand: a large maximum costs nothing, and a
     * reply over the maximum would break the connection. */
    b->req = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    b->rep = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    b->copy_req = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    b->copy_rep = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    b->bulk_req = gvs_buf_new(REMOTE_FE_BULK_REQUEST_MAX);
    b->bulk_rep = gvs_buf_new(REMOTE_FE_BULK_REPLY_MAX);
    if (b->req == NULL || b->rep == NULL || b->copy_req == NULL ||
        b->copy_rep == NULL || b->bulk_req == NULL || b->bulk_rep == NULL ||
        pthread_setspecific(bufs_key, b) != 0) {
        bufs_free(b);
        return NULL;
    }
    return b;
}

static struct gvs_buf *emptied(struct gvs_buf *buf)
{
    gvs_buf_reset(buf);
    return buf;
}

struct gvs_buf *remote_fe_copy_buf(int reply)
{
    struct bufs *b = thread_bufs();
    return b == NULL ? NULL : emptied(reply ? b->copy_rep : b->copy_req);
}

struct gvs_buf *remote_fe_bulk_buf(int reply)
{
    struct bufs *b = thread_bufs();
    return b == NULL ? NULL : emptied(reply ? b->bulk_rep : b->bulk_req);
}

EXPORT int gvs_remote_send_locked(const struct gvs_remote_api *api,
                                  struct gvs_client *cl, uint16_t op,
                                  unsigned flags, uint32_t frame,
                                  const struct iovec *iov, int n,
                                  uint64_t *id)
{
    if (api->before_send_locked != NULL) {
        int rc = api->before_send_locked(cl, flags);
        if (rc < 0)
            return rc;
    }
    return gvs_client_send_locked(cl, api->plugin, op, frame, iov, n, id);
}

EXPORT int32_t gvs_remote_begin(const struct gvs_remote_api *api,
                                struct apigen_call *c)
{
    struct gvs_client *cl;
    c->put = c->get = NULL;
    c->rc = 0;
    int32_t e = api->client(&cl);
    if (e != api->success)
        return e;
    struct bufs *b = thread_bufs();
    if (b == NULL)
        return api->nomem;
    gvs_buf_reset(b->req);
    gvs_buf_reset(b->rep);
    c->put = b->req;
    c->get = b->rep;
    return api->success;
}

static int32_t encode_error(const struct gvs_remote_api *api, int rc)
{
    return rc == GVS_E_NOMEM ? api->nomem : api->unknown;
}

EXPORT int32_t gvs_remote_run(const struct gvs_remote_api *api,
                              struct apigen_call *c, uint16_t op,
                              unsigned flags)
{
    struct gvs_client *cl;
    struct gvs_buf *reply = c->get;
    uint64_t id;
    /* Until a reply has arrived there is nothing for end to check. */
    c->get = NULL;
    if (c->rc < 0)
        return encode_error(api, c->rc);
    int32_t e = api->client(&cl);
    if (e != api->success)
        return e;
    struct iovec iov = {(void *)gvs_buf_ptr(c->put), gvs_buf_len(c->put)};
    gvs_client_lock(cl);
    int rc = gvs_remote_send_locked(api, cl, op, flags, 0, &iov, 1, &id);
    gvs_client_unlock(cl);
    if (rc == 0)
        rc = gvs_client_wait(cl, id, reply);
    if (rc < 0)
        return api->transport_error(rc);
    c->get = reply;
    return gvs_remote_reply_result(api, c);
}

EXPORT int32_t gvs_remote_post(const struct gvs_remote_api *api,
                               struct apigen_call *c, uint16_t op,
                               unsigned flags)
{
    struct gvs_client *cl;
    if (c->rc < 0)
        return encode_error(api, c->rc);
    int32_t e = api->client(&cl);
    if (e != api->success)
        return e;
    struct iovec iov = {(void *)gvs_buf_ptr(c->put), gvs_buf_len(c->put)};
    gvs_client_lock(cl);
    int rc = gvs_remote_send_locked(api, cl, op, flags, GVS_F_NOREPLY, &iov,
                                    1, NULL);
    gvs_client_unlock(cl);
    return rc < 0 ? api->transport_error(rc) : api->success;
}

EXPORT int32_t gvs_remote_reply_result(const struct gvs_remote_api *api,
                                       struct apigen_call *c)
{
    int32_t r;
    apigen_get_i32(c, &r);
    return c->rc < 0 ? api->unknown : r;
}

EXPORT int32_t gvs_remote_end(const struct gvs_remote_api *api,
                              struct apigen_call *c, int32_t r)
{
    if (c->get == NULL)
        return r;
    return apigen_end(c) < 0 ? api->unknown : r;
}
