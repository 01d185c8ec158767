/* IPC memory and event handles (cuda.api, docs/driver.md "IPC"): a
 * handle is the driver's own 64 bytes.  Each client process is a session
 * and a worker on the GPU host, so a handle one worker exports opens
 * natively in another's; within one session an opened mapping is device
 * memory as any other. */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"

/* IPC_GET_MEM_HANDLE and IPC_CLOSE_MEM_HANDLE, on device memory.
 * Request: u64 address.  Reply: i32, and for a get 64 bytes the
 * handle. */
int cuda_be_ipc_get_mem_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int get = call->op == CUDA_OP_IPC_GET_MEM_HANDLE;
    uint64_t p;
    CUipcMemHandle h;
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(p, 1);
    if (r == CUDA_SUCCESS)
        r = get ? CUDA_DRV(cuIpcGetMemHandle)(&h, (CUdeviceptr)p)
                : CUDA_DRV(cuIpcCloseMemHandle)((CUdeviceptr)p);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS && get)
        apigen_put_bytes(&c, &h, sizeof(h));
    return c.rc;
}

int cuda_be_ipc_close_mem_handle(struct gvs_call *call)
{
    return cuda_be_ipc_get_mem_handle(call);
}

/* Request: 64 bytes the handle, u32 flags.  Reply: i32, u64 address, u64
 * the mapping's size (the client records it as device memory). */
int cuda_be_ipc_open_mem_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUipcMemHandle h;
    uint32_t flags;
    CUdeviceptr p = 0, base = 0;
    size_t size = 0;
    if (c.rc == 0)
        c.rc = gvs_buf_get_bytes(call->in, &h, sizeof(h));
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuIpcOpenMemHandle_v2)(&p, h, flags);
    if (r == CUDA_SUCCESS &&
        CUDA_DRV(cuMemGetAddressRange_v2)(&base, &size, p) != CUDA_SUCCESS) {
        (void)CUDA_DRV(cuIpcCloseMemHandle)(p);
        r = CUDA_ERROR_UNKNOWN;
    }
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, p);
        apigen_put_u64(&c, size);
    }
    return c.rc;
}

/* Request: 64 bytes the handle.  Reply: i32, u64 the event's id (the
 * session's, as one it created). */
int cuda_be_ipc_open_event_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUipcEventHandle h;
    CUevent ev = NULL;
    uint64_t id = 0;
    if (c.rc == 0)
        c.rc = gvs_buf_get_bytes(call->in, &h, sizeof(h));
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuIpcOpenEventHandle)(&ev, h);
    if (r == CUDA_SUCCESS && cuda_be_event_enter(ev, &id) < 0) {
        (void)CUDA_DRV(cuEventDestroy_v2)(ev);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}
