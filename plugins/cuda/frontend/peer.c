/* Peer copies (cuda.api, MEMCPY_PEER; docs/driver.md "Memory"): device
 * memory of one context to device memory of another, never cut, the
 * bytes staying on the backend, which checks both ranges as it checks a
 * device-to-device copy's; the driver checks the contexts.  A context
 * is its id. */
#include "call.h"

#include "cuda_ops.h"

#define PTDS ((uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)

/* Request: u64 stream, u8 flags (1: stream-ordered), u64 dst, u64 dst
 * context, u64 src, u64 src context, u64 count.  Reply: i32. */
static CUresult copy_peer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src,
                          CUcontext sc, size_t n, uint64_t stream, int async)
{
    struct apigen_call c;
    CUresult r = cuda_fe_copy_begin(&c, stream, async ? 1 : 0);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, dst);
    apigen_put_u64(&c, (uint64_t)(uintptr_t)dc);
    apigen_put_u64(&c, src);
    apigen_put_u64(&c, (uint64_t)(uintptr_t)sc);
    apigen_put_u64(&c, n);
    return cuda_fe_end(&c, cuda_fe_run(&c, CUDA_OP_MEMCPY_PEER,
                                       APIGEN_DEVICE));
}

CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src,
                      CUcontext sc, size_t n)
{
    return copy_peer(dst, dc, src, sc, n, 0, 0);
}

CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dc, CUdeviceptr src,
                           CUcontext sc, size_t n)
{
    return copy_peer(dst, dc, src, sc, n, PTDS, 0);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src,
                           CUcontext sc, size_t n, CUstream s)
{
    return copy_peer(dst, dc, src, sc, n, cuda_fe_stream_wire(s, 0), 1);
}

CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dc,
                                CUdeviceptr src, CUcontext sc, size_t n,
                                CUstream s)
{
    return copy_peer(dst, dc, src, sc, n, cuda_fe_stream_wire(s, 1), 1);
}
