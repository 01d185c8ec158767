/* Shared host memory, the client's side (gvs_remote.h, "Shared host
 * memory"): sealed memfds mapped here and passed to the backend, which
 * maps and pins them, or extents of the connection's data area (area.c),
 * which the backend maps already and pins; copies between them and the
 * GPU name a client address and move no byte over the connection. */
#include "remote_fe.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/farmap.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "remote_be.h"

#define EXPORT __attribute__((visibility("default")))

/* Tags only pair a descriptor with its request: unique per process. */
static _Atomic uint64_t next_tag = 1;

static int32_t failure(const struct gvs_remote_shared *sh, int rc)
{
    return rc == GVS_E_NOMEM ? sh->api->nomem : sh->api->transport_error(rc);
}

static int can_share(struct gvs_client *cl)
{
    return (gvs_client_caps(cl) & (GVS_CONN_CAP_FDS | GVS_CONN_CAP_AREA)) !=
           0;
}

int remote_fe_shared_possible(const struct gvs_remote_shared *sh)
{
    struct gvs_client *cl;
    return sh->api->client(&cl) == sh->api->success && can_share(cl);
}

/* Sealed against shrinking and growing: the backend maps it too, and a
 * page cut from under a mapping faults whoever touches it. */
static int make_memfd(size_t len)
{
    int fd = memfd_create("gvs-pinned", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)len) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) <
            0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Caller holds the client lock.  Sends the descriptor (fd >= 0), then
 * the request naming it: the descriptor is there when the backend reads
 * the request; or, for fd -1, the request naming the extent at offset
 * off of the data area.  Plain gvs_client_send_locked: the caller has
 * sent what must go ahead of a device op (api->before_send_locked), or
 * is part of it. */
static int send_share_locked(const struct gvs_remote_shared *sh,
                             struct gvs_client *cl, int fd, uint64_t off,
                             void *p, size_t len, uint64_t *id)
{
    uint64_t tag = fd >= 0 ? atomic_fetch_add(&next_tag, 1) : off;
    struct gvs_buf *req = gvs_buf_new(32);
    if (req == NULL)
        return GVS_E_NOMEM;
    int rc = gvs_buf_put_u32(req, fd >= 0 ? GVS_REMOTE_SHARE_FD
                                          : GVS_REMOTE_SHARE_AREA);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, tag);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, (uint64_t)(uintptr_t)p);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, len);
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    if (rc == 0 && fd >= 0)
        rc = gvs_client_send_fd_locked(cl, fd, tag);
    if (rc == 0)
        rc = gvs_client_send_locked(cl, sh->api->plugin, sh->share, 0, &iov,
                                    1, id);
    gvs_buf_free(req);
    return rc;
}

static int32_t area_start_locked(const struct gvs_remote_shared *sh,
                                  struct gvs_client *cl, size_t len,
                                  struct remote_fe_shared_pending *out)
{
    void *p;
    uint64_t off;
    int rc = remote_fe_area_take(cl, len, &p, &off);
    if (rc == 0) {
        rc = send_share_locked(sh, cl, -1, off, p, len, &out->id);
        if (rc < 0)
            remote_fe_area_give(p);
    }
    if (rc < 0)
        return rc == GVS_E_NOTSUP ? sh->notsup : failure(sh, rc);
    out->sh = sh;
    out->p = p;
    out->len = len;
    return sh->api->success;
}

/* Returns memory of start_locked: to the area, else unmapped. */
static void release(void *p, size_t len)
{
    if (!remote_fe_area_give(p))
        munmap(p, len);
}

int32_t remote_fe_shared_start_locked(const struct gvs_remote_shared *sh,
                                      struct gvs_client *cl, size_t size,
                                      struct remote_fe_shared_pending *out)
{
    if (!can_share(cl))
        return sh->notsup;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size == 0 || size > SIZE_MAX - page)
        return sh->api->invalid;
    size_t len = (size + page - 1) / page * page;
    if (!(gvs_client_caps(cl) & GVS_CONN_CAP_FDS))
        return area_start_locked(sh, cl, len, out);
    int fd = make_memfd(len);
    void *m = fd < 0 ? MAP_FAILED
                     : gvs_mmap_far(len, PROT_READ | PROT_WRITE, MAP_SHARED,
                                    fd, 0);
    if (m == MAP_FAILED) {
        if (fd >= 0)
            close(fd);
        return sh->api->nomem;
    }
    int rc = send_share_locked(sh, cl, fd, 0, m, len, &out->id);
    close(fd);
    if (rc < 0) {
        munmap(m, len);
        return failure(sh, rc);
    }
    out->sh = sh;
    out->p = m;
    out->len = len;
    return sh->api->success;
}

