#include "fe.h"

#include <string.h>

#include "cudart_ops.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* D2H chunk requests in flight at once: enough to keep the link busy
 * while a reply is being copied out, few enough that the requests never
 * fill the socket while the server waits for us to read. */
#define D2H_WINDOW 4u

static size_t chunk_len(size_t count, size_t i)
{
    size_t off = i * GVS_BULK_CHUNK;
    return count - off < GVS_BULK_CHUNK ? count - off : GVS_BULK_CHUNK;
}

/* Every chunk but the last is posted; the last waits for the result of
 * the whole transfer, which the backend latches from the first failing
 * chunk. */
static cudaError_t copy_h2d(uint64_t dst, const void *src, size_t count)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct gvs_buf *hdr = gvs_buf_new(16);
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
        int last = i + 1 == nchunks;
        gvs_buf_reset(hdr);
        rc = gvs_buf_put_u64(hdr, dst + off);
        if (rc == 0)
            rc = gvs_buf_put_u32(hdr, (uint32_t)len);
        if (rc < 0)
            break;
        struct iovec iov[2] = {
            {(void *)gvs_buf_ptr(hdr), gvs_buf_len(hdr)},
            {(void *)((const uint8_t *)src + off), len},
        };
        rc = fe_send_locked(cl, CUDART_OP_MEMCPY_H2D, APIGEN_DEVICE, !last,
                            iov, 2, &id);
    }
    gvs_client_unlock(cl);
    if (rc == 0)
        rc = gvs_client_wait(cl, id, rep);
    if (rc < 0) {
        e = fe_transport_error(rc);
    } else {
        struct apigen_call c = {NULL, rep, 0};
        e = fe_reply_result(&c);
        if (apigen_end(&c) < 0)
            e = cudaErrorUnknown;
    }
    gvs_buf_free(hdr);
    gvs_buf_free(rep);
    return e;
}

static int d2h_send(struct gvs_client *cl, struct gvs_buf *req, uint64_t src,
                    size_t len, uint64_t *id)
{
    gvs_buf_reset(req);
    int rc = gvs_buf_put_u64(req, src);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, len);
    if (rc < 0)
        return rc;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    return fe_send_locked(cl, CUDART_OP_MEMCPY_D2H, APIGEN_DEVICE, 0, &iov,
                          1, id);
}

/* Decodes one chunk's reply into dst: its result, and on success exactly
 * len bytes. */
static cudaError_t d2h_take(struct gvs_buf *rep, void *dst, size_t len)
{
    struct apigen_call c = {NULL, rep, 0};
    const uint8_t *p;
    size_t n;
    cudaError_t e = fe_reply_result(&c);
    if (e == cudaSuccess) {
        apigen_get_blob(&c, &p, &n);
        if (c.rc == 0 && n != len)
            return cudaErrorUnknown;
    }
    if (apigen_end(&c) < 0)
        return cudaErrorUnknown;
    if (e == cudaSuccess)
        memcpy(dst, p, len);
    return e;
}

/* Chunk requests are pipelined, a window of them in flight; each reply
 * is copied straight into the caller's buffer.  Every reply sent for is
 * collected, even after a failure. */
static cudaError_t copy_d2h(void *dst, uint64_t src, size_t count)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct gvs_buf *req = gvs_buf_new(32);
    struct gvs_buf *rep = gvs_buf_new(GVS_BULK_CHUNK + 64);
    if (req == NULL || rep == NULL) {
        gvs_buf_free(req);
        gvs_buf_free(rep);
        return cudaErrorMemoryAllocation;
    }
    size_t nchunks = (count + GVS_BULK_CHUNK - 1) / GVS_BULK_CHUNK;
    uint64_t ids[D2H_WINDOW];
    size_t sent = 0, done = 0;
    int rc = 0;
    while (done < nchunks && rc == 0) {
        gvs_client_lock(cl);
        while (rc == 0 && sent < nchunks && sent - done < D2H_WINDOW) {
            rc = d2h_send(cl, req, src + sent * GVS_BULK_CHUNK,
                          chunk_len(count, sent), &ids[sent % D2H_WINDOW]);
            if (rc == 0)
                sent++;
        }
        gvs_client_unlock(cl);
        if (rc == 0)
            rc = gvs_client_wait(cl, ids[done % D2H_WINDOW], rep);
        if (rc == 0) {
            cudaError_t ce = d2h_take(rep, (uint8_t *)dst + done * GVS_BULK_CHUNK,
                                      chunk_len(count, done));
            if (e == cudaSuccess)
                e = ce;
        }
        done++;
    }
    for (; done < sent; done++)
        (void)gvs_client_wait(cl, ids[done % D2H_WINDOW], rep);
    if (rc < 0)
        e = fe_transport_error(rc);
    gvs_buf_free(req);
    gvs_buf_free(rep);
    return e;
}

static cudaError_t copy_d2d(uint64_t dst, uint64_t src, size_t count)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, dst);
    apigen_put_u64(&c, src);
    apigen_put_u64(&c, count);
    e = cudart_fe_run(&c, CUDART_OP_MEMCPY_D2D, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t fe_copy(void *dst, const void *src, size_t count,
                    enum cudaMemcpyKind kind)
{
    if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (kind == cudaMemcpyDefault) {
        int dd = fe_is_device_ptr(dst), sd = fe_is_device_ptr(src);
        kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                  : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    }
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess || count == 0)
        return e;
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    switch (kind) {
    case cudaMemcpyHostToHost:
        memmove(dst, src, count);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        return copy_h2d((uint64_t)(uintptr_t)dst, src, count);
    case cudaMemcpyDeviceToHost:
        return copy_d2h(dst, (uint64_t)(uintptr_t)src, count);
    case cudaMemcpyDeviceToDevice:
        return copy_d2d((uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src,
                        count);
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(fe_copy(dst, src, count, kind));
}
