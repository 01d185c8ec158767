// cudart.mock_streams: streams, events, host callbacks, async copies and
// host memory of an unmodified -cudart shared program, through our
// libcudart.so.13 and a gvsd whose cudart plugin runs on the host-memory
// mock (mock_cudart.c, mock_streams.c).
#include <atomic>
#include <chrono>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <unistd.h>

#include "mock_check.h"

static const size_t CHUNK = (size_t)8 << 20;

// A global the mock knows by name (mock_cudart.c).
__device__ int dv[4];
static const cudaStream_t BOGUS = (cudaStream_t)(uintptr_t)0x123456789ull;

static double seconds()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static void streams()
{
    int least = 1, greatest = 1;
    OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(least == 0 && greatest == -5);
    OK(cudaDeviceGetStreamPriorityRange(NULL, &greatest));
    OK(cudaDeviceGetStreamPriorityRange(NULL, NULL));

    cudaStream_t s, t;
    unsigned flags = 9;
    int prio = 9, dev = 9;
    unsigned long long id = 0, id2 = 0;
    OK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -100));
    OK(cudaStreamGetFlags(s, &flags));
    OK(cudaStreamGetPriority(s, &prio));
    OK(cudaStreamGetDevice(s, &dev));
    OK(cudaStreamGetId(s, &id));
    CHECK(flags == cudaStreamNonBlocking && prio == -5 && dev == 0 && id != 0);
    CHECK(cudaStreamCreateWithFlags(&t, 4) == cudaErrorInvalidValue);
    CHECK(cudaStreamCreate(NULL) == cudaErrorInvalidValue);
    CHECK(cudaStreamGetFlags(s, NULL) == cudaErrorInvalidValue);

    // A stream belongs to the device current when it was made.
    OK(cudaSetDevice(1));
    OK(cudaStreamCreate(&t));
    OK(cudaSetDevice(0));
    OK(cudaStreamGetDevice(t, &dev));
    OK(cudaStreamGetId(t, &id2));
    CHECK(dev == 1 && id2 != id);
    OK(cudaStreamQuery(t));
    OK(cudaStreamSynchronize(t));
    OK(cudaStreamDestroy(t));

    // Ids from nowhere, destroyed ones and the default streams.
    CHECK(cudaStreamQuery(t) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamDestroy(t) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamSynchronize(BOGUS) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamGetFlags(BOGUS, &flags) == cudaErrorInvalidResourceHandle);
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamDestroy(0) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamDestroy(cudaStreamPerThread) ==
          cudaErrorInvalidResourceHandle);
    OK(cudaStreamQuery(0));
    OK(cudaStreamQuery(cudaStreamLegacy));
    OK(cudaStreamSynchronize(cudaStreamPerThread));
    OK(cudaStreamGetFlags(cudaStreamPerThread, &flags));
    CHECK(flags == 0);
    OK(cudaStreamDestroy(s));
}

