// Host callbacks: cudaLaunchHostFunc and cudaStreamAddCallback run in
// stream order after the work before them, and the work after them waits
// for them to return.
#include "check.h"
#include <atomic>
#include <unistd.h>
#include <vector>

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void fill(int *v, int x)
{
    v[threadIdx.x] = x;
}

static std::vector<int> order;
static std::atomic<int> calls{0};
static int *host_copy;
static int seen_value = -1;
static cudaStream_t seen_stream;
static cudaError_t seen_status = cudaErrorUnknown;

static void CUDART_CB note(void *p)
{
    order.push_back((int)(intptr_t)p);
    calls++;
}

// Runs after the D2H copy before it in the stream: the bytes are there.
static void CUDART_CB read_copy(void *p)
{
    seen_value = host_copy[(intptr_t)p];
    calls++;
}

static void CUDART_CB slow(void *p)
{
    usleep(200000);
    order.push_back((int)(intptr_t)p);
    calls++;
}

static void CUDART_CB stream_cb(cudaStream_t s, cudaError_t status, void *p)
{
    seen_stream = s;
    seen_status = status;
    order.push_back((int)(intptr_t)p);
    calls++;
}

int main()
{
    int khz;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    cudaStream_t s, t;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    int *d;
    CHECK(cudaMalloc(&d, 32 * sizeof(int)));
    CHECK(cudaMallocHost(&host_copy, 32 * sizeof(int)));

    // After a slow kernel and a copy, in order, with the stream's status.
    spin<<<1, 1, 0, s>>>((long long)khz * 100);
    fill<<<1, 32, 0, s>>>(d, 42);
    CHECK(cudaMemcpyAsync(host_copy, d, 32 * sizeof(int),
                          cudaMemcpyDeviceToHost, s));
    CHECK(cudaLaunchHostFunc(s, read_copy, (void *)31));
    CHECK(cudaLaunchHostFunc(s, note, (void *)1));
    CHECK(cudaStreamAddCallback(s, stream_cb, (void *)2, 0));
    CHECK(cudaStreamSynchronize(s));
    printf("after the copy: %d\n", seen_value);
    printf("stream callback: same stream %s, status %s\n",
           seen_stream == s ? "yes" : "no", cudaGetErrorName(seen_status));

    // Work after a callback waits for it; another stream waits through an
    // event recorded behind it.
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CHECK(cudaLaunchHostFunc(s, slow, (void *)3));
    fill<<<1, 32, 0, s>>>(d, 7);
    CHECK(cudaEventRecord(ev, s));
    printf("held by a callback: stream %s, event %s\n",
           cudaGetErrorName(cudaStreamQuery(s)),
           cudaGetErrorName(cudaEventQuery(ev)));
    CHECK(cudaStreamWaitEvent(t, ev, 0));
    CHECK(cudaLaunchHostFunc(t, note, (void *)4));
    CHECK(cudaStreamSynchronize(t));
    CHECK(cudaMemcpy(host_copy, d, sizeof(int), cudaMemcpyDeviceToHost));
    printf("kernel after the callback wrote %d\n", host_copy[0]);

    // Many callbacks keep their order; the legacy, per-thread and a
    // non-blocking stream each run theirs.
    for (int i = 0; i < 200; i++)
        CHECK(cudaLaunchHostFunc(s, note, (void *)(intptr_t)(100 + i)));
    CHECK(cudaLaunchHostFunc(0, note, (void *)5));
    CHECK(cudaStreamAddCallback(0, stream_cb, (void *)6, 0));
    CHECK(cudaDeviceSynchronize());
    printf("legacy stream callback stream is null: %s\n",
           seen_stream == NULL ? "yes" : "no");
    CHECK(cudaLaunchHostFunc(cudaStreamPerThread, note, (void *)7));
    CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    CHECK(cudaLaunchHostFunc(t, note, (void *)8));
    CHECK(cudaEventRecord(ev, t));
    CHECK(cudaEventSynchronize(ev));
    printf("order:");
    int prev = 99;
    bool sorted = true;
    for (int v : order) {
        if (v < 100)
            printf(" %d", v);
        else {
            sorted = sorted && v == prev + 1;
            prev = v;
        }
    }
    printf("\nmany in order: %s (%d calls)\n", sorted && prev == 299 ? "yes" : "no",
           calls.load());

    printf("null function: %s\n",
           cudaGetErrorName(cudaLaunchHostFunc(s, NULL, NULL)));
    printf("callback flags 1: %s\n",
           cudaGetErrorName(cudaStreamAddCallback(s, stream_cb, NULL, 1)));
    EXPECT(cudaGetLastError() != cudaSuccess);
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaFreeHost(host_copy));
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(t));
    printf("done\n");
    return 0;
}
