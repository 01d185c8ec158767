// Device-to-host copies into page-locked memory that return at once
// (issue 11, item 4): natively, cudaMemcpyAsync into page-locked memory
// returns before its stream reaches it, and its bytes are in place by
// the time anything can see the copy done: a synchronization of the
// stream, an event behind it, a host function behind it, a copy that
// waits for it.  Through gvs the same over every transport (over tcp the
// copy is posted and its bytes come behind it).  Prints what it saw.
#include <chrono>
#include <cstring>

#include "check.h"

static const size_t PART = (size_t)16 << 20;
static const int NS = 4;

__global__ void fill(unsigned char *p, size_t n, unsigned char seed)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (unsigned char)(i * 7 + seed);
}

// Holds its stream for about the given cycles.
__global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles)
        ;
}

static int same(const unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 7 + seed))
            return 0;
    return 1;
}

static double now()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static void CUDART_CB look(void *arg)
{
    int *seen = (int *)arg;
    *seen = 1;
}

struct after {
    const unsigned char *h;
    int ok;
};

static void CUDART_CB check_bytes(void *arg)
{
    struct after *a = (struct after *)arg;
    a->ok = same(a->h, PART, 3);
}

int main()
{
    int khz = 0;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    // Half a second of the kernel: far longer than any copy's call.
    long long hold = (long long)khz * 500;
    unsigned char *h, *d, *d2;
    CHECK(cudaMallocHost((void **)&h, NS * PART));
    CHECK(cudaMalloc((void **)&d, NS * PART));
    CHECK(cudaMalloc((void **)&d2, PART));
    cudaStream_t s[NS];
    for (int i = 0; i < NS; i++)
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    unsigned blocks = (unsigned)((PART + 255) / 256);

    // Behind a long kernel: the call returns while the stream is busy.
    memset(h, 0, PART);
    fill<<<blocks, 256, 0, s[0]>>>(d, PART, 1);
    spin<<<1, 1, 0, s[0]>>>(hold);
    double t = now();
    CHECK(cudaMemcpyAsync(h, d, PART, cudaMemcpyDeviceToHost, s[0]));
    double took = now() - t;
    cudaError_t q = cudaStreamQuery(s[0]);
    printf("copy returned before its stream reached it: %s\n",
           took < 0.25 && q == cudaErrorNotReady ? "yes" : "no");
    CHECK(cudaStreamSynchronize(s[0]));
    printf("bytes in place after the stream's synchronization: %s\n",
           same(h, PART, 1) ? "yes" : "no");

    // An event behind it.
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    fill<<<blocks, 256, 0, s[0]>>>(d, PART, 2);
    spin<<<1, 1, 0, s[0]>>>(hold / 5);
    CHECK(cudaMemcpyAsync(h, d, PART, cudaMemcpyDeviceToHost, s[0]));
    CHECK(cudaEventRecord(ev, s[0]));
    CHECK(cudaEventSynchronize(ev));
    printf("bytes in place after an event behind it: %s\n",
           same(h, PART, 2) ? "yes" : "no");

    // A host function behind it sees them.
    struct after a = {h, 0};
    int seen = 0;
    fill<<<blocks, 256, 0, s[0]>>>(d, PART, 3);
    spin<<<1, 1, 0, s[0]>>>(hold / 5);
    CHECK(cudaMemcpyAsync(h, d, PART, cudaMemcpyDeviceToHost, s[0]));
    CHECK(cudaLaunchHostFunc(s[0], check_bytes, &a));
    CHECK(cudaLaunchHostFunc(s[0], look, &seen));
    CHECK(cudaStreamSynchronize(s[0]));
    printf("bytes in place in a host function behind it: %s\n",
           a.ok && seen ? "yes" : "no");

    // Another stream's copy from that memory, ordered after it by an
    // event, carries its bytes.
    fill<<<blocks, 256, 0, s[0]>>>(d, PART, 4);
    spin<<<1, 1, 0, s[0]>>>(hold / 5);
    CHECK(cudaMemcpyAsync(h, d, PART, cudaMemcpyDeviceToHost, s[0]));
    CHECK(cudaEventRecord(ev, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], ev, 0));
    CHECK(cudaMemcpyAsync(d2, h, PART, cudaMemcpyHostToDevice, s[1]));
    memset(h + PART, 0, PART);
    CHECK(cudaMemcpyAsync(h + PART, d2, PART, cudaMemcpyDeviceToHost, s[1]));
    CHECK(cudaStreamSynchronize(s[1]));
    printf("a dependent copy carries them: %s\n",
           same(h + PART, PART, 4) ? "yes" : "no");

    // Four streams, each in, a kernel, out: every byte back.
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < NS; i++) {
            unsigned char *hp = h + i * PART, *dp = d + i * PART;
            fill<<<blocks, 256, 0, s[i]>>>(dp, PART, (unsigned char)(10 + i + round));
            CHECK(cudaMemcpyAsync(hp, dp, PART, cudaMemcpyDeviceToHost, s[i]));
            CHECK(cudaMemcpyAsync(dp, hp, PART, cudaMemcpyHostToDevice, s[i]));
            CHECK(cudaMemcpyAsync(hp, dp, PART, cudaMemcpyDeviceToHost, s[i]));
        }
        CHECK(cudaDeviceSynchronize());
        int ok = 1;
        for (int i = 0; i < NS; i++)
            ok &= same(h + i * PART, PART, (unsigned char)(10 + i + round));
        printf("four streams, round %d: %s\n", round, ok ? "all bytes back" : "WRONG");
    }

    CHECK(cudaEventDestroy(ev));
    for (int i = 0; i < NS; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(d2));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    return 0;
}
