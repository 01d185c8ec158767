/* Events: handles are backend ids (docs/cudart.md, "Streams and events"). */
#include "streams.h"

#include "cudart_fe_gen.h"

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    unsigned long long id;
    if (event == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_rpc_EVENT_CREATE(&id, flags);
    if (e == cudaSuccess) {
        fe_known_add(FE_KNOWN_EVENT, id, fe_thread_device());
        *event = (cudaEvent_t)(uintptr_t)id;
    }
    return cudart_fe_ret(e);
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    fe_known_remove(FE_KNOWN_EVENT, fe_event_wire(event));
    return cudart_fe_ret(cudart_rpc_EVENT_DESTROY(fe_event_wire(event)));
}

/* Recording without flags is cudaEventRecordWithFlags, generated from
 * 10-streams.api with its _ptsz twin. */
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return cudaEventRecordWithFlags(event, stream, 0);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    return cudaEventRecordWithFlags_ptsz(event, stream, 0);
}
