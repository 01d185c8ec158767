/* Peer copies.  Both ends are device addresses on the backend; the
 * backend checks them as it checks cudaMemcpy's, and CUDA the devices. */
#include "devices.h"

#include "cudart_ops.h"
#include "streams.h"

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
