// Several devices as a program sees them, whatever their number (the CI
// GPU machines have one): per-device properties by PCI bus id, peers of
// every pair (a device with itself included), peer copies between the
// first and the last device, a host thread per device, and the
// per-device settings.
#include "check.h"
#include <cstring>
#include <thread>
#include <vector>

__global__ void fill(int *p, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + i;
}

static void code(const char *what, cudaError_t e)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    cudaGetLastError();
}

// Each thread works on its own device, chosen with cudaSetDevice.
static void on_device(int dev, int *ok)
{
    const int n = 4096;
    std::vector<int> h(n);
    int *d;
    *ok = cudaSetDevice(dev) == cudaSuccess &&
          cudaMalloc(&d, n * sizeof(int)) == cudaSuccess;
    if (!*ok)
        return;
    fill<<<n / 256, 256>>>(d, n, dev * 1000);
    *ok = cudaMemcpy(h.data(), d, n * sizeof(int),
                     cudaMemcpyDeviceToHost) == cudaSuccess;
    int cur = -1;
    *ok = *ok && cudaGetDevice(&cur) == cudaSuccess && cur == dev;
    for (int i = 0; *ok && i < n; i++)
        *ok = h[i] == dev * 1000 + i;
    *ok = cudaFree(d) == cudaSuccess && *ok;
}

int main()
{
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    printf("devices: %s\n", n >= 1 ? "at least one" : "none");
    for (int dev = 0; dev < n; dev++) {
        char bus[32];
        int back = -1;
        CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), dev));
        CHECK(cudaDeviceGetByPCIBusId(&back, bus));
        char shortbus[5];
        code("bus id in 5 bytes",
             cudaDeviceGetPCIBusId(shortbus, sizeof(shortbus), dev));
        printf("device %d: bus id round trip %s, short id %s\n", dev,
               back == dev ? "right" : "WRONG",
               strncmp(shortbus, bus, 4) == 0 && shortbus[4] == '\0'
                   ? "truncated"
                   : "WRONG");
        for (int peer = 0; peer < n; peer++) {
            int can = -1, rank = -1;
            CHECK(cudaDeviceCanAccessPeer(&can, dev, peer));
            cudaError_t e = cudaDeviceGetP2PAttribute(
                &rank, cudaDevP2PAttrPerformanceRank, dev, peer);
            printf("  peer %d: can access %d, rank %s\n", peer, can,
                   cudaGetErrorName(e));
            cudaGetLastError();
            CHECK(cudaSetDevice(dev));
            code("  enable peer access", cudaDeviceEnablePeerAccess(peer, 0));
            code("  disable peer access", cudaDeviceDisablePeerAccess(peer));
        }
    }
    code("peer of a device that does not exist",
         cudaDeviceEnablePeerAccess(n, 0));
    int bogus = -1;
    code("device by a bus id that does not exist",
         cudaDeviceGetByPCIBusId(&bogus, "0000:ff:1f.7"));

    // Copies between the first and the last device (the same one when
    // there is only one).
    const int count = 1 << 20;
    int last = n - 1;
    int *a, *b;
    std::vector<int> h(count), back(count);
    for (int i = 0; i < count; i++)
        h[i] = i ^ 0x5a5a;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&a, count * sizeof(int)));
    CHECK(cudaMemcpy(a, h.data(), count * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaSetDevice(last));
    CHECK(cudaMalloc(&b, count * sizeof(int)));
    CHECK(cudaMemcpyPeer(b, last, a, 0, count * sizeof(int)));
    CHECK(cudaMemcpy(back.data(), b, count * sizeof(int),
                     cudaMemcpyDeviceToHost));
    printf("peer copy: %s\n", h == back ? "right" : "WRONG");
    // A stream of the device that owns a, where its memset goes.
    cudaStream_t s;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemsetAsync(a, 0, count * sizeof(int), s));
    CHECK(cudaMemcpyPeerAsync(a, 0, b, last, count * sizeof(int), s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(back.data(), a, count * sizeof(int),
                     cudaMemcpyDeviceToHost));
    printf("async peer copy back: %s\n", h == back ? "right" : "WRONG");
    code("peer copy from host memory",
         cudaMemcpyPeer(b, last, h.data(), 0, 64));
    code("peer copy from a device that does not exist",
         cudaMemcpyPeer(b, last, a, n, 64));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(b));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(a));

    std::vector<int> ok(n);
    std::vector<std::thread> ts;
    for (int dev = 0; dev < n; dev++)
        ts.emplace_back(on_device, dev, &ok[dev]);
    for (auto &t : ts)
        t.join();
    int good = 0;
    for (int v : ok)
        good += v;
    printf("a thread per device: %s\n", good == n ? "right" : "WRONG");

    // Per-device settings.
    size_t lim = 0;
    CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
    CHECK(cudaDeviceGetLimit(&lim, cudaLimitStackSize));
    printf("stack size: %zu\n", lim);
    CHECK(cudaDeviceGetLimit(&lim, cudaLimitMallocHeapSize));
    printf("malloc heap: %zu\n", lim);
    code("unknown limit", cudaDeviceGetLimit(&lim, (cudaLimit)77));
    cudaFuncCache cc;
    CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferL1));
    CHECK(cudaDeviceGetCacheConfig(&cc));
    printf("cache config: %d\n", (int)cc);
    unsigned flags = 0;
    CHECK(cudaGetDeviceFlags(&flags));
    printf("flags: %#x\n", flags);
    CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    CHECK(cudaGetDeviceFlags(&flags));
    printf("flags after setting blocking sync: %#x\n", flags);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cudaSharedMemConfig smc;
    CHECK(cudaDeviceGetSharedMemConfig(&smc));
    printf("bank size: %d\n", (int)smc);
    code("set bank size", cudaDeviceSetSharedMemConfig(
                              cudaSharedMemBankSizeEightByte));
#pragma GCC diagnostic pop
    cudaDeviceProp want;
    memset(&want, 0, sizeof(want));
    want.major = 9;
    int chosen = -1;
    CHECK(cudaChooseDevice(&chosen, &want));
    printf("chosen for 9.x: %s\n", chosen >= 0 && chosen < n ? "a device" : "WRONG");
    CHECK(cudaInitDevice(0, 0, 0));
    code("init a device that does not exist", cudaInitDevice(n, 0, 0));
    return 0;
}
