/* Device memory (cuda.api): allocations counted against the session's
 * quota (the layer's, shared with the runtime's), memsets.  Device addresses are checked to be
 * device memory before the driver touches them: a host address would be
 * the worker's. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* Device memory, managed memory included (which the driver may call
 * unified). */
static int is_device(uint64_t p)
{
    unsigned int type = 0;
    return CUDA_DRV(cuPointerGetAttribute)(&type,
                                           CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                           (CUdeviceptr)p) == CUDA_SUCCESS &&
           (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED);
}

CUresult cuda_be_check_device_range(uint64_t p, uint64_t len)
{
    if (len == 0)
        return CUDA_SUCCESS;
    if (p + len < p)
        return CUDA_ERROR_INVALID_VALUE;
    if ((!is_device(p) || !is_device(p + len - 1)) &&
        !cuda_be_remote->graph_range_has(p, len))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

int cuda_be_quota_name(int dev)
{
    CUuuid uuid;
    if (cuda_be_remote->quota_device_unnamed(dev) &&
        CUDA_DRV(cuDeviceGetUuid_v2)(&uuid, dev) == CUDA_SUCCESS)
        cuda_be_remote->quota_name_device(dev, (const uint8_t *)uuid.bytes);
    return dev;
}

int cuda_be_quota_device(void)
{
    CUdevice dev = 0;
    (void)CUDA_DRV(cuCtxGetDevice)(&dev);
    return cuda_be_quota_name(dev);
}

/* MEM_ALLOC, request: u64 size; MEM_ALLOC_MANAGED, request: u64 size,
 * u32 flags.  Reply: i32, u64 address.  Counted against the quota. */
int cuda_be_mem_alloc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int managed = call->op == CUDA_OP_MEM_ALLOC_MANAGED;
    uint64_t size;
    uint32_t flags = 0;
    CUdeviceptr p = 0;
    apigen_get_u64(&c, &size);
    if (managed)
        apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && size == 0)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && cuda_be_remote->quota_take(size) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (r == CUDA_SUCCESS) {
        r = managed ? CUDA_DRV(cuMemAllocManaged)(&p, (size_t)size, flags)
                    : CUDA_DRV(cuMemAlloc_v2)(&p, (size_t)size);
        cuda_be_remote->quota_settle(r == CUDA_SUCCESS, GVS_RQ_PTR, p,
                                     cuda_be_quota_device(), 0, size, size);
    }
    cuda_be_reply_id(&c, r, p);
    return c.rc;
}

int cuda_be_mem_alloc_managed(struct gvs_call *call)
{
    return cuda_be_mem_alloc(call);
}

/* Request: u64 address.  Reply: i32. */
int cuda_be_mem_free(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p;
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemFree_v2)((CUdeviceptr)p);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->quota_release(GVS_RQ_PTR, p);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Reply: i32, u64 free, u64 total, as the session may see them. */
int cuda_be_cumemgetinfo_v2(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    size_t free = 0, total = 0;
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemGetInfo_v2)(&free, &total);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->quota_mem_info(&free, &total);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, free);
        apigen_put_u64(&c, total);
    }
    return c.rc;
}

CUresult cuda_be_enter_stream(struct gvs_call *call, struct apigen_call *c,
                              CUstream *s, uint8_t *flags)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    apigen_get_u8(c, flags);
    if (c->rc < 0)
        return CUDA_SUCCESS;
    /* A _ptds copy or memset is ordered on the lane's per-thread stream,
     * not the legacy one: it is the stream-ordered form there, which the
     * host sees alike (a copy into the reply still waits for its bytes,
     * one from the request has left when the driver returns). */
    if (wire == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)
        *flags |= 1;
    CUresult r = cuda_be_enter(call);
    return r == CUDA_SUCCESS ? cuda_be_stream(call, wire, s) : r;
}

/* One row of a memset, or a rectangle of them: the driver's 1D call for
 * one row, as a program's own would be. */
