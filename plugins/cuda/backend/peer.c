/* Peer copies (cuda.api, MEMCPY_PEER): between device memory of two
 * contexts, the bytes staying on the backend.  Both ranges are checked
 * to be device memory as a MEMCPY_D2D's are; the driver checks the
 * contexts' devices. */
#include "be.h"

#include "apigen_rt.h"
#include "gvs/err.h"

/* Request: u64 stream, u8 flags, u64 dst, u64 dst context, u64 src, u64
 * src context, u64 count.  Reply: i32. */
int cuda_be_memcpy_peer(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    uint8_t flags = 0;
    uint64_t dst, dst_ctx, src, src_ctx, count;
    CUcontext dc = NULL, sc = NULL;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &flags);
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &dst_ctx);
    apigen_get_u64(&c, &src);
    apigen_get_u64(&c, &src_ctx);
    apigen_get_u64(&c, &count);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags > CUDA_BE_PIECE_ASYNC)
        return GVS_E_PROTO;
    if (r == CUDA_SUCCESS)
        r = cuda_be_ctx(dst_ctx, &dc);
    if (r == CUDA_SUCCESS)
        r = cuda_be_ctx(src_ctx, &sc);
    if (r == CUDA_SUCCESS && count > SIZE_MAX)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(dst, count);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(src, count);
    if (r == CUDA_SUCCESS && (flags & CUDA_BE_PIECE_ASYNC))
        r = CUDA_DRV(cuMemcpyPeerAsync)((CUdeviceptr)dst, dc,
                                        (CUdeviceptr)src, sc, (size_t)count,
                                        s);
    else if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemcpyPeer)((CUdeviceptr)dst, dc, (CUdeviceptr)src,
                                   sc, (size_t)count);
    apigen_put_i32(&c, r);
    return c.rc;
}
