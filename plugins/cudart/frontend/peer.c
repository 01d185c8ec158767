/* Peer copies.  Both ends are device addresses (or, in 3D, arrays) on
 * the backend; the backend checks them as it checks cudaMemcpy's, and
 * CUDA the devices. */
#include "devices.h"

#include "cudart_ops.h"
#include "mem3d.h"
#include "streams.h"

#pragma GCC visibility push(default)
cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p);
cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
                                       cudaStream_t stream);
#pragma GCC visibility pop

/* Request: u64 dst, i32 dst device, u64 src, i32 src device, u64 count,
 * u8 async, u64 stream (async only).  Reply: i32 result. */
static cudaError_t copy_peer(void *dst, int dstDevice, const void *src,
                             int srcDevice, size_t count, int async,
                             cudaStream_t stream)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, (uint64_t)(uintptr_t)dst);
    apigen_put_i32(&c, dstDevice);
    apigen_put_u64(&c, (uint64_t)(uintptr_t)src);
    apigen_put_i32(&c, srcDevice);
    apigen_put_u64(&c, count);
    apigen_put_u8(&c, (uint8_t)async);
    if (async)
        apigen_put_u64(&c, fe_stream_wire(stream, 0));
    e = cudart_fe_run(&c, CUDART_OP_MEMCPY_PEER, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src,
                           int srcDevice, size_t count)
{
    return cudart_fe_ret(
        copy_peer(dst, dstDevice, src, srcDevice, count, 0, NULL));
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                int srcDevice, size_t count,
                                cudaStream_t stream)
{
    return cudart_fe_ret(
        copy_peer(dst, dstDevice, src, srcDevice, count, 1, stream));
}

/* cudaMemcpy3DPeer: a 3D copy between device memory or arrays of two
 * devices.  With unified addressing the backend's 3D copy reaches both
 * devices' memory, so the parameters become cudaMemcpy3D's, device to
 * device; the devices of the ends must exist. */
static cudaError_t copy3d_peer(const struct cudaMemcpy3DPeerParms *p,
                               int async, cudaStream_t stream, int per_thread)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    if (p->srcDevice < 0 || p->srcDevice >= fe_device_count() ||
        p->dstDevice < 0 || p->dstDevice >= fe_device_count())
        return cudaErrorInvalidDevice;
    struct cudaMemcpy3DParms q = {
        .srcArray = p->srcArray, .srcPos = p->srcPos, .srcPtr = p->srcPtr,
        .dstArray = p->dstArray, .dstPos = p->dstPos, .dstPtr = p->dstPtr,
        .extent = p->extent, .kind = cudaMemcpyDeviceToDevice};
    struct fe_side d, s;
    struct fe_box box;
    e = fe_copy3d_params(&q, &d, &s, &box);
    if (e != cudaSuccess)
        return e;
    return fe_copy3d(&d, &s, &box, async,
                     async ? fe_stream_wire(stream, per_thread) : 0);
}

cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
    return cudart_fe_ret(copy3d_peer(p, 0, NULL, 0));
}

cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
    return cudart_fe_ret(copy3d_peer(p, 0, NULL, 0));
}

cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p,
                                  cudaStream_t stream)
{
    return cudart_fe_ret(copy3d_peer(p, 1, stream, 0));
}

cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
                                       cudaStream_t stream)
{
    return cudart_fe_ret(copy3d_peer(p, 1, stream, 1));
}
