// Calls that act on the current context alone, on threads that made no
// other call or one of several (issue 11, item 1): natively a thread has
// no current context until a runtime call that makes the device's
// primary context current, and cudaCtxResetPersistingL2Cache finds none
// before; through gvs a thread's calls may run on any of the session's
// threads, and must find the context the program's thread would.  Each
// thread's results are printed in thread order.
#include "check.h"
#include <thread>
#include <vector>

int main()
{
    float *d;
    CHECK(cudaMalloc(&d, 1 << 20));
    const int n = 8;
    std::vector<cudaError_t> reset(n), limit(n);
    std::vector<size_t> value(n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; i++)
        threads.emplace_back([&, i] {
            int count, attr;
            size_t stack;
            switch (i % 4) {
            case 1:
                CHECK(cudaGetDeviceCount(&count));
                CHECK(cudaDeviceGetAttribute(&attr, cudaDevAttrComputeCapabilityMajor, 0));
                break;
            case 2:
                CHECK(cudaSetDevice(0));
                break;
            case 3:
                CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
                break;
            }
            reset[i] = cudaCtxResetPersistingL2Cache();
            limit[i] = cudaDeviceGetLimit(&value[i], cudaLimitStackSize);
        });
    for (auto &t : threads)
        t.join();
    for (int i = 0; i < n; i++)
        printf("thread %d: reset %d, stack limit %d (%zu)\n", i, (int)reset[i],
               (int)limit[i], value[i]);
    CHECK(cudaCtxResetPersistingL2Cache());
    CHECK(cudaFree(d));
    printf("context_threads ok\n");
    return 0;
}
