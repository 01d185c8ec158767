/* IPC memory and event handles (cuda.api, docs/driver.md "IPC"): the
 * handles' bytes travel as they are; an opened mapping is device memory
 * here (unified copies, pointer attributes) until it is closed, and an
 * opened event is an event of the session. */
#include "call.h"

#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"

/* cuda.h names the current entry point cuIpcOpenMemHandle (the macro to
 * _v2 is off here, fe.h); the driver exports both names. */
#pragma GCC visibility push(default)
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                               unsigned int Flags);
#pragma GCC visibility pop

static CUresult begin(struct apigen_call *c)
{
    CUresult r = cuda_fe_begin(c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    return r;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    struct apigen_call c;
    if (pHandle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, dptr);
    r = cuda_fe_run(&c, CUDA_OP_IPC_GET_MEM_HANDLE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_bytes(&c, pHandle, sizeof(*pHandle));
    return cuda_fe_end(&c, r);
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                               unsigned int Flags)
{
    struct apigen_call c;
    uint64_t p = 0, size = 0;
    if (pdptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_bytes(&c, &handle, sizeof(handle));
    apigen_put_u32(&c, Flags);
    r = cuda_fe_run_noted(&c, CUDA_OP_IPC_OPEN_MEM_HANDLE, &p, &size);
    if (r != CUDA_SUCCESS)
        return r;
    *pdptr = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                            unsigned int Flags)
{
    return cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    struct apigen_call c;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, dptr);
    r = cuda_fe_run(&c, CUDA_OP_IPC_CLOSE_MEM_HANDLE, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        cuda_fe_mem_forget(dptr);
    return r;
}

CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (phEvent == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_bytes(&c, &handle, sizeof(handle));
    r = cuda_fe_run(&c, CUDA_OP_IPC_OPEN_EVENT_HANDLE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &id);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *phEvent = (CUevent)(uintptr_t)id;
    return r;
}
