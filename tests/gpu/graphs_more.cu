// The rest of the graph API: node parameter queries, kernel node
// attributes, symbol copies, memory alloc and free nodes, generic and
// conditional nodes, capture into a graph with updated dependencies, the
// thread's capture mode, and the DOT description.
#include "check.h"
#include <cstring>
#include <unistd.h>
#include <vector>

__device__ int table[256];

__global__ void axpb(int *p, int n, int a, int b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * a + b;
}

static int host_sum;

static void CUDART_CB on_host(void *arg)
{
    host_sum += *(int *)arg;
}

static void expect_all(const int *d, int n, int want, const char *what)
{
    std::vector<int> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != want;
    printf("%-30s %s (first %d)\n", what, bad ? "WRONG" : "ok", h[0]);
    EXPECT(bad == 0);
}

static void queries(int *a, int *b, int n)
{
    cudaGraph_t g, child;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t set, k, cp, host, sub, rec, wait, k2;
    cudaMemsetParams mp = {a, 0, 3, 4, (size_t)n, 1};
    CHECK(cudaGraphAddMemsetNode(&set, g, NULL, 0, &mp));
    int nn = n, x = 2, y = 1;
    void *args[] = {&a, &nn, &x, &y};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)axpb;
    kp.gridDim = dim3((n + 255) / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&k, g, &set, 1, &kp));
    x = 100;
    CHECK(cudaGraphAddMemcpyNode1D(&cp, g, &k, 1, b, a, n * sizeof(int),
                                   cudaMemcpyDeviceToDevice));
    int weight = 5;
    cudaHostNodeParams hp = {on_host, &weight};
    CHECK(cudaGraphAddHostNode(&host, g, &cp, 1, &hp));
    CHECK(cudaGraphAddChildGraphNode(&sub, g, NULL, 0, child));
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaGraphAddEventRecordNode(&rec, g, &host, 1, ev));
    CHECK(cudaGraphAddEventWaitNode(&wait, g, &rec, 1, ev));

    cudaKernelNodeParams kq = {};
    CHECK(cudaGraphKernelNodeGetParams(k, &kq));
    printf("kernel func same %d grid %u block %u args %d %d %d same ptr %d\n",
           kq.func == (void *)axpb, kq.gridDim.x, kq.blockDim.x,
           *(int *)kq.kernelParams[1], *(int *)kq.kernelParams[2],
           *(int *)kq.kernelParams[3], *(int **)kq.kernelParams[0] == a);
    cudaMemsetParams mq = {};
    CHECK(cudaGraphMemsetNodeGetParams(set, &mq));
    printf("memset same dst %d value %u elem %u width %zu height %zu\n",
           mq.dst == a, mq.value, mq.elementSize, mq.width, mq.height);
    cudaMemcpy3DParms cq = {};
    CHECK(cudaGraphMemcpyNodeGetParams(cp, &cq));
    printf("memcpy dst %d src %d extent %zu %zu %zu kind %d\n",
           cq.dstPtr.ptr == b, cq.srcPtr.ptr == a, cq.extent.width,
           cq.extent.height, cq.extent.depth, (int)cq.kind);
    cudaHostNodeParams hq = {};
    CHECK(cudaGraphHostNodeGetParams(host, &hq));
    printf("host fn same %d data same %d\n", hq.fn == on_host,
           hq.userData == &weight);
    cudaGraph_t cg = NULL;
    CHECK(cudaGraphChildGraphNodeGetGraph(sub, &cg));
    size_t count = 7;
    CHECK(cudaGraphGetNodes(cg, NULL, &count));
    printf("child graph is a copy %d with %zu nodes\n", cg != child, count);
    cudaEvent_t e1 = NULL, e2 = NULL;
    CHECK(cudaGraphEventRecordNodeGetEvent(rec, &e1));
    CHECK(cudaGraphEventWaitNodeGetEvent(wait, &e2));
    printf("events same %d %d\n", e1 == ev, e2 == ev);
    printf("wrong type %s\n",
           cudaGetErrorName(cudaGraphMemsetNodeGetParams(k, &mq)));
    cudaGetLastError();

    // Kernel node attributes, on a node that runs after the copy it would
    // otherwise race with.
    CHECK(cudaGraphAddKernelNode(&k2, g, &cp, 1, &kp));
    cudaKernelNodeAttrValue av = {};
    av.priority = 1;
    CHECK(cudaGraphKernelNodeSetAttribute(k, cudaKernelNodeAttributePriority,
                                          &av));
    CHECK(cudaGraphKernelNodeCopyAttributes(k2, k));
    av = {};
    CHECK(cudaGraphKernelNodeGetAttribute(k2, cudaKernelNodeAttributePriority,
                                          &av));
    printf("copied priority %d\n", av.priority);

    cudaGraphExec_t xg;
    CHECK(cudaGraphInstantiate(&xg, g, 0));
    CHECK(cudaGraphLaunch(xg, 0));
    CHECK(cudaDeviceSynchronize());
    expect_all(b, n, 3 * 2 + 1, "queried graph ran");
    printf("host sum %d\n", host_sum);
    CHECK(cudaGraphExecDestroy(xg));

    // The description, written to the program's path.
    char path[] = "/tmp/gvs-graphs-more-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    close(fd);
    CHECK(cudaGraphDebugDotPrint(g, path, cudaGraphDebugDotFlagsVerbose));
    FILE *f = fopen(path, "r");
    char head[8] = {0};
    size_t got = f != NULL ? fread(head, 1, 7, f) : 0;
    if (f != NULL)
        fclose(f);
    unlink(path);
    printf("dot starts with digraph %d\n",
           got == 7 && !strcmp(head, "digraph"));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaGraphDestroy(child));
    CHECK(cudaGraphDestroy(g));
}