static void copy_round(cudaStream_t s, size_t size)
{
    unsigned char *h = (unsigned char *)malloc(size);
    unsigned char *back = (unsigned char *)malloc(size);
    void *d, *d2;
    CHECK(h != NULL && back != NULL);
    for (size_t i = 0; i < size; i++)
        h[i] = (unsigned char)(i * 7 + size);
    OK(cudaMalloc(&d, size));
    OK(cudaMalloc(&d2, size));
    struct stats s0 = now();
    OK(cudaMemcpyAsync(d, h, size, cudaMemcpyHostToDevice, s));
    struct stats s1 = now();
    // A copy the tables prove valid is posted, every piece of it.
    CHECK_EQ(s1.round_trips - s0.round_trips, 0);
    CHECK_EQ(s1.posts - s0.posts, pieces(size));
    // The source is free again at once.
    memset(h, 0, size);
    OK(cudaMemcpyAsync(d2, d, size, cudaMemcpyDefault, s));
    memset(back, 0xee, size);
    OK(cudaMemcpyAsync(back, d2, size, cudaMemcpyDeviceToHost, s));
    for (size_t i = 0; i < size; i++)
        if (back[i] != (unsigned char)(i * 7 + size))
            CHECK(!"async round trip");
    // A memset inside an allocation of the stream's device is posted.
    struct stats s2 = now();
    OK(cudaMemsetAsync(d, 0x5a, size, s));
    struct stats s3 = now();
    CHECK(s3.round_trips == s2.round_trips);
    CHECK(s3.posts - s2.posts == 1);
    OK(cudaMemcpyAsync(back, d, size, cudaMemcpyDefault, s));
    CHECK(back[0] == 0x5a && back[size - 1] == 0x5a);
    // So are copies within device memory of the stream's device, the
    // synchronous one too (CUDA does not make the host wait for it); one
    // running past an allocation waits for its answer, the error.
    s2 = now();
    OK(cudaMemcpyAsync(d2, d, size, cudaMemcpyDeviceToDevice, s));
    OK(cudaMemcpy(d, d2, size, cudaMemcpyDeviceToDevice));
    s3 = now();
    CHECK_EQ(s3.round_trips - s2.round_trips, 0);
    CHECK_EQ(s3.posts - s2.posts, 2);
    CHECK_EQ(cudaMemcpyAsync(d2, d, size + 1, cudaMemcpyDeviceToDevice, s),
             cudaErrorInvalidValue);
    CHECK_EQ(cudaMemcpy((char *)d2 + 1, d, size, cudaMemcpyDeviceToDevice),
             cudaErrorInvalidValue);
    CHECK_EQ(now().posts - s3.posts, 0);
    OK(cudaStreamSynchronize(s));
    OK(cudaMemcpyAsync(back, d2, size, cudaMemcpyDefault, s));
    CHECK(back[0] == 0x5a && back[size - 1] == 0x5a);
    OK(cudaFree(d));
    OK(cudaFree(d2));
    free(h);
    free(back);
}

