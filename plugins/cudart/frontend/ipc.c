/*
 * CUDA IPC memory and event handles.  Two client processes are two
 * sessions, each a worker process on the GPU host, so a handle exported
 * through one opens natively in the other: the handle's bytes travel as
 * they are.
 * An opened mapping is recorded as a device allocation (cudaMemcpyDefault,
 * cudaPointerGetAttributes) until it is closed.
 */
#include "fe.h"

#include "cudart_fe_gen.h"
#include "cudart_ops.h"

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    if (handle == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(cudart_rpc_IPC_GET_MEM_HANDLE(handle, devPtr));
}

static cudaError_t open_mem(void **out, const cudaIpcMemHandle_t *h,
                            unsigned flags)
{
    struct apigen_call c;
    uint64_t p = 0, size = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_blob(&c, h, sizeof(*h));
    apigen_put_u32(&c, flags);
    e = cudart_fe_run(&c, CUDART_OP_IPC_OPEN_MEM_HANDLE, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &p);
        apigen_get_u64(&c, &size);
    }
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    if (!fe_mem_track((void *)(uintptr_t)p, (size_t)size)) {
        (void)cudart_rpc_IPC_CLOSE_MEM_HANDLE((void *)(uintptr_t)p);
        return cudaErrorMemoryAllocation;
    }
    *out = (void *)(uintptr_t)p;
    return cudaSuccess;
}

cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
                                 unsigned int flags)
{
    return cudart_fe_ret(open_mem(devPtr, &handle, flags));
}

cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
    cudaError_t e = cudart_rpc_IPC_CLOSE_MEM_HANDLE(devPtr);
    if (e == cudaSuccess)
        fe_mem_untrack(devPtr);
    return cudart_fe_ret(e);
}

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle,
                                  cudaEvent_t event)
{
    if (handle == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(cudart_rpc_cudaIpcGetEventHandle(handle, event));
}

/* The opened event is an event id of this session like a created one. */
static cudaError_t open_event(cudaEvent_t *out, const cudaIpcEventHandle_t *h)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_blob(&c, h, sizeof(*h));
    e = cudart_fe_run(&c, CUDART_OP_IPC_OPEN_EVENT_HANDLE, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &id);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = (cudaEvent_t)(uintptr_t)id;
    return e;
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event,
                                   cudaIpcEventHandle_t handle)
{
    return cudart_fe_ret(open_event(event, &handle));
}
