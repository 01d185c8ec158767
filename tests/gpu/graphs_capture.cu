// Stream capture: kernels, memsets, device copies, stream-ordered
// allocations and host functions captured across two streams (fork and
// join through events), the graph launched several times (the host
// function runs on the client each time), capture queries, and an
// executable graph updated from a second capture.
#include "check.h"
#include <cstdint>
#include <vector>

__global__ void fill(int *p, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + i;
}

__global__ void accumulate(int *dst, const int *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] += src[i];
}

static int host_calls;
static std::vector<int> host_seen;

static void CUDART_CB on_host(void *arg)
{
    host_calls++;
    host_seen.push_back(*(int *)arg);
}

static cudaGraph_t capture(cudaStream_t s1, cudaStream_t s2, int *acc,
                           int *tmp, int n, int v, int *tag)
{
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus st;
    CHECK(cudaStreamIsCapturing(s1, &st));
    EXPECT(st == cudaStreamCaptureStatusActive);
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    // s2 joined the capture through the event.
    CHECK(cudaStreamIsCapturing(s2, &st));
    EXPECT(st == cudaStreamCaptureStatusActive);
    int *scratch;
    CHECK(cudaMallocAsync((void **)&scratch, n * sizeof(int), s2));
    fill<<<(n + 255) / 256, 256, 0, s2>>>(scratch, n, v);
    CHECK(cudaMemsetAsync(tmp, 0, n * sizeof(int), s2));
    accumulate<<<(n + 255) / 256, 256, 0, s2>>>(tmp, scratch, n);
    CHECK(cudaFreeAsync(scratch, s2));
    CHECK(cudaMemcpyAsync(tmp + n, tmp, n * sizeof(int),
                          cudaMemcpyDeviceToDevice, s2));
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaMemsetAsync(acc + n, 0, sizeof(int), s1));
    CHECK(cudaStreamWaitEvent(s1, join, 0));
    accumulate<<<(n + 255) / 256, 256, 0, s1>>>(acc, tmp + n, n);
    CHECK(cudaLaunchHostFunc(s1, on_host, tag));
    unsigned long long id = 0;
    cudaGraph_t in_flight = NULL;
    size_t ndeps = 99;
    const cudaGraphNode_t *deps = NULL;
    CHECK(cudaStreamGetCaptureInfo(s1, &st, &id, &in_flight, &deps, NULL,
                                   &ndeps));
    EXPECT(st == cudaStreamCaptureStatusActive && id != 0 &&
           in_flight != NULL && ndeps == 1 && deps != NULL);
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s1, &g));
    EXPECT(g == in_flight);
    CHECK(cudaStreamIsCapturing(s1, &st));
    EXPECT(st == cudaStreamCaptureStatusNone);
    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(join));
    return g;
}

int main()
{
    const int n = 1 << 16;
    int *acc, *tmp;
    CHECK(cudaMalloc(&acc, (n + 1) * sizeof(int)));
    CHECK(cudaMalloc(&tmp, 2 * n * sizeof(int)));
    CHECK(cudaMemset(acc, 0, (n + 1) * sizeof(int)));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

    int tag1 = 11, tag2 = 22;
    cudaGraph_t g = capture(s1, s2, acc, tmp, n, 3, &tag1);
    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &count));
    printf("captured nodes: %zu\n", count);
    // Nothing ran while capturing.
    EXPECT(host_calls == 0);

    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphUpload(x, s1));
    for (int i = 0; i < 3; i++)
        CHECK(cudaGraphLaunch(x, s1));
    CHECK(cudaStreamSynchronize(s1));
    std::vector<int> h(n);
    CHECK(cudaMemcpy(h.data(), acc, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == 3 * (3 + i));
    printf("three launches ok, host function ran %d times\n", host_calls);

    // Same topology, other arguments: the executable graph takes them.
    cudaGraph_t g2 = capture(s1, s2, acc, tmp, n, 100, &tag2);
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(x, g2, &info));
    printf("update result: %d\n", (int)info.result);
    CHECK(cudaGraphLaunch(x, s1));
    CHECK(cudaStreamSynchronize(s1));
    CHECK(cudaMemcpy(h.data(), acc, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == 3 * (3 + i) + 100 + i);
    printf("updated launch ok, host calls %d, tags", host_calls);
    for (int t : host_seen)
        printf(" %d", t);
    printf("\n");

    // The graph outlives the destruction of what made it: launching an
    // executable graph of a destroyed graph still calls back.  (A graph
    // that allocates may have one executable graph at a time.)
    CHECK(cudaGraphExecDestroy(x));
    cudaGraphExec_t x2;
    CHECK(cudaGraphInstantiate(&x2, g2, 0));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphLaunch(x2, s2));
    CHECK(cudaStreamSynchronize(s2));
    printf("exec of destroyed graph ok, host calls %d\n", host_calls);

    // Capturing the legacy stream is refused as natively.
    cudaError_t e = cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal);
    printf("capture of the legacy stream: %s\n", cudaGetErrorName(e));
    cudaGetLastError();

    CHECK(cudaGraphExecDestroy(x2));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(acc));
    CHECK(cudaFree(tmp));
    printf("done\n");
    return 0;
}