static void async_memory()
{
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    size_t sizes[] = {1, 4096, CHUNK, CHUNK + 1, 3 * CHUNK + 1};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        copy_round(s, sizes[i]);
    copy_round(0, 4096);
    copy_round(cudaStreamPerThread, CHUNK + 1);

    int *d, h[64];
    OK(cudaMalloc(&d, sizeof(h)));
    OK(cudaMemcpyAsync(h, h + 32, 32 * sizeof(int), cudaMemcpyHostToHost, s));
    OK(cudaMemcpyAsync(NULL, NULL, 0, cudaMemcpyHostToDevice, s));
    CHECK(cudaMemcpyAsync(d, h, 4, (cudaMemcpyKind)9, s) ==
          cudaErrorInvalidMemcpyDirection);
    CHECK(cudaMemcpyAsync(h, h + 8, 4, cudaMemcpyHostToDevice, s) ==
          cudaErrorInvalidValue);
    CHECK(cudaMemcpyAsync(h, d, 4, cudaMemcpyDeviceToHost, BOGUS) ==
          cudaErrorInvalidResourceHandle);
    CHECK(cudaMemcpyAsync(d, h, 4, cudaMemcpyHostToDevice, BOGUS) ==
          cudaErrorInvalidResourceHandle);
    // Memsets the frontend cannot vouch for wait for their answer: host
    // memory, past the end, nothing at all.
    struct stats s0 = now();
    CHECK(cudaMemsetAsync(h, 0, 16, s) == cudaErrorInvalidValue);
    CHECK(cudaMemsetAsync(d, 0, 2 * sizeof(h), s) == cudaErrorInvalidValue);
    OK(cudaMemsetAsync(d, 0, 0, s));
    CHECK(now().round_trips - s0.round_trips == 3);
    // The failed chunk of a transfer does not stick to the next one.
    OK(cudaMemcpyAsync(d, h, sizeof(h), cudaMemcpyHostToDevice, s));

    // Symbols, on the stream.
    int hv[4] = {1, 2, 3, 4}, got[4] = {0};
    OK(cudaMemcpyToSymbolAsync(dv, hv, sizeof(hv), 0, cudaMemcpyHostToDevice, s));
    OK(cudaMemcpyFromSymbolAsync(got, dv, 8, 8, cudaMemcpyDefault, s));
    CHECK(got[0] == 3 && got[1] == 4);
    CHECK(cudaMemcpyToSymbolAsync(dv, hv, 16, 4, cudaMemcpyHostToDevice, s) ==
          cudaErrorInvalidValue);
    CHECK(cudaMemcpyFromSymbolAsync(got, dv, 4, 0, cudaMemcpyHostToDevice,
                                    s) == cudaErrorInvalidMemcpyDirection);

    size_t free_bytes = 0, total = 0;
    OK(cudaMemGetInfo(&free_bytes, &total));
    CHECK(free_bytes == ((size_t)60 << 30) && total == ((size_t)80 << 30));
    OK(cudaMemGetInfo(NULL, &total));
    cudaMemLocation loc = {cudaMemLocationTypeDevice, 0};
    CHECK(cudaMemPrefetchAsync(d, sizeof(h), loc, 0, s) ==
          cudaErrorInvalidValue);
    CHECK(cudaMemPrefetchAsync(h, sizeof(h), loc, 0, s) ==
          cudaErrorInvalidValue);
    OK(cudaFree(d));
    OK(cudaStreamDestroy(s));
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

static void events()
{
    cudaEvent_t a, b, c;
    cudaStream_t s;
    float ms = -1;
    OK(cudaStreamCreate(&s));
    OK(cudaEventCreate(&a));
    OK(cudaEventCreateWithFlags(&b, cudaEventBlockingSync));
    OK(cudaEventCreateWithFlags(&c, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&c, 0xff) == cudaErrorInvalidValue);
    CHECK(cudaEventCreate(NULL) == cudaErrorInvalidValue);
    OK(cudaEventQuery(a));
    OK(cudaEventSynchronize(a));
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventElapsedTime(NULL, a, b) == cudaErrorInvalidValue);
    // Recording a known event in a known stream of its device, and
    // waiting for one, are posted: no round trip.
    struct stats s0 = now();
    OK(cudaEventRecord(a, s));
    OK(cudaEventRecordWithFlags(b, s, 0));
    OK(cudaEventRecord(c, 0));
    OK(cudaStreamWaitEvent(s, a, 0));
    struct stats s1 = now();
    CHECK(s1.round_trips == s0.round_trips);
    CHECK(s1.posts - s0.posts == 4);
    // Flags wait for the answer, which may be an error.
    CHECK(cudaEventRecordWithFlags(b, s, 5) == cudaErrorInvalidValue);
    CHECK(cudaStreamWaitEvent(s, a, 5) == cudaErrorInvalidValue);
    CHECK(now().round_trips - s1.round_trips == 2);
    OK(cudaEventSynchronize(b));
    OK(cudaEventQuery(b));
    OK(cudaEventElapsedTime(&ms, a, b));
    CHECK(ms >= 0 && ms < 10000);
    CHECK(cudaEventElapsedTime(&ms, a, c) == cudaErrorInvalidResourceHandle);
    OK(cudaStreamWaitEvent(s, c, 0));
    OK(cudaEventRecord(a, cudaStreamPerThread));
    OK(cudaStreamWaitEvent(cudaStreamPerThread, a, 0));
    OK(cudaStreamSynchronize(s));
    OK(cudaStreamSynchronize(cudaStreamPerThread));

    cudaEvent_t bogus = (cudaEvent_t)(uintptr_t)0x123456789ull;
    CHECK(cudaEventQuery(bogus) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventRecord(bogus, s) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventRecord(a, BOGUS) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamWaitEvent(s, bogus, 0) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventElapsedTime(&ms, a, bogus) ==
          cudaErrorInvalidResourceHandle);
    OK(cudaEventDestroy(c));
    CHECK(cudaEventDestroy(c) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventSynchronize(c) == cudaErrorInvalidResourceHandle);
    // A destroyed event is unknown again: the error comes at once.
    CHECK(cudaEventRecord(c, s) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamWaitEvent(s, c, 0) == cudaErrorInvalidResourceHandle);
    OK(cudaEventDestroy(a));
    OK(cudaEventDestroy(b));
    OK(cudaStreamDestroy(s));
}

// Host callbacks ------------------------------------------------------------

static std::atomic<int> order{0};
static int seen[8];
static cudaStream_t seen_stream;
static cudaError_t seen_status = cudaErrorUnknown;

static void CUDART_CB mark(void *p)
{
    seen[(intptr_t)p] = ++order;
}

static void CUDART_CB slow_mark(void *p)
{
    usleep(200000);
    seen[(intptr_t)p] = ++order;
}

static void CUDART_CB stream_cb(cudaStream_t s, cudaError_t status, void *p)
{
    seen_stream = s;
    seen_status = status;
    seen[(intptr_t)p] = ++order;
}

