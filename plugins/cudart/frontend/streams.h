/*
 * Streams, events and host callbacks on the frontend side
 * (frontend/streams.c, events.c, callbacks.c).  Stream and event handles
 * given to the program are the backend's opaque ids (backend/objects.h)
 * cast to pointers; the frontend only translates the special stream
 * values.
 */
#ifndef CUDART_FE_STREAMS_H
#define CUDART_FE_STREAMS_H

#include "fe.h"
#include "gvs_remote.h"

/* What --default-stream per-thread compiles the stream-taking calls to
 * (cuda_runtime_api.h declares them only under that option), for the
 * hand-written ones; the generated ones' twins are declared where they
 * are generated. */
#pragma GCC visibility push(default)
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event,
                                          cudaStream_t stream,
                                          unsigned int flags);
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
                                    void *userData);
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
                                       cudaStreamCallback_t callback,
                                       void *userData, unsigned int flags);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind,
                                 cudaStream_t stream);
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                 cudaStream_t stream);
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
                                         size_t count, size_t offset,
                                         enum cudaMemcpyKind kind,
                                         cudaStream_t stream);
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
                                           size_t count, size_t offset,
                                           enum cudaMemcpyKind kind,
                                           cudaStream_t stream);
cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                      struct cudaMemLocation location,
                                      unsigned int flags,
                                      cudaStream_t stream);
#pragma GCC visibility pop

/* The wire value of a stream argument.  per_thread is set by the _ptsz /
 * _ptds entry points (nvcc --default-stream per-thread): there the null
 * stream means the calling thread's default stream, cudaStreamPerThread. */
uint64_t fe_stream_wire(cudaStream_t s, int per_thread);

/* The wire value of an event argument. */
static inline uint64_t fe_event_wire(cudaEvent_t e)
{
    return (uint64_t)(uintptr_t)e;
}

/* known.c: the streams and events this process created (the layer's
 * table, gvs_remote.h), with their devices, and whether a capture may be under way; the predicates of the
 * posted ops (fe_may_post_record, fe_may_post_wait, fe_may_post_memset)
 * are declared with the generated code.  Thread-safe; a forked child
 * starts with none. */
enum fe_known_kind {
    FE_KNOWN_STREAM = GVS_REMOTE_KNOWN_STREAM,
    FE_KNOWN_EVENT = GVS_REMOTE_KNOWN_EVENT,
};
void fe_known_add(enum fe_known_kind k, uint64_t id, int device);
void fe_known_remove(enum fe_known_kind k, uint64_t id);
/* The device of id, or -1 when unknown. */
int fe_known_device(enum fe_known_kind k, uint64_t id);
/* After cudaDeviceReset: the device's streams and events are gone. */
void fe_known_forget_device(int device);
/* Around a capture: begins before BEGIN_CAPTURE is sent (undone when it
 * fails), ends when END_CAPTURE ended one. */
void fe_known_capture_begins(void);
void fe_known_capture_ends(void);

/* callbacks.c: records a host function that may run many times (a graph
 * host node's) and returns its callback id for the backend, 0 when out of
 * memory.  The record stays for the life of the process: the backend
 * runs it with "keep" set, as it does a host function captured from a
 * stream. */
uint64_t fe_callback_persistent(cudaHostFn_t fn, void *user);
/* The host function and data a persistent callback id stands for;
 * cudaErrorInvalidValue for an id that is not one. */
cudaError_t fe_callback_host_fn(uint64_t id, cudaHostFn_t *fn, void **user);

/* memasync.c: cudaMemcpyAsync without the last-error bookkeeping, for
 * the copies of other calls. */
cudaError_t fe_copy_async(void *dst, const void *src, size_t count,
                          enum cudaMemcpyKind kind, cudaStream_t stream,
                          int per_thread);

#endif
