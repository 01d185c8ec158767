// One thread waits in cudaStreamSynchronize behind a kernel that spins
// for 2 s while another thread makes many small calls on a stream of
// its own: the second must not wait for the first (issue 3, item 14).
#include "check.h"
#include <atomic>
#include <chrono>
#include <thread>

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void bump(int *v)
{
    v[threadIdx.x]++;
}

static double now()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int main()
{
    int khz;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    cudaStream_t slow, quick;
    CHECK(cudaStreamCreateWithFlags(&slow, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&quick, cudaStreamNonBlocking));
    int *d, h[32] = {0};
    CHECK(cudaMalloc(&d, sizeof(h)));
    CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    // Natively a kernel's first launch loads it, which waits for the
    // kernels running on the device: load both before the race.
    spin<<<1, 1, 0, slow>>>(0);
    bump<<<1, 32, 0, quick>>>(d);
    CHECK(cudaDeviceSynchronize());

    std::atomic<bool> waiting{false};
    double waited_until = 0, others_done = 0;
    int rounds = 0;
    cudaError_t waiter_err = cudaSuccess, other_err = cudaSuccess;
    std::thread waiter([&] {
        spin<<<1, 1, 0, slow>>>((long long)khz * 2000);
        waiting = true;
        waiter_err = cudaStreamSynchronize(slow);
        waited_until = now();
    });
    std::thread other([&] {
        while (!waiting)
            std::this_thread::yield();
        for (rounds = 0; rounds < 100 && other_err == cudaSuccess; rounds++) {
            bump<<<1, 32, 0, quick>>>(d);
            other_err = cudaMemcpyAsync(h, d, sizeof(h),
                                        cudaMemcpyDeviceToHost, quick);
            if (other_err == cudaSuccess)
                other_err = cudaStreamSynchronize(quick);
        }
        others_done = now();
    });
    waiter.join();
    other.join();
    CHECK(waiter_err);
    CHECK(other_err);
    printf("other thread: %d rounds, last value %d\n", rounds, h[31] - 1);
    printf("other thread finished while the first waited: %s\n",
           others_done < waited_until ? "yes" : "no");
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(slow));
    CHECK(cudaStreamDestroy(quick));
    printf("done\n");
    return 0;
}
