// 3D copies between the memory of two devices (cudaMemcpy3DPeer, its
// Async form, and the driver's cuMemcpy3DPeer between the devices'
// primary contexts and host memory).  With one GPU both sides are its
// own, which the calls take as well.
#include "check.h"
#include "driver_api.h"

#include <cstring>

#define W 64
#define H 8
#define D 4

static long checksum(const int *p, size_t n)
{
    long s = 0;
    for (size_t i = 0; i < n; i++)
        s += (long)p[i] * (long)(i % 7 + 1);
    return s;
}

int main()
{
    static int src[W * H * D], back[W * H * D];
    for (int i = 0; i < W * H * D; i++)
        src[i] = i * 3 + 1;
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    int peer = n > 1 ? 1 : 0;
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    if (driver_use_primary(0))
        return 1;

    cudaExtent ext = make_cudaExtent(W * sizeof(int), H, D);
    cudaPitchedPtr a, b;
    CHECK(cudaMalloc3D(&a, ext));
    CHECK(cudaSetDevice(peer));
    CHECK(cudaMalloc3D(&b, ext));
    CHECK(cudaSetDevice(0));
    cudaMemcpy3DParms up = {};
    up.srcPtr = make_cudaPitchedPtr(src, W * sizeof(int), W, H);
    up.dstPtr = a;
    up.extent = ext;
    up.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&up));

    cudaMemcpy3DPeerParms p = {};
    p.srcPtr = a;
    p.srcDevice = 0;
    p.dstPtr = b;
    p.dstDevice = peer;
    p.extent = ext;
    CHECK(cudaMemcpy3DPeer(&p));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    p.srcPtr = b;
    p.srcDevice = peer;
    p.dstPtr = a;
    p.dstDevice = 0;
    CHECK(cudaMemset3D(a, 0, ext));
    CHECK(cudaMemcpy3DPeerAsync(&p, s));
    CHECK(cudaStreamSynchronize(s));

    // The driver's form: the peer's memory to host memory, the source's
    // context the peer's primary one.
    CUcontext pc;
    CUresult r = DRIVER(cuDevicePrimaryCtxRetain)(&pc, peer);
    CUDA_MEMCPY3D_PEER c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = (CUdeviceptr)b.ptr;
    c.srcContext = pc;
    c.srcPitch = b.pitch;
    c.srcHeight = H;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = back;
    c.dstPitch = W * sizeof(int);
    c.dstHeight = H;
    c.WidthInBytes = W * sizeof(int);
    c.Height = H;
    c.Depth = D;
    if (r == CUDA_SUCCESS)
        r = DRIVER(cuMemcpy3DPeer)(&c);
    printf("driver 3D peer copy: %s\n", driver_error_name(r));
    printf("round trip intact: %d, checksum %ld\n",
           memcmp(src, back, sizeof(src)) == 0,
           checksum(back, W * H * D));

    // Device memory back through the async form, into a box inside it.
    memset(back, 0, sizeof(back));
    c.srcDevice = (CUdeviceptr)a.ptr;
    c.srcPitch = a.pitch;
    r = DRIVER(cuCtxGetCurrent)(&c.srcContext);
    c.srcY = 2;
    c.srcZ = 1;
    c.Height = H - 2;
    c.Depth = D - 1;
    if (r == CUDA_SUCCESS)
        r = DRIVER(cuMemcpy3DPeerAsync)(&c, s);
    CHECK(cudaStreamSynchronize(s));
    printf("driver async box: %s, checksum %ld\n", driver_error_name(r),
           checksum(back, W * H * D));
    printf("bad device: %s\n",
           cudaGetErrorName((p.dstDevice = 99, cudaMemcpy3DPeer(&p))));
    (void)cudaGetLastError();

    (void)DRIVER(cuDevicePrimaryCtxRelease)(peer);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a.ptr));
    CHECK(cudaFree(b.ptr));
    printf("done\n");
    return 0;
}
