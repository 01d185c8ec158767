/*
 * The runtime's side of the session's GPU memory quota (be.h,
 * docs/cudart.md "Memory quota"), which the remoting layer keeps for
 * every API (remote_be.h), and the handlers of the generic allocation
 * ops it needs: cudaMalloc, cudaFree, cudaMallocPitch, cudaFreeAsync,
 * cudaDeviceReset, cudaMemGetInfo, cudaGetDeviceProperties.
 */
#include "be.h"

#include <pthread.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "objects.h"

/* cudaMallocPitch / cudaMalloc3D pad rows to the device's pitch
 * alignment, 512 bytes on every GPU CUDA 13 supports: the bound taken
 * before the real pitch is known. */
#define PITCH_ALIGN 512u

cudaError_t be_quota_take(uint64_t bytes)
{
    return be_remote->quota_take(bytes) == 0 ? cudaSuccess
                                              : cudaErrorMemoryAllocation;
}

/* The first allocation on a device names it to gvsd (remote_be.h). */
static void name_device(int device)
{
    struct cudaDeviceProp prop;
    if (be_remote->quota_device_unnamed(device) &&
        cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        be_remote->quota_name_device(device,
                                     (const uint8_t *)prop.uuid.bytes);
}

void be_quota_settle(struct gvs_call *call, cudaError_t e,
                     enum be_quota_kind kind, uint64_t key, uint64_t owner,
                     uint64_t taken, uint64_t bytes)
{
    struct be_lane *l = be_lane(call);
    int device = l != NULL ? l->device : 0;
    if (e == cudaSuccess && key != 0)
        name_device(device);
    be_remote->quota_settle(e == cudaSuccess,
                            (enum gvs_remote_quota_kind)kind, key, device,
                            owner, taken, bytes);
}

void be_quota_release(enum be_quota_kind kind, uint64_t key)
{
    be_remote->quota_release((enum gvs_remote_quota_kind)kind, key);
}

void be_quota_release_device(int device)
{
    be_remote->quota_release_device(device);
}

void be_quota_release_owner(uint64_t owner)
{
    if (owner != 0)
        be_remote->quota_release_owner(owner);
}

void be_quota_mem_info(size_t *free, size_t *total)
{
    be_remote->quota_mem_info(free, total);
}

/* a * b * c, or UINT64_MAX when that overflows (be_quota_take refuses
 * it). */
static uint64_t product(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) ||
        __builtin_mul_overflow(ab, c, &abc))
        return UINT64_MAX;
    return abc;
}

uint64_t be_quota_pitched_bound(uint64_t width, uint64_t height,
                                uint64_t depth)
{
    uint64_t row = width + (PITCH_ALIGN - 1);
    if (row < width)
        return UINT64_MAX;
    return product(row & ~(uint64_t)(PITCH_ALIGN - 1), height, depth);
}

/* Handlers ------------------------------------------------------------ */

int cudart_be_cudamalloc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t size;
    apigen_get_u64(&c, &size);
    if (apigen_end(&c) < 0)
        return c.rc;
    void *p = NULL;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(size);
    if (e == cudaSuccess) {
        e = cudaMalloc(&p, (size_t)size);
        be_quota_settle(call, e, BE_QUOTA_PTR, (uint64_t)(uintptr_t)p, 0,
                        size, size);
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
    return c.rc;
}

/* Frees every kind of device allocation: cudaMalloc's, pitched, managed,
 * stream-ordered and graph memory alike. */
int cudart_be_cudafree(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p;
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaFree((void *)(uintptr_t)p);
    if (e == cudaSuccess && p != 0)
        be_quota_release(BE_QUOTA_PTR, p);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_cudamallocpitch(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t width, height;
    apigen_get_u64(&c, &width);
    apigen_get_u64(&c, &height);
    if (apigen_end(&c) < 0)
        return c.rc;
    void *p = NULL;
    size_t pitch = 0;
    uint64_t bound = be_quota_pitched_bound(width, height, 1);
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(bound);
    if (e == cudaSuccess) {
        e = cudaMallocPitch(&p, &pitch, (size_t)width, (size_t)height);
        be_quota_settle(call, e, BE_QUOTA_PTR, (uint64_t)(uintptr_t)p, 0,
                        bound, product(pitch, height, 1));
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
        apigen_put_u64(&c, pitch);
    }
    return c.rc;
}

/* The bytes go back when the free is enqueued: the stream frees them
 * soon after, and the pool may keep them (docs/cudart.md). */
int cudart_be_cudafreeasync(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p, stream;
    apigen_get_u64(&c, &p);
    apigen_get_u64(&c, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s = NULL;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    if (e == cudaSuccess)
        e = cudaFreeAsync((void *)(uintptr_t)p, s);
    if (e == cudaSuccess && p != 0)
        be_quota_release(BE_QUOTA_PTR, p);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* A reset frees every allocation of the lane's device, and destroys its
 * primary context's streams: the lanes' per-thread ones too. */
int cudart_be_cudadevicereset(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    be_remote->context_ending(call, &be_pinner);
    if (e == cudaSuccess)
        e = cudaDeviceReset();
    struct be_lane *l = be_lane(call);
    if (e == cudaSuccess && l != NULL) {
        be_quota_release_device(l->device);
        be_remote->ptds_lost(NULL, l->device);
    }
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_cudamemgetinfo(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    if (apigen_end(&c) < 0)
        return c.rc;
    size_t free = 0, total = 0;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemGetInfo(&free, &total);
    if (e == cudaSuccess)
        be_quota_mem_info(&free, &total);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, free);
        apigen_put_u64(&c, total);
    }
    return c.rc;
}

/* totalGlobalMem is the quota, so that frameworks size their caches to
 * what the session may hold.  The frontend caches the answer
 * (frontend/devcache.c); the quota is fixed for the session. */
int cudart_be_cudagetdeviceproperties(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t device;
    apigen_get_i32(&c, &device);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof(prop));
    cudaError_t e = cudaGetDeviceProperties(&prop, (int)device);
    if (e == cudaSuccess)
        be_quota_mem_info(NULL, &prop.totalGlobalMem);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_bytes(&c, &prop, sizeof(prop));
    return c.rc;
}
