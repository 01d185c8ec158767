#include "shared.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cudart_ops.h"
#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* Tags only pair a descriptor with its request: unique per process. */
static _Atomic uint64_t next_tag = 1;

int fe_shared_possible(void)
{
    struct gvs_client *cl;
    return fe_client(&cl) == cudaSuccess &&
           (gvs_client_caps(cl) & GVS_CONN_CAP_FDS) != 0;
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

/* Caller holds the client lock.  Sends the descriptor, then the request
 * naming it: the descriptor is there when the backend reads the
 * request.  Plain gvs_client_send_locked: the caller has brought the
 * lane's device in line (fe_send_locked, or this is one of its steps). */
static int send_share_locked(struct gvs_client *cl, int fd, void *p,
                             size_t len, uint64_t *id)
{
    uint64_t tag = atomic_fetch_add(&next_tag, 1);
    struct gvs_buf *req = gvs_buf_new(32);
    if (req == NULL)
        return GVS_E_NOMEM;
    int rc = gvs_buf_put_u64(req, tag);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, (uint64_t)(uintptr_t)p);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, len);
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    if (rc == 0)
        rc = gvs_client_send_fd_locked(cl, fd, tag);
    if (rc == 0)
        rc = gvs_client_send_locked(cl, CUDART_PLUGIN_ID,
                                    CUDART_OP_HOSTMEM_SHARE, 0, &iov, 1, id);
    gvs_buf_free(req);
    return rc;
}

cudaError_t fe_shared_start_locked(struct gvs_client *cl, size_t size,
                                   struct fe_shared_pending *out)
{
    if (!(gvs_client_caps(cl) & GVS_CONN_CAP_FDS))
        return cudaErrorNotSupported;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size == 0 || size > SIZE_MAX - page)
        return cudaErrorInvalidValue;
    size_t len = (size + page - 1) / page * page;
    int fd = make_memfd(len);
    void *m = fd < 0 ? MAP_FAILED
                     : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
                            fd, 0);
    if (m == MAP_FAILED) {
        if (fd >= 0)
            close(fd);
        return cudaErrorMemoryAllocation;
    }
    int rc = send_share_locked(cl, fd, m, len, &out->id);
    close(fd);
    if (rc < 0) {
        munmap(m, len);
        return rc == GVS_E_NOMEM ? cudaErrorMemoryAllocation
                                 : fe_transport_error(rc);
    }
    out->p = m;
    out->len = len;
    return cudaSuccess;
}

cudaError_t fe_shared_finish(struct gvs_client *cl,
                             const struct fe_shared_pending *s, void **p,
                             uint64_t *dev)
{
    struct gvs_buf *rep = gvs_buf_new(64);
    int rc = rep != NULL ? gvs_client_wait(cl, s->id, rep) : GVS_E_NOMEM;
    cudaError_t e;
    if (rc < 0) {
        e = rc == GVS_E_NOMEM ? cudaErrorMemoryAllocation
                              : fe_transport_error(rc);
    } else {
        struct apigen_call c = {NULL, rep, 0};
        e = fe_reply_result(&c);
        if (e == cudaSuccess)
            apigen_get_u64(&c, dev);
        if (apigen_end(&c) < 0)
            e = cudaErrorUnknown;
    }
    gvs_buf_free(rep);
    if (e != cudaSuccess) {
        munmap(s->p, s->len);
        return e;
    }
    /* The backend's pinning has allocated every page; mapping them here
     * now spares the program a fault per page on first use. */
    (void)madvise(s->p, s->len, MADV_POPULATE_WRITE);
    *p = s->p;
    return cudaSuccess;
}

cudaError_t fe_shared_map(size_t size, void **p, uint64_t *dev)
{
    struct gvs_client *cl;
    struct fe_shared_pending s;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    gvs_client_lock(cl);
    int rc = fe_device_sync_locked(cl);
    e = rc < 0 ? fe_transport_error(rc) : fe_shared_start_locked(cl, size, &s);
    gvs_client_unlock(cl);
    return e == cudaSuccess ? fe_shared_finish(cl, &s, p, dev) : e;
}

cudaError_t fe_shared_unmap(void *p, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (size + page - 1) / page * page;
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    struct gvs_buf *req = gvs_buf_new(16), *rep = gvs_buf_new(64);
    if (e == cudaSuccess && (req == NULL || rep == NULL))
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
        uint64_t id;
        int rc = gvs_buf_put_u64(req, (uint64_t)(uintptr_t)p);
        struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
        gvs_client_lock(cl);
        if (rc == 0)
            rc = fe_send_locked(cl, CUDART_OP_HOSTMEM_UNSHARE, APIGEN_DEVICE,
                                0, &iov, 1, &id);
        gvs_client_unlock(cl);
        if (rc == 0)
            rc = gvs_client_wait(cl, id, rep);
        e = rc < 0 ? fe_transport_error(rc) : fe_reply_result_only(rep);
    }
    gvs_buf_free(req);
    gvs_buf_free(rep);
    munmap(p, len);
    return e;
}

int fe_shared_copy_request(struct gvs_buf *req, uint64_t stream,
                           unsigned flags, enum cudaMemcpyKind kind,
                           uint64_t dev, const void *host, size_t len)
{
    gvs_buf_reset(req);
    int rc = gvs_buf_put_u64(req, stream);
    if (rc == 0)
        rc = gvs_buf_put_u32(req, flags);
    if (rc == 0)
        rc = gvs_buf_put_u32(req, (uint32_t)kind);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, dev);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, (uint64_t)(uintptr_t)host);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, len);
    return rc;
}

cudaError_t fe_shared_copy(uint64_t stream, unsigned flags,
                           enum cudaMemcpyKind kind, uint64_t dev,
                           const void *host, size_t len)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct gvs_buf *req = gvs_buf_new(64), *rep = gvs_buf_new(64);
    int rc = req != NULL && rep != NULL
                 ? fe_shared_copy_request(req, stream, flags, kind, dev,
                                          host, len)
                 : GVS_E_NOMEM;
    uint64_t id;
    if (rc == 0) {
        struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
        gvs_client_lock(cl);
        rc = fe_send_locked(cl, CUDART_OP_MEMCPY_SHARED, APIGEN_DEVICE, 0,
                            &iov, 1, &id);
        gvs_client_unlock(cl);
    }
    if (rc == 0)
        rc = gvs_client_wait(cl, id, rep);
    e = rc == GVS_E_NOMEM ? cudaErrorMemoryAllocation
        : rc < 0          ? fe_transport_error(rc)
                          : fe_reply_result_only(rep);
    gvs_buf_free(req);
    gvs_buf_free(rep);
    return e;
}

cudaError_t fe_shared_try_copy(uint64_t stream, int async,
                               enum cudaMemcpyKind kind, uint64_t dev,
                               void *host, size_t len)
{
    if (fe_host_shared(host, len))
        return fe_shared_copy(stream, async ? FE_SHARED_ON_STREAM : 0, kind,
                              dev, host, len);
    return fe_staged_copy(stream,
                          async ? FE_SHARED_ON_STREAM | FE_SHARED_WAIT : 0,
                          kind, dev, host, len);
}
