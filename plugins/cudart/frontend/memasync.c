/*
 * Stream-ordered copies and memsets, memory information, prefetches
 * (docs/cudart.md, "Async copies").
 *
 * H2D: the bytes travel in the requests, so the program's buffer is free
 * again when the call returns, as with CUDA's staging of pageable memory.
 * D2H: the reply carries the bytes once the stream has reached the copy,
 * so the call returns with them in the program's buffer, as CUDA does
 * for a pageable destination.
 */
#include "streams.h"

#include <string.h>

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* D2H chunk requests in flight at once, as for cudaMemcpy. */
#define D2H_WINDOW 4u

static size_t chunk_len(size_t count, size_t i)
{
    size_t off = i * GVS_BULK_CHUNK;
    return count - off < GVS_BULK_CHUNK ? count - off : GVS_BULK_CHUNK;
}

/* Decodes a reply that is a result alone. */
static cudaError_t result_of(struct gvs_buf *rep)
{
    struct apigen_call c = {NULL, rep, 0};
    cudaError_t e = fe_reply_result(&c);
    return apigen_end(&c) < 0 ? cudaErrorUnknown : e;
}

/* Every chunk but the last is posted; the backend latches the first
 * failure, which the last one's reply reports. */
static cudaError_t async_h2d(uint64_t stream, uint64_t dst, const void *src,
                             size_t count)
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
        rc = gvs_buf_put_u64(hdr, stream);
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
        rc = fe_send_locked(cl, CUDART_OP_MEMCPY_ASYNC_H2D, APIGEN_DEVICE,
                            i + 1 < nchunks, iov, 2, &id);
    }
    gvs_client_unlock(cl);
    if (rc == 0)
        rc = gvs_client_wait(cl, id, rep);
    e = rc < 0 ? fe_transport_error(rc) : result_of(rep);
    gvs_buf_free(hdr);
    gvs_buf_free(rep);
    return e;
}

static int d2h_send(struct gvs_client *cl, struct gvs_buf *req,
                    uint64_t stream, uint64_t src, size_t len, uint64_t *id)
{
    gvs_buf_reset(req);
    int rc = gvs_buf_put_u64(req, stream);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, src);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, len);
    if (rc < 0)
        return rc;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    gvs_client_lock(cl);
    rc = fe_send_locked(cl, CUDART_OP_MEMCPY_ASYNC_D2H, APIGEN_DEVICE, 0,
                        &iov, 1, id);
    gvs_client_unlock(cl);
    return rc;
}

/* One chunk's reply: its result and, on success, exactly len bytes. */
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

/* Chunk requests are pipelined; every reply is collected, even after a
 * failure, and the first failure is the result. */
static cudaError_t async_d2h(uint64_t stream, void *dst, uint64_t src,
                             size_t count)
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
    while (done < sent || (rc == 0 && sent < nchunks)) {
        while (rc == 0 && sent < nchunks && sent - done < D2H_WINDOW) {
            rc = d2h_send(cl, req, stream, src + sent * GVS_BULK_CHUNK,
                          chunk_len(count, sent), &ids[sent % D2H_WINDOW]);
            if (rc == 0)
                sent++;
        }
        if (done == sent)
            break;
        int wrc = gvs_client_wait(cl, ids[done % D2H_WINDOW], rep);
        if (wrc == 0) {
            cudaError_t ce = d2h_take(rep,
                                      (uint8_t *)dst + done * GVS_BULK_CHUNK,
                                      chunk_len(count, done));
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

cudaError_t fe_copy_async(void *dst, const void *src, size_t count,
                          enum cudaMemcpyKind kind, cudaStream_t stream,
                          int per_thread)
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
    uint64_t s = fe_stream_wire(stream, per_thread);
    switch (kind) {
    case cudaMemcpyHostToHost:
        /* Synchronous with the host, as natively. */
        memmove(dst, src, count);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        return async_h2d(s, (uint64_t)(uintptr_t)dst, src, count);
    case cudaMemcpyDeviceToHost:
        return async_d2h(s, dst, (uint64_t)(uintptr_t)src, count);
    case cudaMemcpyDeviceToDevice:
        return cudart_rpc_MEMCPY_ASYNC_D2D(s, dst, (void *)(uintptr_t)src,
                                           count);
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return cudart_fe_ret(fe_copy_async(dst, src, count, kind, stream, 0));
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return cudart_fe_ret(fe_copy_async(dst, src, count, kind, stream, 1));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                            cudaStream_t stream)
{
    return cudart_fe_ret(cudart_rpc_MEMSET_ASYNC(fe_stream_wire(stream, 0),
                                                 devPtr, value, count));
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                 cudaStream_t stream)
{
    return cudart_fe_ret(cudart_rpc_MEMSET_ASYNC(fe_stream_wire(stream, 1),
                                                 devPtr, value, count));
}

/* Either pointer may be NULL, as natively. */
cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    size_t f, t;
    cudaError_t e = cudart_rpc_cudaMemGetInfo(&f, &t);
    if (e == cudaSuccess && free != NULL)
        *free = f;
    if (e == cudaSuccess && total != NULL)
        *total = t;
    return cudart_fe_ret(e);
}

static cudaError_t prefetch(const void *devPtr, size_t count,
                            struct cudaMemLocation location,
                            unsigned int flags, cudaStream_t stream,
                            int per_thread)
{
    return cudart_fe_ret(cudart_rpc_MEM_PREFETCH_ASYNC(
        fe_stream_wire(stream, per_thread), (void *)(uintptr_t)devPtr, count,
        location.type, location.id, flags));
}

cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count,
                                 struct cudaMemLocation location,
                                 unsigned int flags, cudaStream_t stream)
{
    return prefetch(devPtr, count, location, flags, stream, 0);
}

cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                      struct cudaMemLocation location,
                                      unsigned int flags, cudaStream_t stream)
{
    return prefetch(devPtr, count, location, flags, stream, 1);
}
