// Device enumeration, properties against attributes, current device per
// thread, and versions.
#include "check.h"
#include <thread>

int main()
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    printf("devices: %d\n", count);
    EXPECT(count > 0);
    for (int dev = 0; dev < count; dev++) {
        cudaDeviceProp p;
        CHECK(cudaGetDeviceProperties(&p, dev));
        printf("device %d: %s sm_%d%d mem=%zu sms=%d warp=%d maxthreads=%d "
               "smem=%zu\n",
               dev, p.name, p.major, p.minor, p.totalGlobalMem,
               p.multiProcessorCount, p.warpSize, p.maxThreadsPerBlock,
               p.sharedMemPerBlock);
        int v = 0;
        CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
        EXPECT(v == p.multiProcessorCount);
        CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev));
        EXPECT(v == p.major);
        CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, dev));
        EXPECT(v == p.maxThreadsPerBlock);
    }
    int cur = -1;
    CHECK(cudaGetDevice(&cur));
    printf("current: %d\n", cur);
    CHECK(cudaSetDevice(count - 1));
    CHECK(cudaGetDevice(&cur));
    printf("after set: %d\n", cur);

    int in_thread = -1;
    std::thread t([&] { CHECK(cudaGetDevice(&in_thread)); });
    t.join();
    printf("new thread starts on: %d\n", in_thread);

    cudaError_t e = cudaSetDevice(count);
    printf("set invalid: %s\n", cudaGetErrorName(e));
    printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("last error again: %s\n", cudaGetErrorName(cudaGetLastError()));
    e = cudaGetDeviceProperties(nullptr, 0);
    printf("props(NULL): %s\n", cudaGetErrorName(e));
    cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, count + 3);
    printf("props(bad device): %s\n", cudaGetErrorName(e));
    printf("peek: %s\n", cudaGetErrorName(cudaPeekAtLastError()));
    printf("peek again: %s\n", cudaGetErrorName(cudaPeekAtLastError()));
    cudaGetLastError();

    int rt = 0, drv = 0;
    CHECK(cudaRuntimeGetVersion(&rt));
    CHECK(cudaDriverGetVersion(&drv));
    printf("runtime %d, driver >= runtime: %d\n", rt, drv >= rt);
    return 0;
}
