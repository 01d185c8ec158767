/*
 * The session's CUDA objects as the client sees them: opaque ids of one
 * handle table (include/gvs/handles.h), each tagged with its type.  A
 * worker process serves exactly one session, so the table is the
 * process's.
 *
 * The frontend sends these ids where CUDA takes a handle; a handler turns
 * each back into the CUDA object with the functions below and answers
 * cudaErrorInvalidResourceHandle (or the code CUDA gives for that API)
 * for an id it does not know.
 */
#ifndef CUDART_BE_OBJECTS_H
#define CUDART_BE_OBJECTS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "gvs/handles.h"
#include "gvs/plugin.h"

enum be_handle_type {
    BE_H_STREAM = 1,
    BE_H_EVENT,
    BE_H_GRAPH,
    BE_H_GRAPH_EXEC,
    BE_H_GRAPH_NODE,
    BE_H_MEMPOOL,
    BE_H_ARRAY,
    BE_H_MIPMAPPED_ARRAY,
    BE_H_TEXTURE,
    BE_H_SURFACE,
    BE_H_USER_OBJECT,
    BE_H_ASYNC_CALLBACK, /* cudaDeviceRegisterAsyncNotification's */
    BE_H_LOGS_CALLBACK,  /* cudaLogsRegisterCallback's */
};

/* The session's table, created on first use; NULL only when that
 * allocation failed. */
struct gvs_handles *be_handles(void);

/* backend/streams.c: the stream a wire value stands for in the lane of
 * call: 0 and cudaStreamLegacy the legacy default stream,
 * cudaStreamPerThread the lane's own per-thread default stream (created
 * on first use), anything else a BE_H_STREAM id.  Unknown id:
 * cudaErrorInvalidResourceHandle. */
cudaError_t be_stream(struct gvs_call *call, uint64_t wire,
                      cudaStream_t *out);

/* backend/events.c: the event of a BE_H_EVENT id, or
 * cudaErrorInvalidResourceHandle. */
cudaError_t be_event(uint64_t wire, cudaEvent_t *out);
/* The id of an event the session created, or 0. */
uint64_t be_event_id(cudaEvent_t ev);

/* backend/pools.c: the pool of a BE_H_MEMPOOL id, or cudaErrorInvalidValue
 * (what CUDA answers for a pool it does not know). */
cudaError_t be_pool(uint64_t wire, cudaMemPool_t *out);

/* backend/graphs.c: the executable graph of a BE_H_GRAPH_EXEC id, or
 * cudaErrorInvalidValue. */
cudaError_t be_graph_exec(uint64_t wire, cudaGraphExec_t *out);

#endif
