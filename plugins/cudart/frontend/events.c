/* Events: handles are backend ids (docs/cudart.md, "Streams and events"). */
#include "streams.h"

#include <string.h>

#include "cudart_fe_gen.h"

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    unsigned long long id;
    if (event == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_rpc_EVENT_CREATE(&id, flags);
    if (e == cudaSuccess)
        *event = (cudaEvent_t)(uintptr_t)id;
    return cudart_fe_ret(e);
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    return cudart_fe_ret(cudart_rpc_EVENT_DESTROY(fe_event_wire(event)));
}

static cudaError_t record(cudaEvent_t event, cudaStream_t stream,
                          unsigned int flags, int per_thread)
{
    return cudart_fe_ret(cudart_rpc_EVENT_RECORD(
        fe_event_wire(event), fe_stream_wire(stream, per_thread), flags));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return record(event, stream, 0, 0);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    return record(event, stream, 0, 1);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                     unsigned int flags)
{
    return record(event, stream, flags, 0);
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event,
                                          cudaStream_t stream,
                                          unsigned int flags)
{
    return record(event, stream, flags, 1);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return cudart_fe_ret(cudart_rpc_EVENT_QUERY(fe_event_wire(event)));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return cudart_fe_ret(cudart_rpc_EVENT_SYNCHRONIZE(fe_event_wire(event)));
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t end)
{
    unsigned int bits;
    if (ms == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_rpc_EVENT_ELAPSED_TIME(&bits, fe_event_wire(start),
                                                  fe_event_wire(end));
    if (e == cudaSuccess) {
        _Static_assert(sizeof(bits) == sizeof(*ms), "a float is 32 bits");
        memcpy(ms, &bits, sizeof(*ms));
    }
    return cudart_fe_ret(e);
}
