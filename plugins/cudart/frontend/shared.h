/*
 * Host memory shared with the backend, on connections that can share it
 * (shm://, GVS_CONN_CAP_FDS): the frontend allocates a sealed memfd, maps
 * it and passes it to the backend, which maps it too and pins it.  A copy
 * between such memory and the GPU is then one DMA on the backend, with
 * no byte crossing the connection (docs/cudart.md, "Host memory").
 *
 *  - cudaMallocHost / cudaHostAlloc memory is shared when it can be
 *    (hostmem.c), and copies from or to it go by MEMCPY_SHARED;
 *  - copies from or to pageable memory go through a shared staging
 *    region, chunk by chunk, the program's side of a chunk overlapping
 *    the GPU's side of the one before (staging.c).
 */
#ifndef CUDART_FE_SHARED_H
#define CUDART_FE_SHARED_H

#include "fe.h"

/* MEMCPY_SHARED flags (plugins/cudart/api/20-memory.api). */
enum { FE_SHARED_ON_STREAM = 1u, FE_SHARED_WAIT = 2u };

/* Whether the session's connection can share memory. */
int fe_shared_possible(void);

/* Maps size bytes of fresh zeroed memory here and in the backend: *p
 * (page-aligned), *dev the device address of the backend's pinned
 * mapping (0 when CUDA gave none).  cudaErrorNotSupported when the
 * connection cannot share memory, cudaErrorMemoryAllocation when the
 * backend refuses: the caller then uses memory of its own. */
cudaError_t fe_shared_map(size_t size, void **p, uint64_t *dev);
/* fe_shared_map in two steps, for a caller that holds the client lock
 * (and has brought the lane's device in line): start sends the request,
 * finish (without the lock) collects its reply. */
struct fe_shared_pending {
    uint64_t id;
    void *p;
    size_t len;
};
cudaError_t fe_shared_start_locked(struct gvs_client *cl, size_t size,
                                   struct fe_shared_pending *out);
cudaError_t fe_shared_finish(struct gvs_client *cl,
                             const struct fe_shared_pending *s, void **p,
                             uint64_t *dev);

/* Unshares (the backend first waits for the device, as cudaFreeHost)
 * and unmaps a region of fe_shared_map; the backend's result. */
cudaError_t fe_shared_unmap(void *p, size_t size);

/* The request of one MEMCPY_SHARED: encodes it into req (reset first).
 * host lies in shared memory. */
int fe_shared_copy_request(struct gvs_buf *req, uint64_t stream,
                           unsigned flags, enum cudaMemcpyKind kind,
                           uint64_t dev, const void *host, size_t len);
/* One copy between device memory and shared memory, waited for. */
cudaError_t fe_shared_copy(uint64_t stream, unsigned flags,
                           enum cudaMemcpyKind kind, uint64_t dev,
                           const void *host, size_t len);

/* The way of a copy between device memory and host memory that moves
 * no byte over the connection: one DMA when host lies in shared memory,
 * else the staging pipeline.  async: a cudaMemcpyAsync on stream (with
 * pageable memory it returns once done, as natively), else a cudaMemcpy.
 * cudaErrorNotSupported when neither can be used: the caller then sends
 * the bytes. */
cudaError_t fe_shared_try_copy(uint64_t stream, int async,
                               enum cudaMemcpyKind kind, uint64_t dev,
                               void *host, size_t len);

/* hostmem.c: whether [p, p + len) lies in one region shared with this
 * session's backend. */
int fe_host_shared(const void *p, size_t len);

/* staging.c: a copy between device memory and pageable memory through
 * the staging region; the flags as for fe_shared_copy (0: as cudaMemcpy;
 * FE_SHARED_ON_STREAM | FE_SHARED_WAIT: ordered on stream, returning once
 * done, as cudaMemcpyAsync does with pageable memory).
 * cudaErrorNotSupported when it cannot be used (no sharing, a copy too
 * small to gain, the region busy with another thread's copy): the caller
 * then sends the bytes. */
cudaError_t fe_staged_copy(uint64_t stream, unsigned flags,
                           enum cudaMemcpyKind kind, uint64_t dev,
                           void *host, size_t len);
/* Caller holds the client lock, about to send a device op: the first
 * time on a connection that shares memory, sends the staging region's
 * HOSTMEM_SHARE ahead of it.  The first device op is the one that gives
 * the backend its context, which takes far longer than pinning the
 * region: no copy waits for the region later, and no pinning holds the
 * driver while copies and kernels run.  Its failure only means no
 * staging. */
void fe_staging_kick_locked(struct gvs_client *cl);
/* fork(): the child's session knows nothing of the parent's regions. */
void fe_staging_fork_child(void);

#endif
