/*
 * CUDA IPC memory and event handles (api/80-misc.api).  A handle is CUDA's own
 * opaque bytes: each client session is a worker process on the GPU host,
 * so a handle one worker exports opens natively in another.  Opening
 * reports the mapping's size, taken from the driver, so that the
 * frontend can record the mapping as a device allocation.
 */
#include "be.h"

#include <string.h>

#include <cuda.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

int cudart_be_ipc_get_mem_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t ptr;
    apigen_get_u64(&c, &ptr);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaIpcMemHandle_t h;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(ptr, 1);
    if (e == cudaSuccess)
        e = cudaIpcGetMemHandle(&h, (void *)(uintptr_t)ptr);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_bytes(&c, &h, sizeof(h));
    return c.rc;
}

typedef CUresult (*range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr p);

/* The size of the mapping at p, through the driver's cuMemGetAddressRange
 * (the runtime has no such query). */
static cudaError_t mapping_size(void *p, uint64_t *size)
{
    void *fn;
    cudaError_t e = be_driver_entry("cuMemGetAddressRange", 3020, &fn);
    if (e != cudaSuccess)
        return e;
    CUdeviceptr base;
    size_t n;
    if (((range_fn)fn)(&base, &n, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    *size = n;
    return cudaSuccess;
}

int cudart_be_ipc_open_mem_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const uint8_t *bytes;
    size_t len;
    uint32_t flags;
    apigen_get_blob(&c, &bytes, &len);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaIpcMemHandle_t h;
    if (len != sizeof(h))
        return GVS_E_PROTO;
    memcpy(&h, bytes, sizeof(h));
    void *p = NULL;
    uint64_t size = 0;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaIpcOpenMemHandle(&p, h, flags);
    if (e == cudaSuccess && mapping_size(p, &size) != cudaSuccess) {
        (void)cudaIpcCloseMemHandle(p);
        e = cudaErrorUnknown;
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
        apigen_put_u64(&c, size);
    }
    return c.rc;
}

int cudart_be_ipc_close_mem_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t ptr;
    apigen_get_u64(&c, &ptr);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(ptr, 1);
    if (e == cudaSuccess)
        e = cudaIpcCloseMemHandle((void *)(uintptr_t)ptr);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: blob handle (64 bytes).  Reply: i32, u64 event id.  The
 * opened event is the session's like one it created. */
int cudart_be_ipc_open_event_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const uint8_t *bytes;
    size_t len;
    apigen_get_blob(&c, &bytes, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaIpcEventHandle_t h;
    if (len != sizeof(h))
        return GVS_E_PROTO;
    memcpy(&h, bytes, sizeof(h));
    struct gvs_handles *t = be_handles();
    cudaEvent_t ev = NULL;
    uint64_t id = 0;
    cudaError_t e = t != NULL ? cudart_be_enter(call)
                              : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = cudaIpcOpenEventHandle(&ev, h);
    if (e == cudaSuccess && gvs_handles_add(t, BE_H_EVENT, ev, &id) < 0) {
        (void)cudaEventDestroy(ev);
        e = cudaErrorMemoryAllocation;
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}
