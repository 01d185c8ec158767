// Built with --default-stream per-thread (ptsz.cmake): stream 0 is each
// thread's own stream, so one thread's slow work does not hold another's.
#include "check.h"
#include <atomic>
#include <thread>

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void fill(int *v, int x)
{
    v[threadIdx.x] = x + threadIdx.x;
}

static void CUDART_CB note(void *p)
{
    ++*(std::atomic<int> *)p;
}

int main()
{
    int khz;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    unsigned flags;
    CHECK(cudaStreamGetFlags(0, &flags));
    printf("default stream flags: %u\n", flags);
    // Natively a kernel's first launch loads it, which waits for the
    // kernels running on the device: load both before the race.
    int *d, h[32];
    CHECK(cudaMalloc(&d, sizeof(h)));
    spin<<<1, 1>>>(0);
    fill<<<1, 32>>>(d, 0);
    CHECK(cudaDeviceSynchronize());

    std::atomic<bool> spinning{false}, quick_done{false};
    cudaError_t slow_err = cudaSuccess, quick_err = cudaSuccess;
    cudaError_t query_while_other_spins = cudaErrorUnknown;
    bool slow_saw_quick = false;
    int quick_value = 0;
    std::atomic<int> notes{0};
    std::thread slow([&] {
        cudaEvent_t ev;
        if ((slow_err = cudaEventCreate(&ev)) != cudaSuccess)
            return;
        spin<<<1, 1>>>((long long)khz * 2000);
        slow_err = cudaEventRecord(ev, 0);
        spinning = true;
        if (slow_err == cudaSuccess)
            slow_err = cudaEventSynchronize(ev);
        slow_saw_quick = quick_done;
        if (slow_err == cudaSuccess)
            slow_err = cudaEventDestroy(ev);
    });
    std::thread quick([&] {
        while (!spinning)
            std::this_thread::yield();
        fill<<<1, 32>>>(d, 100);
        quick_err = cudaMemcpyAsync(h, d, sizeof(h), cudaMemcpyDeviceToHost, 0);
        if (quick_err == cudaSuccess)
            quick_err = cudaLaunchHostFunc(0, note, &notes);
        if (quick_err == cudaSuccess)
            quick_err = cudaStreamSynchronize(0);
        query_while_other_spins = cudaStreamQuery(0);
        quick_value = h[31];
        quick_done = true;
    });
    slow.join();
    quick.join();
    CHECK(slow_err);
    CHECK(quick_err);
    printf("quick thread: value %d, %d callback(s), own stream idle: %s\n",
           quick_value, notes.load(), cudaGetErrorName(query_while_other_spins));
    printf("quick thread done before the slow one's wait ended: %s\n",
           slow_saw_quick ? "yes" : "no");
    CHECK(cudaStreamSynchronize(0));

    // cudaMemcpy into page-locked memory returns with the bytes, here on
    // the thread's own stream, behind a kernel that holds it.
    int *pinned;
    CHECK(cudaMallocHost(&pinned, sizeof(h)));
    pinned[31] = 0;
    spin<<<1, 1>>>((long long)khz * 20);
    fill<<<1, 32>>>(d, 500);
    CHECK(cudaMemcpy(pinned, d, sizeof(h), cudaMemcpyDeviceToHost));
    printf("page-locked copy behind a slow kernel: %d\n", pinned[31]);
    for (int i = 0; i < 32; i++)
        pinned[i] = 1000 + i;
    spin<<<1, 1>>>((long long)khz * 20);
    CHECK(cudaMemcpy(d, pinned, sizeof(h), cudaMemcpyHostToDevice));
    pinned[31] = 0;
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    printf("page-locked copy to the device, then back: %d\n", h[31]);
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(d));
    printf("done\n");
    return 0;
}