int32_t remote_fe_shared_finish(struct gvs_client *cl,
                                const struct remote_fe_shared_pending *s,
                                void **p, uint64_t *dev)
{
    const struct gvs_remote_api *api = s->sh->api;
    struct gvs_buf *rep = gvs_buf_new(64);
    int rc = rep != NULL ? gvs_client_wait(cl, s->id, rep) : GVS_E_NOMEM;
    int32_t e;
    if (rc < 0) {
        e = failure(s->sh, rc);
    } else {
        struct apigen_call c = {NULL, rep, 0};
        e = gvs_remote_reply_result(api, &c);
        if (e == api->success)
            apigen_get_u64(&c, dev);
        if (apigen_end(&c) < 0)
            e = api->unknown;
    }
    gvs_buf_free(rep);
    if (e != api->success) {
        release(s->p, s->len);
        return e;
    }
    /* The backend's pinning has allocated every page; mapping them here
     * now spares the program a fault per page on first use. */
    (void)madvise(s->p, s->len, MADV_POPULATE_WRITE);
    *p = s->p;
    return e;
}

int32_t remote_fe_shared_map(const struct gvs_remote_shared *sh, size_t size,
                             void **p, uint64_t *dev)
{
    const struct gvs_remote_api *api = sh->api;
    struct gvs_client *cl;
    struct remote_fe_shared_pending s;
    int32_t e = api->client(&cl);
    if (e != api->success)
        return e;
    gvs_client_lock(cl);
    int rc = api->before_send_locked != NULL
                 ? api->before_send_locked(cl, APIGEN_DEVICE)
                 : 0;
    e = rc < 0 ? failure(sh, rc)
               : remote_fe_shared_start_locked(sh, cl, size, &s);
    gvs_client_unlock(cl);
    return e == api->success ? remote_fe_shared_finish(cl, &s, p, dev) : e;
}

int32_t remote_fe_result(const struct gvs_remote_shared *sh,
                         struct gvs_client *cl, uint64_t id)
{
    const struct gvs_remote_api *api = sh->api;
    struct gvs_buf *rep = remote_fe_copy_buf(1);
    int rc = rep != NULL ? gvs_client_wait(cl, id, rep) : GVS_E_NOMEM;
    int32_t e;
    if (rc < 0) {
        e = failure(sh, rc);
    } else {
        struct apigen_call c = {NULL, rep, 0};
        e = gvs_remote_reply_result(api, &c);
        if (apigen_end(&c) < 0)
            e = api->unknown;
    }
    return e;
}

/* One request of sh's with a reply that is only a result, waited for
 * (wait) or posted: the API's result, or success once a posted one has
 * left. */
static int32_t request(const struct gvs_remote_shared *sh, uint16_t op,
                       const struct gvs_buf *req, int wait)
{
    const struct gvs_remote_api *api = sh->api;
    struct gvs_client *cl;
    int32_t e = api->client(&cl);
    if (e != api->success)
        return e;
    uint64_t id;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    gvs_client_lock(cl);
    int rc = gvs_remote_send_locked(api, cl, op, APIGEN_DEVICE,
                                    wait ? 0 : GVS_F_NOREPLY, &iov,
                                    1, wait ? &id : NULL);
    gvs_client_unlock(cl);
    if (rc < 0)
        return failure(sh, rc);
    return wait ? remote_fe_result(sh, cl, id) : api->success;
}

int32_t remote_fe_round_trip(const struct gvs_remote_shared *sh, uint16_t op,
                             const struct gvs_buf *req)
{
    return request(sh, op, req, 1);
}

int32_t remote_fe_post(const struct gvs_remote_shared *sh, uint16_t op,
                       const struct gvs_buf *req)
{
    return request(sh, op, req, 0);
}

