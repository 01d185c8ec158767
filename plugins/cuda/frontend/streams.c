/* Streams and events (cuda.api): created and destroyed here, the rest
 * generated. */
#include "call.h"

#include "cuda_fe_gen.h"
#include "cuda_ops.h"

uint64_t cuda_fe_stream_wire(CUstream s, int per_thread)
{
    if (s == NULL && per_thread)
        return (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
    return (uint64_t)(uintptr_t)s;
}

static CUresult create(uint16_t op, uint32_t flags, int has_prio, int prio,
                       uint64_t *id)
{
    struct apigen_call c;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u32(&c, flags);
    if (has_prio)
        apigen_put_i32(&c, prio);
    r = cuda_fe_run(&c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, id);
    return cuda_fe_end(&c, r);
}

static CUresult destroy(uint16_t op, uint64_t id)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, id);
    r = cuda_fe_run(&c, op, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                    int priority)
{
    uint64_t id = 0;
    if (phStream == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = create(CUDA_OP_STREAM_CREATE, flags, 1, priority, &id);
    if (r == CUDA_SUCCESS)
        *phStream = (CUstream)(uintptr_t)id;
    return r;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    return destroy(CUDA_OP_STREAM_DESTROY, (uint64_t)(uintptr_t)hStream);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    uint64_t id = 0;
    if (phEvent == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = create(CUDA_OP_EVENT_CREATE, Flags, 0, 0, &id);
    if (r == CUDA_SUCCESS)
        *phEvent = (CUevent)(uintptr_t)id;
    return r;
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    return destroy(CUDA_OP_EVENT_DESTROY, (uint64_t)(uintptr_t)hEvent);
}
