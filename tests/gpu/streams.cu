// Streams: creation with flags and priorities, their properties, work
// ordered across streams by events, queries while a kernel runs, and the
// default streams.
#include "check.h"

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void fill(int *v, int n, int x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = x + i;
}

__global__ void add_from(int *v, const int *w, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] += w[i];
}

static long long cycles_for_ms(int ms)
{
    int khz;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    return (long long)khz * ms;
}

int main()
{
    int least, greatest;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    printf("priorities: least %d greatest %d\n", least, greatest);
    CHECK(cudaDeviceGetStreamPriorityRange(NULL, &greatest));

    cudaStream_t s[4];
    unsigned flags;
    int prio, dev;
    CHECK(cudaStreamCreate(&s[0]));
    CHECK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithPriority(&s[2], cudaStreamNonBlocking,
                                       greatest - 10));
    CHECK(cudaStreamCreateWithPriority(&s[3], cudaStreamDefault, least + 10));
    unsigned long long ids[4];
    for (int i = 0; i < 4; i++) {
        CHECK(cudaStreamGetFlags(s[i], &flags));
        CHECK(cudaStreamGetPriority(s[i], &prio));
        CHECK(cudaStreamGetDevice(s[i], &dev));
        CHECK(cudaStreamGetId(s[i], &ids[i]));
        printf("stream %d: flags %u priority %d device %d\n", i, flags, prio,
               dev);
    }
    printf("ids distinct: %s\n", ids[0] != ids[1] && ids[1] != ids[2] &&
                                         ids[2] != ids[3] && ids[0] != ids[3]
                                     ? "yes"
                                     : "no");
    cudaStream_t defaults[3] = {0, cudaStreamLegacy, cudaStreamPerThread};
    for (int i = 0; i < 3; i++) {
        CHECK(cudaStreamGetFlags(defaults[i], &flags));
        CHECK(cudaStreamGetPriority(defaults[i], &prio));
        CHECK(cudaStreamQuery(defaults[i]));
        CHECK(cudaStreamSynchronize(defaults[i]));
        printf("default stream %d: flags %u priority %d\n", i, flags, prio);
    }
    printf("destroy default streams: %s %s %s\n",
           cudaGetErrorName(cudaStreamDestroy(0)),
           cudaGetErrorName(cudaStreamDestroy(cudaStreamLegacy)),
           cudaGetErrorName(cudaStreamDestroy(cudaStreamPerThread)));
    printf("bad flags: %s\n",
           cudaGetErrorName(cudaStreamCreateWithFlags(&s[0], 2)));
    printf("null stream pointer: %s\n",
           cudaGetErrorName(cudaStreamCreate(NULL)));
    printf("null flags pointer: %s\n",
           cudaGetErrorName(cudaStreamGetFlags(s[0], NULL)));
    EXPECT(cudaGetLastError() != cudaSuccess);
    EXPECT(cudaGetLastError() == cudaSuccess);

    // A running kernel keeps its stream busy; a query says so.
    spin<<<1, 1, 0, s[1]>>>(cycles_for_ms(300));
    CHECK(cudaGetLastError());
    printf("query while spinning: %s\n", cudaGetErrorName(cudaStreamQuery(s[1])));
    CHECK(cudaStreamSynchronize(s[1]));
    printf("query after sync: %s\n", cudaGetErrorName(cudaStreamQuery(s[1])));

    // s[2] waits for s[1]'s work through an event, behind a slow kernel.
    const int n = 1 << 16;
    int *a, *b, *h = new int[n];
    CHECK(cudaMalloc(&a, n * sizeof(int)));
    CHECK(cudaMalloc(&b, n * sizeof(int)));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    spin<<<1, 1, 0, s[1]>>>(cycles_for_ms(100));
    fill<<<n / 256, 256, 0, s[1]>>>(b, n, 1000);
    CHECK(cudaEventRecord(ev, s[1]));
    fill<<<n / 256, 256, 0, s[2]>>>(a, n, 0);
    CHECK(cudaStreamWaitEvent(s[2], ev, 0));
    add_from<<<n / 256, 256, 0, s[2]>>>(a, b, n);
    CHECK(cudaMemcpyAsync(h, a, n * sizeof(int), cudaMemcpyDeviceToHost, s[2]));
    CHECK(cudaStreamSynchronize(s[2]));
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok = ok && h[i] == 1000 + 2 * i;
    printf("cross-stream order: %s\n", ok ? "ok" : "WRONG");

    // The per-thread stream of a legacy-mode program works like any.
    fill<<<n / 256, 256, 0, cudaStreamPerThread>>>(a, n, 5);
    CHECK(cudaMemcpyAsync(h, a, n * sizeof(int), cudaMemcpyDeviceToHost,
                          cudaStreamPerThread));
    CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    printf("per-thread stream: %s\n", h[n - 1] == 5 + n - 1 ? "ok" : "WRONG");

    CHECK(cudaEventDestroy(ev));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    for (int i = 0; i < 4; i++)
        CHECK(cudaStreamDestroy(s[i]));
    delete[] h;
    printf("done\n");
    return 0;
}
