/*
 * The session's CUDA objects as the client sees them: opaque ids of one
 * handle table (include/gvs/handles.h), each tagged with its type: the
 * remoting layer's, shared with the other APIs of the session.
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
#include "remote_be.h"

/* The layer's table (remote_be.h): the driver plugin finds these ids
 * under the same types. */
enum be_handle_type {
    BE_H_STREAM = GVS_RH_STREAM,
    BE_H_EVENT = GVS_RH_EVENT,
    BE_H_GRAPH = GVS_RH_GRAPH,
    BE_H_GRAPH_EXEC = GVS_RH_GRAPH_EXEC,
    BE_H_GRAPH_NODE = GVS_RH_GRAPH_NODE,
    BE_H_MEMPOOL = GVS_RH_MEMPOOL,
    BE_H_ARRAY = GVS_RH_ARRAY,
    BE_H_MIPMAPPED_ARRAY = GVS_RH_MIPMAPPED_ARRAY,
    BE_H_TEXTURE = GVS_RH_TEXTURE,
    BE_H_SURFACE = GVS_RH_SURFACE,
    BE_H_USER_OBJECT = GVS_RH_USER_OBJECT,
    BE_H_ASYNC_CALLBACK = GVS_RH_ASYNC_CALLBACK,
    BE_H_LOGS_CALLBACK = GVS_RH_LOGS_CALLBACK,
};

/* The session's table, created on first use; NULL only when that
 * allocation failed. */
struct gvs_handles *be_handles(void);

struct apigen_call;

/* Replies i32 e, then, on success, u64 v: the answer of the ops that
 * create or find an object (its id) or read one value. */
void be_reply_u64(struct apigen_call *c, cudaError_t e, uint64_t v);

/* backend/streams.c: the stream a wire value stands for in the lane of
 * call: 0 and cudaStreamLegacy the legacy default stream,
 * cudaStreamPerThread the lane's own per-thread default stream (the
 * layer's, one with the driver's CU_STREAM_PER_THREAD), anything else a BE_H_STREAM id.  Unknown id:
 * cudaErrorInvalidResourceHandle. */
cudaError_t be_stream(struct gvs_call *call, uint64_t wire,
                      cudaStream_t *out);

/* The preamble of a stream-ordered op on device memory: enters the
 * lane's device, finds the stream of wire (be_stream), then checks that
 * the len bytes at p are device memory (be_check_device_range).  The
 * first failure. */
cudaError_t be_enter_stream_range(struct gvs_call *call, uint64_t wire,
                                  cudaStream_t *out, uint64_t p,
                                  uint64_t len);

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
