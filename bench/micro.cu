// Micro-benchmarks of the costs a remoting layer adds: launches, launch +
// synchronize (also after a pause of the host), a small synchronous
// call, cudaMemcpy at 4 B, 1 MiB and 256 MiB from pinned and pageable
// memory, and copies overlapping kernels on 4 streams.  `micro launch`
// runs only the launch-rate part (used for the concurrent-clients
// measurement), `micro copies` only the copies (which need no kernel:
// the frame path can be measured on the mock runtime of
// plugins/cudart/tests).
#include "bench.h"
#include <algorithm>
#include <cstring>
#include <unistd.h>
#include <string>
#include <vector>

__global__ void empty() {}

static void launch_rate(int n)
{
    for (int i = 0; i < 1000; i++)
        empty<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    // Timed until the last kernel has run: a remoting layer that only
    // queued the launches has not done the work.
    double t = now_s();
    for (int i = 0; i < n; i++)
        empty<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    report("launch_async", n / (now_s() - t), "launch/s");
}

static void launch_sync(int n)
{
    double t = now_s();
    for (int i = 0; i < n; i++) {
        empty<<<1, 1>>>();
        CK(cudaStreamSynchronize(0));
    }
    report("launch_sync", (now_s() - t) / n * 1e6, "us");
}

// Launch + synchronize after a millisecond of host work, as a program
// that computes on the CPU between GPU calls does: what a remoting layer
// whose threads went to sleep meanwhile adds to the first call.  The
// median of n.
static void launch_sync_after_pause(int n)
{
    std::vector<double> t(n);
    for (int i = 0; i < n; i++) {
        double until = now_s() + 1e-3;
        while (now_s() < until)
            ;
        double t0 = now_s();
        empty<<<1, 1>>>();
        CK(cudaStreamSynchronize(0));
        t[i] = now_s() - t0;
    }
    std::sort(t.begin(), t.end());
    report("launch_sync_after_1ms", t[n / 2] * 1e6, "us");
}

static void small_call(int n)
{
    int v;
    double t = now_s();
    for (int i = 0; i < n; i++)
        CK(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0));
    report("attribute_query", (now_s() - t) / n * 1e6, "us");
}

// A kernel of about the time its part takes to copy (on an H100).
__global__ void busy(float *p, size_t n, int iters)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = p[i];
    for (int k = 0; k < iters; k++)
        v = v * 1.0001f + 0.5f;
    p[i] = v;
}

// Issue 11 item 4's pattern: work split over 4 streams, each copying its
// part in, running a kernel on it and copying it back into pinned memory
// with cudaMemcpyAsync, so that one stream's copies overlap another's
// kernel; timed to the last byte back.  Natively the copies and kernels
// of different streams run at once; a layer whose asynchronous copies
// wait for their bytes runs them one after another.
static void stream_overlap(char *pinned, char *dev)
{
    const int ns = 4, rounds = 10;
    const size_t part = 16u << 20, n = part / sizeof(float);
    cudaStream_t s[ns];
    for (int i = 0; i < ns; i++)
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    double t = 0;
    for (int r = -1; r < rounds; r++) {
        if (r == 0)
            t = now_s();
        for (int i = 0; i < ns; i++) {
            char *h = pinned + i * part, *d = dev + i * part;
            CK(cudaMemcpyAsync(d, h, part, cudaMemcpyHostToDevice, s[i]));
            busy<<<(unsigned)((n + 255) / 256), 256, 0, s[i]>>>((float *)d, n, 2000);
            CK(cudaMemcpyAsync(h, d, part, cudaMemcpyDeviceToHost, s[i]));
        }
        CK(cudaDeviceSynchronize());
    }
    report("stream_overlap_4x16MiB", (now_s() - t) / rounds, "s");
    for (int i = 0; i < ns; i++)
        CK(cudaStreamDestroy(s[i]));
}

static void copies(const char *kind, char *host, char *dev)
{
    const size_t sizes[] = {4, 1u << 20, 256u << 20};
    const char *names[] = {"4B", "1MiB", "256MiB"};
    for (int s = 0; s < 3; s++) {
        size_t size = sizes[s];
        int reps = size < (1u << 20) ? 20000 : size < (64u << 20) ? 500 : 5;
        CK(cudaMemcpy(dev, host, size, cudaMemcpyHostToDevice));
        double t = now_s();
        for (int i = 0; i < reps; i++)
            CK(cudaMemcpy(dev, host, size, cudaMemcpyHostToDevice));
        double h2d = (now_s() - t) / reps;
        CK(cudaMemcpy(host, dev, size, cudaMemcpyDeviceToHost));
        t = now_s();
        for (int i = 0; i < reps; i++)
            CK(cudaMemcpy(host, dev, size, cudaMemcpyDeviceToHost));
        double d2h = (now_s() - t) / reps;
        std::string m = std::string("h2d_") + kind + "_" + names[s];
        if (size < (1u << 20)) {
            report(m.c_str(), h2d * 1e6, "us");
            m = std::string("d2h_") + kind + "_" + names[s];
            report(m.c_str(), d2h * 1e6, "us");
        } else {
            report(m.c_str(), size / h2d / 1e9, "GB/s");
            m = std::string("d2h_") + kind + "_" + names[s];
            report(m.c_str(), size / d2h / 1e9, "GB/s");
        }
    }
}

int main(int argc, char **argv)
{
    CK(cudaFree(0));
    const char *only = argc > 1 ? argv[1] : "";
    if (strcmp(only, "launch") == 0) {
        launch_rate(100000);
        return 0;
    }
    if (strcmp(only, "quick") == 0) {
        /* bench/run.py --quick: latency and overlap only. */
        char *dev, *pinned;
        CK(cudaMalloc(&dev, 64u << 20));
        CK(cudaMallocHost(&pinned, 64u << 20));
        launch_sync(20000);
        launch_sync_after_pause(2000);
        stream_overlap(pinned, dev);
        CK(cudaFreeHost(pinned));
        CK(cudaFree(dev));
        return 0;
    }
    if (strcmp(only, "idle") == 0) {
        /* A connected session that does nothing (bench/run.py's idle
         * sessions): one launch done, "ready" said, then asleep for
         * argv[2] seconds. */
        empty<<<1, 1>>>();
        CK(cudaStreamSynchronize(0));
        printf("ready\n");
        fflush(stdout);
        sleep(argc > 2 ? atoi(argv[2]) : 10);
        return 0;
    }
    if (strcmp(only, "copies") != 0) {
        launch_rate(200000);
        launch_sync(20000);
        launch_sync_after_pause(2000);
        small_call(20000);
    }
    const size_t max = 256u << 20;
    char *dev, *pinned;
    CK(cudaMalloc(&dev, max));
    CK(cudaMallocHost(&pinned, max));
    char *pageable = (char *)malloc(max);
    memset(pageable, 1, max);
    memset(pinned, 1, max);
    copies("pinned", pinned, dev);
    copies("pageable", pageable, dev);
    if (strcmp(only, "copies") != 0)
        stream_overlap(pinned, dev);
    CK(cudaFreeHost(pinned));
    CK(cudaFree(dev));
    free(pageable);
    return 0;
}
