/*
 * Streams and events on the frontend side (frontend/streams.c,
 * frontend/events.c).  Stream and event handles given to the program are
 * the backend's opaque ids (backend/objects.h) cast to pointers; the
 * frontend only translates the special stream values.
 */
#ifndef CUDART_FE_STREAMS_H
#define CUDART_FE_STREAMS_H

#include "fe.h"

/* The wire value of a stream argument.  per_thread is set by the _ptsz /
 * _ptds entry points (nvcc --default-stream per-thread): there the null
 * stream means the calling thread's default stream, cudaStreamPerThread. */
uint64_t fe_stream_wire(cudaStream_t s, int per_thread);

/* The wire value of an event argument. */
static inline uint64_t fe_event_wire(cudaEvent_t e)
{
    return (uint64_t)(uintptr_t)e;
}

#endif