static void callbacks()
{
    cudaStream_t s, t;
    cudaEvent_t ev;
    OK(cudaStreamCreate(&s));
    OK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));

    // In stream order, and the stream waits for the client's function.
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)1));
    (void)cudaGetLastError();
    CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
    // An answer, not a failure: not kept as the last error.
    OK(cudaGetLastError());
    OK(cudaStreamAddCallback(s, stream_cb, (void *)2, 0));
    OK(cudaEventRecord(ev, s));
    // Another stream waits for the event behind both.
    OK(cudaStreamWaitEvent(t, ev, 0));
    OK(cudaLaunchHostFunc(t, mark, (void *)3));
    OK(cudaStreamSynchronize(t));
    CHECK(seen[1] == 1 && seen[2] == 2 && seen[3] == 3);
    CHECK(seen_stream == s && seen_status == cudaSuccess);
    OK(cudaEventQuery(ev));

    // The legacy stream (whose work the mock runs at once), the
    // per-thread stream, and the device's synchronization.
    OK(cudaLaunchHostFunc(0, mark, (void *)4));
    CHECK(seen[4] == 4);
    OK(cudaStreamAddCallback(0, stream_cb, (void *)5, 0));
    CHECK(seen[5] == 5 && seen_stream == NULL);
    OK(cudaLaunchHostFunc(cudaStreamPerThread, slow_mark, (void *)6));
    OK(cudaLaunchHostFunc(t, slow_mark, (void *)7));
    OK(cudaDeviceSynchronize());
    CHECK(seen[6] != 0 && seen[7] != 0);

    CHECK(cudaLaunchHostFunc(s, NULL, NULL) == cudaErrorInvalidValue);
    CHECK(cudaStreamAddCallback(s, stream_cb, NULL, 1) ==
          cudaErrorInvalidValue);
    CHECK(cudaLaunchHostFunc(BOGUS, mark, NULL) ==
          cudaErrorInvalidResourceHandle);
    OK(cudaEventDestroy(ev));
    OK(cudaStreamDestroy(s));
    OK(cudaStreamDestroy(t));
}

// One thread waits in cudaStreamSynchronize behind a slow callback while
// another makes many small calls: they must not wait for it.
static void progress()
{
    cudaStream_t s;
    std::atomic<int> calls{0};
    double other_done = 0, sync_done = 0;
    OK(cudaStreamCreate(&s));
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)0));
    std::thread waiter([&] {
        OK(cudaStreamSynchronize(s));
        sync_done = seconds();
    });
    std::thread other([&] {
        cudaStream_t mine;
        OK(cudaStreamCreate(&mine));
        for (int i = 0; i < 50; i++) {
            OK(cudaStreamQuery(mine));
            calls++;
        }
        OK(cudaStreamDestroy(mine));
        other_done = seconds();
    });
    waiter.join();
    other.join();
    CHECK(calls == 50 && other_done < sync_done);

    // Each thread has a per-thread stream of its own.
    unsigned long long mine = 0, theirs = 0;
    OK(cudaStreamGetId(cudaStreamPerThread, &mine));
    std::thread([&] { OK(cudaStreamGetId(cudaStreamPerThread, &theirs)); })
        .join();
    CHECK(mine != 0 && theirs != 0 && mine != theirs);
    OK(cudaStreamDestroy(s));
}

