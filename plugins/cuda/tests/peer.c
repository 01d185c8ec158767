/*
 * cuda.mock_peer: a driver API program (linked with -lcuda) through gvsd
 * and the mock driver (mock_peer.c): peer access enabled and disabled
 * with the driver's own answers, peer copies between the primary
 * contexts of the mock's two devices, and the ranges and contexts the
 * backend refuses.  Prints "ok".
 */
#include <string.h>

#include "driver_check.h"

#define N 4096

/* Each answer is the mock driver's, passed back as it is. */
static void access(CUcontext own, CUcontext peer)
{
    CHECK(cuCtxSetCurrent(own));
    EXPECT(cuCtxEnablePeerAccess(own, 0) ==
           CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    EXPECT(cuCtxEnablePeerAccess(peer, 1) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuCtxDisablePeerAccess(peer) ==
           CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CHECK(cuCtxEnablePeerAccess(peer, 0));
    EXPECT(cuCtxEnablePeerAccess(peer, 0) ==
           CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    CHECK(cuCtxDisablePeerAccess(peer));
    /* A context the session never had is the backend's to refuse. */
    EXPECT(cuCtxEnablePeerAccess((CUcontext)(uintptr_t)0x7777, 0) ==
           CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuCtxDisablePeerAccess((CUcontext)(uintptr_t)0x7777) ==
           CUDA_ERROR_INVALID_CONTEXT);
}

static void copies(CUcontext c0, CUcontext c1)
{
    static int src[N], back[N];
    for (int i = 0; i < N; i++)
        src[i] = i ^ 0x5a5a;
    CUdeviceptr a, b;
    CHECK(cuCtxSetCurrent(c0));
    CHECK(cuMemAlloc(&a, sizeof(src)));
    CHECK(cuMemcpyHtoD(a, src, sizeof(src)));
    CHECK(cuCtxSetCurrent(c1));
    CHECK(cuMemAlloc(&b, sizeof(src)));
    uint64_t before = now().round_trips;
    CHECK(cuMemcpyPeer(b, c1, a, c0, sizeof(src)));
    EXPECT(now().round_trips - before == 1);
    CHECK(cuMemcpyDtoH(back, b, sizeof(back)));
    EXPECT(memcmp(src, back, sizeof(src)) == 0);

    CUstream s;
    CHECK(cuCtxSetCurrent(c0));
    CHECK(cuStreamCreate(&s, 0));
    CHECK(cuMemsetD8Async(a, 0, sizeof(src), s));
    CHECK(cuMemcpyPeerAsync(a, c0, b, c1, sizeof(src), s));
    CHECK(cuStreamSynchronize(s));
    memset(back, 0, sizeof(back));
    CHECK(cuMemcpyDtoH(back, a, sizeof(back)));
    EXPECT(memcmp(src, back, sizeof(src)) == 0);
    CHECK(cuMemcpyPeerAsync(b, c1, a, c0, 64, CU_STREAM_PER_THREAD));
    CHECK(cuMemcpyPeer(b, c1, a, c0, 0));

    /* Host memory on either side, ranges past an allocation, a context
     * the session never had. */
    EXPECT(cuMemcpyPeer(b, c1, (CUdeviceptr)(uintptr_t)src, c0, 64) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyPeer((CUdeviceptr)(uintptr_t)back, c1, a, c0, 64) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyPeer(b, c1, a, c0, sizeof(src) + 1) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyPeerAsync(b, c1, a, (CUcontext)(uintptr_t)0x7777, 64,
                             s) == CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuMemcpyPeerAsync(b, c1, a, c0, 64,
                             (CUstream)(uintptr_t)0x7777) ==
           CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuStreamDestroy(s));
    CHECK(cuMemFree(a));
    CHECK(cuMemFree(b));
}

int main(void)
{
    CUcontext c0, c1;
    stats_init();
    EXPECT(cuMemcpyPeer(0, NULL, 0, NULL, 4) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&c0, 0));
    CHECK(cuDevicePrimaryCtxRetain(&c1, 1));
    access(c0, c1);
    copies(c0, c1);
    CHECK(cuCtxSetCurrent(NULL));
    CHECK(cuDevicePrimaryCtxRelease(0));
    CHECK(cuDevicePrimaryCtxRelease(1));
    printf("ok\n");
    return 0;
}
