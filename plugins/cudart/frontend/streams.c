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
    if (e == cudaSuccess) {
        fe_known_add(FE_KNOWN_STREAM, id, fe_thread_device());
        *pStream = (cudaStream_t)(uintptr_t)id;
    }
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

/* Unknown before the request leaves: no call posted from now on names
 * it. */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    fe_known_remove(FE_KNOWN_STREAM, fe_stream_wire(stream, 0));
    return cudart_fe_ret(cudart_rpc_STREAM_DESTROY(fe_stream_wire(stream, 0)));
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