static void host_memory()
{
    void *p = (void *)1, *d = NULL;
    unsigned flags = 0;
    OK(cudaMallocHost(&p, 0));
    CHECK(p == NULL);
    OK(cudaMallocHost(&p, 100));
    OK(cudaHostGetFlags(&flags, p));
    CHECK(flags == cudaHostAllocMapped);
    OK(cudaHostGetFlags(&flags, (char *)p + 99));
    CHECK(cudaHostGetFlags(&flags, (char *)p + 4096) == cudaErrorInvalidValue);
    CHECK(cudaHostGetDevicePointer(&d, p, 0) == cudaErrorNotSupported);
    CHECK(cudaHostGetDevicePointer(&d, p, 1) == cudaErrorInvalidValue);
    CHECK(cudaFreeHost((char *)p + 8) == cudaErrorInvalidValue);

    // Pinned memory takes part in copies like any host memory.
    int *dv;
    OK(cudaMalloc(&dv, 100));
    memset(p, 7, 100);
    OK(cudaMemcpyAsync(dv, p, 100, cudaMemcpyDefault, 0));
    memset(p, 0, 100);
    OK(cudaMemcpy(p, dv, 100, cudaMemcpyDefault));
    CHECK(((unsigned char *)p)[99] == 7);
    OK(cudaFree(dv));
    OK(cudaFreeHost(p));
    OK(cudaFreeHost(NULL));

    OK(cudaHostAlloc(&p, 4096, cudaHostAllocPortable | cudaHostAllocWriteCombined));
    OK(cudaHostGetFlags(&flags, p));
    CHECK(flags == 7);
    OK(cudaFreeHost(p));
    CHECK(cudaHostAlloc(&p, 16, 0x10) == cudaErrorInvalidValue);

    char *q = (char *)malloc(1 << 20);
    CHECK(cudaFreeHost(q) == cudaErrorInvalidValue);
    CHECK(cudaHostUnregister(q) == cudaErrorHostMemoryNotRegistered);
    CHECK(cudaHostRegister(q, 0, 0) == cudaErrorInvalidValue);
    CHECK(cudaHostRegister(q, 4096, cudaHostRegisterIoMemory) ==
          cudaErrorInvalidValue);
    OK(cudaHostRegister(q, 1 << 20, 0));
    OK(cudaHostGetFlags(&flags, q + 5));
    CHECK(flags == cudaHostRegisterMapped);
    CHECK(cudaHostRegister(q + 4096, 4096, 0) ==
          cudaErrorHostMemoryAlreadyRegistered);
    CHECK(cudaHostUnregister(q + 8) == cudaErrorInvalidValue);
    OK(cudaHostUnregister(q));
    CHECK(cudaHostUnregister(q) == cudaErrorHostMemoryNotRegistered);
    OK(cudaHostRegister(q + 3, 100, cudaHostRegisterPortable));
    OK(cudaHostGetFlags(&flags, q + 3));
    CHECK(flags == 3);
    OK(cudaHostUnregister(q + 3));
    free(q);
    CHECK(cudaGetLastError() == cudaErrorHostMemoryNotRegistered);
}

