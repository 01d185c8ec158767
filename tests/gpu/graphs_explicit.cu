// Graphs built node by node: memset, kernel, memcpy (3D parameters and
// 1D), host, empty, child graph and event record nodes, dependencies
// added afterwards, topology queries, parameter changes in the graph and
// in the executable graph, disabled nodes, cloning and update.
#include "check.h"
#include <cstdint>
#include <vector>

__global__ void axpb(int *p, int n, int a, int b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * a + b;
}

struct Pair {
    char tag;
    double scale;
};

__global__ void with_struct(Pair pr, int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += (int)(pr.scale * pr.tag);
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
    printf("%-28s %s (first %d)\n", what, bad ? "WRONG" : "ok", h[0]);
    EXPECT(bad == 0);
}

int main()
{
    const int n = 4096;
    int *a, *b, *c;
    CHECK(cudaMalloc(&a, n * sizeof(int)));
    CHECK(cudaMalloc(&b, n * sizeof(int)));
    CHECK(cudaMalloc(&c, n * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));

    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t set, k1, k2, cp3, cp1, host, empty, rec;
    cudaMemsetParams mp = {};
    mp.dst = a;
    mp.value = 2;
    mp.elementSize = 4;
    mp.width = n;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&set, g, NULL, 0, &mp));
    int nn = n, mul = 5, add = 1;
    void *kargs[] = {&a, &nn, &mul, &add};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)axpb;
    kp.gridDim = dim3((n + 255) / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = kargs;
    CHECK(cudaGraphAddKernelNode(&k1, g, &set, 1, &kp));
    // The arguments are taken when the node is made.
    mul = 1000;
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(a, n * sizeof(int), n, 1);
    p.dstPtr = make_cudaPitchedPtr(b, n * sizeof(int), n, 1);
    p.extent = make_cudaExtent(n * sizeof(int), 1, 1);
    p.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaGraphAddMemcpyNode(&cp3, g, &k1, 1, &p));
    Pair pr = {3, 2.5};
    void *sargs[] = {&pr, &b, &nn};
    cudaKernelNodeParams sp = {};
    sp.func = (void *)with_struct;
    sp.gridDim = dim3((n + 255) / 256);
    sp.blockDim = dim3(256);
    sp.kernelParams = sargs;
    CHECK(cudaGraphAddKernelNode(&k2, g, &cp3, 1, &sp));
    CHECK(cudaGraphAddMemcpyNode1D(&cp1, g, NULL, 0, c, b, n * sizeof(int),
                                   cudaMemcpyDefault));
    CHECK(cudaGraphAddEmptyNode(&empty, g, NULL, 0));
    int weight = 1;
    cudaHostNodeParams hp = {on_host, &weight};
    CHECK(cudaGraphAddHostNode(&host, g, &empty, 1, &hp));
    CHECK(cudaGraphAddEventRecordNode(&rec, g, &host, 1, ev));
    // Dependencies added afterwards: k2 -> cp1 -> empty.
    cudaGraphNode_t from[] = {k2, cp1}, to[] = {cp1, empty};
    CHECK(cudaGraphAddDependencies(g, from, to, NULL, 2));

    // A child graph doubling c, after the event record.
    cudaGraph_t child;
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t ck, cn;
    int two = 2, zero = 0;
    void *cargs[] = {&c, &nn, &two, &zero};
    cudaKernelNodeParams cpk = kp;
    cpk.kernelParams = cargs;
    CHECK(cudaGraphAddKernelNode(&ck, child, NULL, 0, &cpk));
    CHECK(cudaGraphAddChildGraphNode(&cn, g, &rec, 1, child));

    size_t count = 0, roots = 0, edges = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &count));
    CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    printf("nodes %zu, roots %zu, edges %zu\n", count, roots, edges);
    cudaGraphNode_t deps[4];
    size_t nd = 4;
    CHECK(cudaGraphNodeGetDependencies(empty, deps, NULL, &nd));
    printf("empty node depends on %zu node(s), the 1D copy: %s\n", nd,
           nd == 1 && deps[0] == cp1 ? "yes" : "no");
    cudaGraphNodeType t;
    CHECK(cudaGraphNodeGetType(cn, &t));
    printf("child node type %d\n", (int)t);

    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    // a = 2*5+1 = 11; b = 11 + 7 = 18; c = 36.
    expect_all(a, n, 11, "memset + kernel");
    expect_all(b, n, 18, "copy + struct kernel");
    expect_all(c, n, 36, "1D copy + child graph");
    printf("host node ran %d time(s), event done: %s\n", host_sum,
           cudaEventQuery(ev) == cudaSuccess ? "yes" : "no");

    // New parameters in the executable graph only, then in the graph.
    mul = 3;
    add = 4;
    CHECK(cudaGraphExecKernelNodeSetParams(x, k1, &kp));
    mp.value = 1;
    CHECK(cudaGraphExecMemsetNodeSetParams(x, set, &mp));
    weight = 10;
    int weight2 = 100;
    cudaHostNodeParams hp2 = {on_host, &weight2};
    CHECK(cudaGraphExecHostNodeSetParams(x, host, &hp2));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    expect_all(a, n, 7, "exec kernel params");
    expect_all(c, n, 2 * (7 + 7), "downstream of it");
    printf("host sum %d\n", host_sum);

    // Disabled nodes do not run.
    CHECK(cudaGraphNodeSetEnabled(x, k2, 0));
    unsigned en = 1;
    CHECK(cudaGraphNodeGetEnabled(x, k2, &en));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    expect_all(c, n, 2 * 7, "struct kernel disabled");
    printf("enabled flag %u\n", en);

    // Clone, change the clone, update the executable graph from it.
    cudaGraph_t g2;
    CHECK(cudaGraphClone(&g2, g));
    cudaGraphNode_t k1c;
    CHECK(cudaGraphNodeFindInClone(&k1c, k1, g2));
    mul = 10;
    add = 0;
    CHECK(cudaGraphKernelNodeSetParams(k1c, &kp));
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(x, g2, &info));
    printf("update result %d\n", (int)info.result);
    CHECK(cudaGraphNodeSetEnabled(x, k2, 1));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    expect_all(a, n, 20, "updated from clone");
    expect_all(c, n, 2 * (20 + 7), "struct kernel enabled again");
    printf("host sum %d\n", host_sum);
    // The graph it was updated from goes: the executable graph still runs
    // the host node.
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    printf("host sum %d\n", host_sum);

    // A changed topology cannot update.
    CHECK(cudaGraphDestroyNode(k2));
    cudaError_t e = cudaGraphExecUpdate(x, g, &info);
    printf("update after removing a node: %s, result %d\n",
           cudaGetErrorName(e), (int)info.result);
    cudaGetLastError();

    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(child));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    printf("done\n");
    return 0;
}