int32_t remote_fe_shared_unmap(const struct gvs_remote_shared *sh, void *p,
                               size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (size + page - 1) / page * page;
    struct gvs_buf *req = gvs_buf_new(16);
    int32_t e = sh->api->nomem;
    if (req != NULL && gvs_buf_put_u64(req, (uint64_t)(uintptr_t)p) == 0)
        e = remote_fe_round_trip(sh, sh->unshare, req);
    gvs_buf_free(req);
    release(p, len);
    return e;
}

int remote_fe_shared_copy_request(struct gvs_buf *req, uint64_t stream,
                                  unsigned flags, int h2d, uint64_t dev,
                                  const void *host, size_t len)
{
    gvs_buf_reset(req);
    int rc = gvs_buf_put_u64(req, stream);
    if (rc == 0)
        rc = gvs_buf_put_u32(req, flags);
    if (rc == 0)
        rc = gvs_buf_put_u32(req, h2d ? GVS_REMOTE_SHARED_H2D
                                      : GVS_REMOTE_SHARED_D2H);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, dev);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, (uint64_t)(uintptr_t)host);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, len);
    return rc;
}

int32_t remote_fe_shared_copy(const struct gvs_remote_shared *sh,
                              uint64_t stream, unsigned flags, int h2d,
                              uint64_t dev, const void *host, size_t len)
{
    struct gvs_buf *req = remote_fe_copy_buf(0);
    int32_t e = sh->api->nomem;
    if (req != NULL && remote_fe_shared_copy_request(req, stream, flags, h2d,
                                                     dev, host, len) == 0)
        e = remote_fe_round_trip(sh, sh->copy, req);
    return e;
}

/* The copy as shared_copy's, sent without waiting: its place in the
 * lane orders it before whatever can show it done. */
static int32_t shared_post(const struct gvs_remote_shared *sh,
                           uint64_t stream, int h2d, uint64_t dev,
                           const void *host, size_t len)
{
    struct gvs_buf *req = remote_fe_copy_buf(0);
    int32_t e = sh->api->nomem;
    if (req != NULL &&
        remote_fe_shared_copy_request(req, stream, GVS_REMOTE_SHARED_ON_STREAM,
                                      h2d, dev, host, len) == 0)
        e = remote_fe_post(sh, sh->copy_posted, req);
    return e;
}

EXPORT int32_t
gvs_remote_shared_try_copy(const struct gvs_remote_shared *sh,
                           uint64_t stream, unsigned flags, int h2d,
                           uint64_t dev, void *host, size_t len)
{
    unsigned proven = flags & GVS_REMOTE_SHARED_PROVEN;
    if (gvs_remote_capturing())
        proven = 0;
    flags &= ~(unsigned)GVS_REMOTE_SHARED_PROVEN;
    int sync = (flags & GVS_REMOTE_SHARED_WAIT) ||
               !(flags & GVS_REMOTE_SHARED_ON_STREAM);
    /* A few bytes travel faster than the GPU fetches them: the worker's
     * CUDA copies them from its request as from pageable memory, which
     * it does sooner than a DMA from page-locked memory completes
     * (measured, docs/performance.md "Copies at every size"). */
    if (h2d && sync && len <= GVS_REMOTE_H2D_INLINE_MAX)
        return sh->notsup;
    if (gvs_remote_host_shared(host, len)) {
        int32_t e;
        if (proven && flags == GVS_REMOTE_SHARED_ON_STREAM &&
            sh->copy_posted != 0 && len > 0)
            return shared_post(sh, stream, h2d, dev, host, len);
        if (proven &&
            flags == (GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT) &&
            len > 0 &&
            remote_fe_signalled_copy(sh, stream, h2d, dev, host, len, &e))
            return e;
        return remote_fe_shared_copy(sh, stream, flags, h2d, dev, host,
                                     len);
    }
    int32_t posted;
    if (!h2d && flags == GVS_REMOTE_SHARED_ON_STREAM &&
        !remote_fe_shared_possible(sh) &&
        remote_fe_posted_copy(sh, stream, dev, host, len, proven != 0,
                              &posted))
        return posted;
    if (flags & GVS_REMOTE_SHARED_ON_STREAM)
        flags |= GVS_REMOTE_SHARED_WAIT | proven;
    return remote_fe_staged_copy(sh, stream, flags, sync, h2d, dev, host,
                                 len);
}