// Over tcp a stream-ordered copy into page-locked memory returns once it
// is on its stream; its bytes come behind it and are in place before a
// synchronization, an event or a copy from that memory can see them
// (docs/remoting.md, "Posted device-to-host copies").
static void posted_copies()
{
    cudaStream_t s, t;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    OK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    const size_t n = 2 * CHUNK + 123;
    unsigned char *pin, *dev, *dev2;
    unsigned char *out = (unsigned char *)malloc(n);
    OK(cudaMallocHost(&pin, n));
    OK(cudaMalloc(&dev, n));
    OK(cudaMalloc(&dev2, n));
    memset(pin, 0, n);
    OK(cudaMemsetAsync(dev, 0x5a, n, s));
    // The stream is held 200 ms by a host function ahead of the copy.
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)1));
    double t0 = seconds();
    struct stats p0 = now();
    OK(cudaMemcpyAsync(pin, dev, n, cudaMemcpyDeviceToHost, s));
    struct stats p1 = now();
    double dt = seconds() - t0;
    if (dt >= 0.1)
        fprintf(stderr, "posted copy took %.3f s\n", dt);
    CHECK(dt < 0.1);
    // The tables prove it valid: its pieces of 1 MiB are posted, none
    // waiting for a reply that would come behind the bytes before it,
    // and the worker holds a buffer for each while the stream waits.
    CHECK_EQ(p1.round_trips - p0.round_trips, 0);
    CHECK_EQ(p1.posts - p0.posts, pieces(n));
    CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
    OK(cudaStreamSynchronize(s));
    CHECK(pin[0] == 0x5a && pin[CHUNK] == 0x5a && pin[n - 1] == 0x5a);

    cudaEvent_t ev;
    OK(cudaEventCreate(&ev));
    OK(cudaMemsetAsync(dev, 0x3c, n, s));
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)2));
    OK(cudaMemcpyAsync(pin + 1, dev, 100, cudaMemcpyDeviceToHost, s));
    OK(cudaEventRecord(ev, s));
    OK(cudaEventSynchronize(ev));
    CHECK(pin[1] == 0x3c && pin[100] == 0x3c && pin[101] == 0x5a);

    // A copy on another stream from the memory the posted copy writes.
    OK(cudaMemsetAsync(dev, 0x11, n, s));
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)3));
    OK(cudaMemcpyAsync(pin, dev, n, cudaMemcpyDeviceToHost, s));
    OK(cudaMemcpyAsync(dev2, pin, n, cudaMemcpyHostToDevice, t));
    OK(cudaStreamSynchronize(t));
    OK(cudaMemcpy(out, dev2, n, cudaMemcpyDeviceToHost));
    CHECK(out[0] == 0x11 && out[n - 1] == 0x11);
    // The same with a copy small enough to be posted itself: its bytes
    // are read once the posted copy's have landed.
    OK(cudaMemsetAsync(dev, 0x22, n, s));
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)5));
    OK(cudaMemcpyAsync(pin, dev, n, cudaMemcpyDeviceToHost, s));
    OK(cudaMemcpyAsync(dev2, pin, 4096, cudaMemcpyHostToDevice, t));
    OK(cudaStreamSynchronize(t));
    OK(cudaMemcpy(out, dev2, 4096, cudaMemcpyDeviceToHost));
    CHECK(out[0] == 0x22 && out[4095] == 0x22);

    // More pieces than the backend keeps pinned buffers for (8): the
    // rest go through its heap, and every byte lands.
    const size_t big = 10 * CHUNK;
    unsigned char *pin2, *dev3;
    OK(cudaMallocHost(&pin2, big));
    OK(cudaMalloc(&dev3, big));
    memset(pin2, 0, big);
    OK(cudaMemsetAsync(dev3, 0x6b, big, s));
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)6));
    t0 = seconds();
    OK(cudaMemcpyAsync(pin2, dev3, big, cudaMemcpyDeviceToHost, s));
    dt = seconds() - t0;
    if (dt >= 0.1)
        fprintf(stderr, "posted copy of 10 pieces took %.3f s\n", dt);
    CHECK(dt < 0.1);
    OK(cudaStreamSynchronize(s));
    size_t wrong = 0;
    for (size_t i = 0; i < big; i++)
        wrong += pin2[i] != 0x6b;
    CHECK_EQ(wrong, (size_t)0);
    OK(cudaFreeHost(pin2));
    OK(cudaFree(dev3));

    // Small copies back to back, on two streams in turn and then on one
    // (the backend sends the bytes of those that follow one another on a
    // stream from one host function): each lands where it belongs.
    unsigned char pattern[4096];
    for (size_t i = 0; i < sizeof(pattern); i++)
        pattern[i] = (unsigned char)(i * 7 + 3);
    OK(cudaMemcpy(dev, pattern, sizeof(pattern), cudaMemcpyHostToDevice));
    memset(pin, 0, sizeof(pattern));
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)7));
    for (int i = 0; i < 256; i++)
        OK(cudaMemcpyAsync(pin + 16 * i, dev + 16 * i, 16,
                           cudaMemcpyDeviceToHost, i < 64 && i % 2 ? t : s));
    OK(cudaStreamSynchronize(t));
    OK(cudaStreamSynchronize(s));
    CHECK(memcmp(pin, pattern, sizeof(pattern)) == 0);

    // Errors CUDA reports at once are reported at once.
    CHECK(cudaMemcpyAsync(pin, (void *)(uintptr_t)0x10, 16,
                          cudaMemcpyDeviceToHost, s) == cudaErrorInvalidValue);
    CHECK(cudaMemcpyAsync(pin, dev, 16, cudaMemcpyDeviceToHost, BOGUS) ==
          cudaErrorInvalidResourceHandle);

    // Freeing the memory drops what is still to land in it: nothing
    // writes there afterwards (ASan would see it).
    OK(cudaLaunchHostFunc(s, slow_mark, (void *)4));
    OK(cudaMemcpyAsync(pin, dev, n, cudaMemcpyDeviceToHost, s));
    OK(cudaFreeHost(pin));
    OK(cudaStreamSynchronize(s));
    OK(cudaEventDestroy(ev));
    OK(cudaFree(dev));
    OK(cudaFree(dev2));
    OK(cudaStreamDestroy(s));
    OK(cudaStreamDestroy(t));
    free(out);
    (void)cudaGetLastError();
}

int main()
{
    stats_init();
    streams();
    async_memory();
    events();
    callbacks();
    progress();
    host_memory();
    posted_copies();
    OK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError() == cudaSuccess);
    printf("ok\n");
    return 0;
}