static void symbols(int *a, int n)
{
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaMemset(a, 0, n * sizeof(int)));
    std::vector<int> h(256);
    for (int i = 0; i < 256; i++)
        h[i] = i * 3;
    CHECK(cudaMemcpy(a + n - 256, h.data(), 256 * sizeof(int),
                     cudaMemcpyHostToDevice));
    cudaGraphNode_t to, from;
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&to, g, NULL, 0, table, a + n - 256,
                                         128 * sizeof(int), 128 * sizeof(int),
                                         cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphAddMemcpyNodeFromSymbol(&from, g, &to, 1, a, table,
                                           128 * sizeof(int),
                                           128 * sizeof(int),
                                           cudaMemcpyDefault));
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), a, 128 * sizeof(int), cudaMemcpyDeviceToHost));
    printf("through the symbol %d %d %d\n", h[0], h[1], h[127]);
    // The executable graph's node set again, to what it was (CUDA refuses
    // an update that changes the copy's shape or kind).
    CHECK(cudaGraphExecMemcpyNodeSetParamsFromSymbol(
        x, from, a, table, 128 * sizeof(int), 128 * sizeof(int),
        cudaMemcpyDefault));
    CHECK(cudaGraphLaunch(x, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), a, 64 * sizeof(int), cudaMemcpyDeviceToHost));
    printf("exec set from symbol %d %d\n", h[0], h[63]);
    CHECK(cudaGraphMemcpyNodeSetParamsToSymbol(to, table, a, 4, 0,
                                               cudaMemcpyDeviceToDevice));
    printf("too far %s\n",
           cudaGetErrorName(cudaGraphMemcpyNodeSetParamsToSymbol(
               to, table, a, 1024, 4, cudaMemcpyDeviceToDevice)));
    cudaGetLastError();
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
}

static void graph_memory(int *b, int n)
{
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = n * sizeof(int);
    cudaGraphNode_t alloc, set, k, cp, fr;
    CHECK(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    int *tmp = (int *)ap.dptr;
    cudaMemsetParams mp = {tmp, 0, 4, 4, (size_t)n, 1};
    CHECK(cudaGraphAddMemsetNode(&set, g, &alloc, 1, &mp));
    int nn = n, x = 3, y = 0;
    void *args[] = {&tmp, &nn, &x, &y};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)axpb;
    kp.gridDim = dim3((n + 255) / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&k, g, &set, 1, &kp));
    // cudaMemcpyDefault knows the graph's address as device memory.
    CHECK(cudaGraphAddMemcpyNode1D(&cp, g, &k, 1, b, tmp, n * sizeof(int),
                                   cudaMemcpyDefault));
    CHECK(cudaGraphAddMemFreeNode(&fr, g, &cp, 1, tmp));
    cudaMemAllocNodeParams aq = {};
    CHECK(cudaGraphMemAllocNodeGetParams(alloc, &aq));
    printf("alloc node bytes %zu same ptr %d type %d\n", aq.bytesize,
           aq.dptr == tmp, (int)aq.poolProps.allocType);
    void *fp = NULL;
    CHECK(cudaGraphMemFreeNodeGetParams(fr, &fp));
    printf("free node same ptr %d\n", fp == tmp);
    cudaGraphExec_t xg;
    CHECK(cudaGraphInstantiate(&xg, g, 0));
    for (int i = 0; i < 3; i++)
        CHECK(cudaGraphLaunch(xg, 0));
    CHECK(cudaDeviceSynchronize());
    expect_all(b, n, 12, "graph memory");
    unsigned long long used = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh,
                                         &used));
    printf("reserved high nonzero %d\n", used > 0);
    CHECK(cudaGraphExecDestroy(xg));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaDeviceGraphMemTrim(0));
    unsigned long long zero = 0;
    CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh,
                                         &zero));
}

