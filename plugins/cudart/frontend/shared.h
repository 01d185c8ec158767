/*
 * Host memory shared with the backend, on connections that can share it
 * (shm://): the layer's mechanism (gvs_remote.h, "Shared host memory")
 * over the runtime's ops HOSTMEM_SHARE, HOSTMEM_UNSHARE and
 * MEMCPY_SHARED (docs/cudart.md, "Host memory").
 *
 *  - cudaMallocHost / cudaHostAlloc memory is shared when it can be
 *    (hostmem.c), and copies from or to it are one DMA in the worker;
 *  - copies from or to pageable memory go through the layer's shared
 *    staging region, chunk by chunk.
 */
#ifndef CUDART_FE_SHARED_H
#define CUDART_FE_SHARED_H

#include "fe.h"
#include "gvs_remote.h"

/* The runtime's ops of the layer's shared memory. */
extern const struct gvs_remote_shared fe_shared;

/* The way of a copy between device memory and host memory that moves
 * no byte over the connection (gvs_remote_shared_try_copy).  async: a
 * cudaMemcpyAsync on stream, else a cudaMemcpy on stream, the legacy (0)
 * or the per-thread default stream.  cudaErrorNotSupported when it
 * cannot be used: the caller then sends the bytes.  A copy of shared
 * memory is posted when fe_may_post_copy, and a synchronous one then
 * waits for a word the GPU writes, not for a reply. */
cudaError_t fe_shared_try_copy(uint64_t stream, int async,
                               enum cudaMemcpyKind kind, uint64_t dev,
                               void *host, size_t len);

/* known.c: whether a stream-ordered copy of len bytes at device address
 * dev cannot be refused at once (the range inside one allocation of the
 * stream's device, no capture under way), so that it may be posted. */
int fe_may_post_copy(uint64_t stream, uint64_t dev, size_t len);

#endif
