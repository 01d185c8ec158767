// Device odds and ends (CUDA Runtime API, "Device Management" and
// "Memory Management"): atomic capabilities, the 1D linear texture
// width, the valid-device list, pools by location, the RDMA flush and
// the driver's log buffer.
#include "check.h"

#include <cstring>
#include <thread>

int main()
{
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    cudaAtomicOperation ops[3] = {cudaAtomicOperationIntegerAdd,
                                  cudaAtomicOperationCAS,
                                  cudaAtomicOperationFloatAdd};
    unsigned caps[3];
    cudaError_t e = cudaDeviceGetHostAtomicCapabilities(caps, ops, 3, 0);
    printf("host atomics: %s", cudaGetErrorName(e));
    if (e == cudaSuccess)
        printf(" [%#x %#x %#x]", caps[0], caps[1], caps[2]);
    printf("\n");
    (void)cudaGetLastError();
    if (n > 1) {
        e = cudaDeviceGetP2PAtomicCapabilities(caps, ops, 3, 0, 1);
        printf("p2p atomics: %s", cudaGetErrorName(e));
        if (e == cudaSuccess)
            printf(" [%#x %#x %#x]", caps[0], caps[1], caps[2]);
        printf("\n");
        (void)cudaGetLastError();
    }

    size_t w1 = 0, w4 = 0;
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&w1, &f1, 0));
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&w4, &f4, 0));
    printf("1D linear max width: float %zu, float4 %zu\n", w1, w4);

    // A thread that chooses no device works on device 0, whatever the
    // valid-device list says (CUDA 13 on two H200s).
    int last = n - 1, list[2] = {last, 0}, dev = -1;
    CHECK(cudaSetValidDevices(list, n > 1 ? 2 : 1));
    std::thread([&] { CHECK(cudaGetDevice(&dev)); }).join();
    printf("a new thread's device: %d\n", dev);
    int bad = n + 3;
    printf("invalid entry: %s\n",
           cudaGetErrorName(cudaSetValidDevices(&bad, 1)));
    (void)cudaGetLastError();
    CHECK(cudaSetValidDevices(NULL, 0));

    cudaMemPool_t def, cur, plain;
    cudaMemLocation loc = {cudaMemLocationTypeDevice, 0};
    CHECK(cudaMemGetDefaultMemPool(&def, &loc, cudaMemAllocationTypePinned));
    CHECK(cudaMemGetMemPool(&cur, &loc, cudaMemAllocationTypePinned));
    CHECK(cudaDeviceGetDefaultMemPool(&plain, 0));
    printf("default pool by location is the device's: %d, current %d\n",
           def == plain, cur == plain);

    printf("RDMA flush: %s\n",
           cudaGetErrorName(cudaDeviceFlushGPUDirectRDMAWrites(
               cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
               cudaFlushGPUDirectRDMAWritesToOwner)));
    (void)cudaGetLastError();

    cudaLogIterator it;
    CHECK(cudaLogsCurrent(&it, 0));
    static char buf[32768];
    size_t size = sizeof(buf);
    CHECK(cudaLogsDumpToMemory(&it, buf, &size, 0));
    printf("logs since now: %zu bytes, terminated %d\n", size,
           strlen(buf) == size);
    printf("logs flags: %s\n",
           cudaGetErrorName(cudaLogsCurrent(&it, 1)));
    (void)cudaGetLastError();
    printf("done\n");
    return 0;
}
