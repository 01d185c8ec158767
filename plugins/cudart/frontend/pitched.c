/*
 * Pitched and 3D allocations, recorded in the allocation map like
 * cudaMalloc's, and the 2D/3D memsets.
 */
#include "mem3d.h"

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "streams.h"

/* The allocation is released again when it cannot be recorded: untracked
 * memory would be misclassified by cudaMemcpyDefault. */
static cudaError_t track(void *p, size_t bytes)
{
    if (p != NULL && !fe_mem_track(p, bytes)) {
        (void)cudart_rpc_cudaFree(p);
        return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
                            size_t height)
{
    void *p;
    size_t pt;
    if (devPtr == NULL || pitch == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    *devPtr = NULL;
    cudaError_t e = cudart_rpc_cudaMallocPitch(&p, &pt, width, height);
    if (e == cudaSuccess)
        e = track(p, pt * height);
    if (e == cudaSuccess) {
        *devPtr = p;
        *pitch = pt;
    }
    return cudart_fe_ret(e);
}

static cudaError_t malloc3d(struct cudaPitchedPtr *out, struct cudaExtent ext)
{
    struct apigen_call c;
    uint64_t ptr, pitch;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, ext.width);
    apigen_put_u64(&c, ext.height);
    apigen_put_u64(&c, ext.depth);
    e = cudart_fe_run(&c, CUDART_OP_MALLOC_3D, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &ptr);
        apigen_get_u64(&c, &pitch);
    }
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    void *p = (void *)(uintptr_t)ptr;
    e = track(p, (size_t)pitch * ext.height * ext.depth);
    if (e == cudaSuccess)
        *out = (struct cudaPitchedPtr){p, (size_t)pitch, ext.width, ext.height};
    return e;
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr,
                         struct cudaExtent extent)
{
    if (pitchedDevPtr == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    pitchedDevPtr->ptr = NULL;
    return cudart_fe_ret(malloc3d(pitchedDevPtr, extent));
}

static cudaError_t memset3d(uint64_t ptr, uint64_t pitch, uint64_t ysize,
                            int value, struct fe_box box, int async,
                            cudaStream_t stream, int per_thread)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, ptr);
    apigen_put_u64(&c, pitch);
    apigen_put_u64(&c, ysize);
    apigen_put_i32(&c, value);
    fe_put_box(&c, &box);
    apigen_put_u8(&c, (uint8_t)async);
    apigen_put_u64(&c, async ? fe_stream_wire(stream, per_thread) : 0);
    e = cudart_fe_run(&c, CUDART_OP_MEMSET3D, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

static cudaError_t memset2d(void *p, size_t pitch, int value, size_t width,
                            size_t height, int async, cudaStream_t stream,
                            int per_thread)
{
    struct fe_box box = {width, height, 1};
    return memset3d((uint64_t)(uintptr_t)p, pitch, height, value, box, async,
                    stream, per_thread);
}

static cudaError_t memset3dp(struct cudaPitchedPtr p, int value,
                             struct cudaExtent ext, int async,
                             cudaStream_t stream, int per_thread)
{
    struct fe_box box = {ext.width, ext.height, ext.depth};
    return memset3d((uint64_t)(uintptr_t)p.ptr, p.pitch, p.ysize, value, box,
                    async, stream, per_thread);
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
                         size_t height)
{
    return cudart_fe_ret(
        memset2d(devPtr, pitch, value, width, height, 0, NULL, 0));
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value,
                              size_t width, size_t height, cudaStream_t stream)
{
    return cudart_fe_ret(
        memset2d(devPtr, pitch, value, width, height, 1, stream, 0));
}

cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
                                   size_t width, size_t height,
                                   cudaStream_t stream)
{
    return cudart_fe_ret(
        memset2d(devPtr, pitch, value, width, height, 1, stream, 1));
}

cudaError_t cudaMemset3D(struct cudaPitchedPtr pitchedDevPtr, int value,
                         struct cudaExtent extent)
{
    return cudart_fe_ret(memset3dp(pitchedDevPtr, value, extent, 0, NULL, 0));
}

cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr pitchedDevPtr, int value,
                              struct cudaExtent extent, cudaStream_t stream)
{
    return cudart_fe_ret(
        memset3dp(pitchedDevPtr, value, extent, 1, stream, 0));
}

cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr,
                                   int value, struct cudaExtent extent,
                                   cudaStream_t stream)
{
    return cudart_fe_ret(
        memset3dp(pitchedDevPtr, value, extent, 1, stream, 1));
}

/* The per-thread default stream's memsets are issued on that stream, as
 * natively (memsets do not wait for completion either way). */
cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value,
                              size_t width, size_t height)
{
    return cudart_fe_ret(
        memset2d(devPtr, pitch, value, width, height, 1, NULL, 1));
}

cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                              struct cudaExtent extent)
{
    return cudart_fe_ret(memset3dp(pitchedDevPtr, value, extent, 1, NULL, 1));
}
