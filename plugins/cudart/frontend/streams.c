/*
 * Streams: handles are backend ids; the special values (0,
 * cudaStreamLegacy, cudaStreamPerThread) travel as themselves, and the
 * backend resolves them for the calling thread (docs/cudart.md, "Streams
 * and events").
 */
#include "streams.h"

#include "cudart_fe_gen.h"

uint64_t fe_stream_wire(cudaStream_t s, int per_thread)
{
    if (s == NULL && per_thread)
        return (uint64_t)(uintptr_t)cudaStreamPerThread;
    return (uint64_t)(uintptr_t)s;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream,
                                         unsigned int flags, int priority)
{
    unsigned long long id;
    if (pStream == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_rpc_STREAM_CREATE(&id, flags, priority);
    if (e == cudaSuccess)
        *pStream = (cudaStream_t)(uintptr_t)id;
    return cudart_fe_ret(e);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
                                      unsigned int flags)
{
    return cudaStreamCreateWithPriority(pStream, flags, 0);
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithPriority(pStream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    return cudart_fe_ret(cudart_rpc_STREAM_DESTROY(fe_stream_wire(stream, 0)));
}

static cudaError_t query(cudaStream_t stream, int per_thread)
{
    return cudart_fe_ret(
        cudart_rpc_STREAM_QUERY(fe_stream_wire(stream, per_thread)));
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return query(stream, 0);
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
    return query(stream, 1);
}

static cudaError_t synchronize(cudaStream_t stream, int per_thread)
{
    return cudart_fe_ret(
        cudart_rpc_STREAM_SYNCHRONIZE(fe_stream_wire(stream, per_thread)));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return synchronize(stream, 0);
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    return synchronize(stream, 1);
}

static cudaError_t get_flags(cudaStream_t s, unsigned int *flags, int pt)
{
    return cudart_fe_ret(
        cudart_rpc_STREAM_GET_FLAGS(flags, fe_stream_wire(s, pt)));
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    return get_flags(hStream, flags, 0);
}

cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
    return get_flags(hStream, flags, 1);
}

static cudaError_t get_priority(cudaStream_t s, int *priority, int pt)
{
    return cudart_fe_ret(
        cudart_rpc_STREAM_GET_PRIORITY(priority, fe_stream_wire(s, pt)));
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    return get_priority(hStream, priority, 0);
}

cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
    return get_priority(hStream, priority, 1);
}

static cudaError_t get_device(cudaStream_t s, int *device, int pt)
{
    return cudart_fe_ret(
        cudart_rpc_STREAM_GET_DEVICE(device, fe_stream_wire(s, pt)));
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
    return get_device(hStream, device, 0);
}

cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int *device)
{
    return get_device(hStream, device, 1);
}

static cudaError_t get_id(cudaStream_t s, unsigned long long *id, int pt)
{
    return cudart_fe_ret(cudart_rpc_STREAM_GET_ID(id, fe_stream_wire(s, pt)));
}

cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
    return get_id(hStream, streamId, 0);
}

cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream,
                                 unsigned long long *streamId)
{
    return get_id(hStream, streamId, 1);
}

static cudaError_t wait_event(cudaStream_t s, cudaEvent_t e,
                              unsigned int flags, int pt)
{
    return cudart_fe_ret(cudart_rpc_STREAM_WAIT_EVENT(
        fe_stream_wire(s, pt), fe_event_wire(e), flags));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags)
{
    return wait_event(stream, event, flags, 0);
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                     unsigned int flags)
{
    return wait_event(stream, event, flags, 1);
}

/* Either pointer may be NULL, as natively. */
cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority,
                                             int *greatestPriority)
{
    int least, greatest;
    cudaError_t e = cudart_rpc_cudaDeviceGetStreamPriorityRange(&least,
                                                                &greatest);
    if (e == cudaSuccess && leastPriority != NULL)
        *leastPriority = least;
    if (e == cudaSuccess && greatestPriority != NULL)
        *greatestPriority = greatest;
    return cudart_fe_ret(e);
}