static void generic(int *a, int n)
{
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeMemset;
    p.memset.dst = a;
    p.memset.value = 2;
    p.memset.elementSize = 4;
    p.memset.width = n;
    p.memset.height = 1;
    cudaGraphNode_t set, k, cond;
    CHECK(cudaGraphAddNode(&set, g, NULL, NULL, 0, &p));
    int nn = n, x = 5, y = 1;
    void *args[] = {&a, &nn, &x, &y};
    cudaGraphNodeParams kp = {};
    kp.type = cudaGraphNodeTypeKernel;
    kp.kernel.func = (void *)axpb;
    kp.kernel.gridDim = dim3((n + 255) / 256);
    kp.kernel.blockDim = dim3(256);
    kp.kernel.kernelParams = args;
    CHECK(cudaGraphAddNode(&k, g, &set, NULL, 1, &kp));

    // An IF node whose condition defaults to true on every launch.
    cudaGraphConditionalHandle h;
    CHECK(cudaGraphConditionalHandleCreate(&h, g, 1,
                                           cudaGraphCondAssignDefault));
    cudaGraph_t body[1] = {NULL};
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    cp.conditional.phGraph_out = body;
    CHECK(cudaGraphAddNode(&cond, g, &k, NULL, 1, &cp));
    // The body graph CUDA made stays empty: nodes added to it this way
    // are refused natively (cudaErrorInvalidValue, CUDA 13 on an H200).

    cudaGraphExec_t xg;
    CHECK(cudaGraphInstantiate(&xg, g, 0));
    CHECK(cudaGraphLaunch(xg, 0));
    CHECK(cudaDeviceSynchronize());
    expect_all(a, n, 2 * 5 + 1, "generic and conditional");
    x = 7;
    CHECK(cudaGraphExecNodeSetParams(xg, k, &kp));
    CHECK(cudaGraphLaunch(xg, 0));
    CHECK(cudaDeviceSynchronize());
    expect_all(a, n, 2 * 7 + 1, "exec node set params");
    x = 9;
    CHECK(cudaGraphNodeSetParams(k, &kp));
    cudaKernelNodeParams kq;
    CHECK(cudaGraphKernelNodeGetParams(k, &kq));
    printf("generic set params a=%d\n", *(int *)kq.kernelParams[2]);
    CHECK(cudaGraphExecDestroy(xg));
    CHECK(cudaGraphDestroy(g));
}

static void capture_to_graph(int *a, int n)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t set, extra;
    cudaMemsetParams mp = {a, 0, 6, 4, (size_t)n, 1};
    CHECK(cudaGraphAddMemsetNode(&set, g, NULL, 0, &mp));
    CHECK(cudaGraphAddEmptyNode(&extra, g, NULL, 0));
    CHECK(cudaStreamBeginCaptureToGraph(s, g, &set, NULL, 1,
                                        cudaStreamCaptureModeGlobal));
    axpb<<<(n + 255) / 256, 256, 0, s>>>(a, n, 2, 0);
    // The next launch also waits for the empty node.
    cudaStreamCaptureStatus st;
    const cudaGraphNode_t *deps;
    size_t ndeps;
    CHECK(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, NULL, &ndeps));
    printf("capture deps %zu\n", ndeps);
    CHECK(cudaStreamUpdateCaptureDependencies(
        s, &extra, NULL, 1, cudaStreamAddCaptureDependencies));
    CHECK(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, NULL, &ndeps));
    printf("capture deps after update %zu\n", ndeps);
    axpb<<<(n + 255) / 256, 256, 0, s>>>(a, n, 1, 1);
    cudaGraph_t got;
    CHECK(cudaStreamEndCapture(s, &got));
    printf("same graph %d\n", got == g);
    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &count));
    printf("nodes %zu\n", count);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    expect_all(a, n, 13, "captured into a graph");
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // The thread's capture mode.
    cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&m));
    printf("mode was %d\n", (int)m);
    // Relaxed: this thread may allocate while another stream captures.
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int *tmp;
    printf("malloc while capturing (relaxed) %s\n",
           cudaGetErrorName(cudaMalloc(&tmp, 256)));
    CHECK(cudaFree(tmp));
    CHECK(cudaStreamEndCapture(s, &got));
    CHECK(cudaGraphDestroy(got));
    CHECK(cudaThreadExchangeStreamCaptureMode(&m));
    printf("mode was %d\n", (int)m);
    CHECK(cudaStreamDestroy(s));
}

int main()
{
    const int n = 4096;
    int *a, *b;
    CHECK(cudaMalloc(&a, n * sizeof(int)));
    CHECK(cudaMalloc(&b, n * sizeof(int)));
    queries(a, b, n);
    symbols(a, n);
    graph_memory(b, n);
    generic(a, n);
    capture_to_graph(a, n);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    printf("done\n");
    return 0;
}