static CUresult set(uint64_t d, uint64_t pitch, uint32_t v, uint64_t w,
                    uint64_t h, uint8_t size, CUstream s, int async)
{
    if (h == 1 && size == 1)
        return async ? CUDA_DRV(cuMemsetD8Async)(d, (unsigned char)v, w, s)
                     : CUDA_DRV(cuMemsetD8_v2)(d, (unsigned char)v, w);
    if (h == 1 && size == 2)
        return async ? CUDA_DRV(cuMemsetD16Async)(d, (unsigned short)v, w, s)
                     : CUDA_DRV(cuMemsetD16_v2)(d, (unsigned short)v, w);
    if (h == 1)
        return async ? CUDA_DRV(cuMemsetD32Async)(d, v, w, s)
                     : CUDA_DRV(cuMemsetD32_v2)(d, v, w);
    if (size == 1)
        return async ? CUDA_DRV(cuMemsetD2D8Async)(d, pitch, (unsigned char)v,
                                                   w, h, s)
                     : CUDA_DRV(cuMemsetD2D8_v2)(d, pitch, (unsigned char)v,
                                                 w, h);
    if (size == 2)
        return async ? CUDA_DRV(cuMemsetD2D16Async)(
                           d, pitch, (unsigned short)v, w, h, s)
                     : CUDA_DRV(cuMemsetD2D16_v2)(d, pitch, (unsigned short)v,
                                                  w, h);
    return async ? CUDA_DRV(cuMemsetD2D32Async)(d, pitch, v, w, h, s)
                 : CUDA_DRV(cuMemsetD2D32_v2)(d, pitch, v, w, h);
}

/* Request: u64 stream, u8 async, u8 element size (1, 2, 4), u64 dst,
 * u64 pitch, u32 value, u64 width in elements, u64 height.  Reply: i32. */
int cuda_be_memset(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    uint8_t flags = 0, size;
    uint64_t dst, pitch, w, h;
    uint32_t v;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &flags);
    apigen_get_u8(&c, &size);
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &pitch);
    apigen_get_u32(&c, &v);
    apigen_get_u64(&c, &w);
    apigen_get_u64(&c, &h);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > 1 || (size != 1 && size != 2 && size != 4) ||
        w > UINT64_MAX / size)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_rect(dst, pitch, w * size, h);
    if (r == CUDA_SUCCESS && w > 0 && h > 0)
        r = set(dst, pitch, v, w, h, size, s, flags & 1);
    if (call->noreply && r != CUDA_SUCCESS)
        cuda_be_posted_failure(call, (int)r);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* cuMemAllocPitch pads rows to the device's pitch alignment, 512 bytes
 * on every GPU CUDA 13 supports: the bound taken before the driver
 * chooses the pitch. */
#define PITCH_ALIGN 512u

/* Request: u64 width, u64 height, u32 element size.  Reply: i32, u64
 * address, u64 pitch. */
int cuda_be_mem_alloc_pitch(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t width, height, bound;
    uint32_t elem;
    CUdeviceptr p = 0;
    size_t pitch = 0;
    apigen_get_u64(&c, &width);
    apigen_get_u64(&c, &height);
    apigen_get_u32(&c, &elem);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    uint64_t row = width + (PITCH_ALIGN - 1);
    if (r == CUDA_SUCCESS &&
        (row < width ||
         __builtin_mul_overflow(row & ~(uint64_t)(PITCH_ALIGN - 1), height,
                                &bound)))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS && cuda_be_remote->quota_take(bound) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (r == CUDA_SUCCESS) {
        r = CUDA_DRV(cuMemAllocPitch_v2)(&p, &pitch, (size_t)width,
                                         (size_t)height, elem);
        cuda_be_remote->quota_settle(r == CUDA_SUCCESS, GVS_RQ_PTR, p,
                                     cuda_be_quota_device(), 0, bound,
                                     (uint64_t)pitch * height);
    }
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, p);
        apigen_put_u64(&c, pitch);
    }
    return c.rc;
}
