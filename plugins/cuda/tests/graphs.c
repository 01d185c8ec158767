/*
 * cuda.mock_graphs: a driver API program (linked with -lcuda) through
 * gvsd and the mock driver (mock_driver.c: graphs run their nodes in the
 * order they were added).  A graph of a memset, a kernel (arguments
 * packed by the kernel's layout, taken when the node is made), a copy
 * and a second kernel (its arguments as an extra buffer), instantiated
 * and launched; parameters set in the executable graph and in the graph;
 * node and edge listings; the DOT description; a library's kernel in a
 * node; a host node, run on the client at every launch of its graph,
 * after the node before it; user objects, their destructors run here when the program or a
 * graph lets the last reference go; the thread's capture mode; what is
 * refused (host memory in a copy node, a node of another graph, a
 * destroyed graph); node parameter queries and kernel node attributes;
 * graph memory (alloc and free nodes, the device's attributes); a
 * conditional node and its body.  Prints "ok".
 */
#include "driver_check.h"

#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 1024

/* A host node's runs, and the device word it saw (the node before it
 * wrote it: the graph runs them in order). */
static _Atomic int host_runs;

static void on_host_node(void *arg)
{
    (void)arg;
    atomic_fetch_add(&host_runs, 1);
}

/* User objects' destructors run on the client's notify thread. */
static _Atomic int destroyed;

static void on_destroy(void *arg)
{
    destroyed += *(int *)arg;
}

static void wait_destroyed(int want)
{
    for (int i = 0; i < 2000 && destroyed != want; i++)
        usleep(1000);
    EXPECT(destroyed == want);
}

static void expect_all(CUdeviceptr p, uint32_t value)
{
    static uint32_t host[N];
    CHECK(cuMemcpyDtoH(host, p, sizeof(host)));
    for (uint32_t i = 0; i < N; i++)
        EXPECT(host[i] == value);
}

static CUDA_MEMCPY3D d2d(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
    CUDA_MEMCPY3D c = {0};
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = src;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dst;
    c.WidthInBytes = bytes;
    c.Height = 1;
    c.Depth = 1;
    return c;
}

/* What the nodes of g answer: its memset, kernel (arguments as last
 * set), copy; kernel node attributes copied from k1 to k2. */
static void queries(CUgraphNode set, CUgraphNode k1, CUgraphNode cp,
                    CUgraphNode k2, CUfunction ffill, CUdeviceptr p,
                    CUdeviceptr q, uint32_t value)
{
    CUDA_KERNEL_NODE_PARAMS kq;
    CHECK(cuGraphKernelNodeGetParams(k1, &kq));
    EXPECT(kq.func == ffill && kq.gridDimX == 1 && kq.blockDimX == 256 &&
           kq.kernelParams != NULL && kq.extra == NULL);
    EXPECT(*(CUdeviceptr *)kq.kernelParams[0] == p &&
           *(uint32_t *)kq.kernelParams[1] == value &&
           *(uint32_t *)kq.kernelParams[2] == N);
    CUDA_MEMSET_NODE_PARAMS mq;
    CHECK(cuGraphMemsetNodeGetParams(set, &mq));
    EXPECT(mq.dst == q && mq.value == 100 && mq.elementSize == 4 &&
           mq.width == N && mq.height == 1);
    EXPECT(cuGraphMemsetNodeGetParams(k1, &mq) == CUDA_ERROR_INVALID_VALUE);
    CUDA_MEMCPY3D cq;
    CHECK(cuGraphMemcpyNodeGetParams(cp, &cq));
    EXPECT(cq.dstDevice == q && cq.srcDevice == p &&
           cq.dstMemoryType == CU_MEMORYTYPE_DEVICE &&
           cq.WidthInBytes == N * sizeof(uint32_t) && cq.Depth == 1);
    CUkernelNodeAttrValue av;
    memset(&av, 0, sizeof(av));
    av.priority = 3;
    CHECK(cuGraphKernelNodeSetAttribute(k1, CU_LAUNCH_ATTRIBUTE_PRIORITY,
                                        &av));
    CHECK(cuGraphKernelNodeCopyAttributes(k2, k1));
    memset(&av, 0, sizeof(av));
    CHECK(cuGraphKernelNodeGetAttribute(k2, CU_LAUNCH_ATTRIBUTE_PRIORITY,
                                        &av));
    EXPECT(av.priority == 3);
    EXPECT(cuGraphKernelNodeGetAttribute(set, CU_LAUNCH_ATTRIBUTE_PRIORITY,
                                         &av) == CUDA_ERROR_INVALID_VALUE);
}

/* Graph memory: an alloc node's address, device memory to the nodes
 * after it (a memset, a unified copy out of it) though the driver's
 * pointer attributes do not know it; a free node; the device's graph
 * memory attributes. */
static void graph_memory(CUdeviceptr p)
{
    CUgraph g;
    CUgraphNode alloc, set, cp, fr;
    CUgraphExec x;
    CHECK(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof(ap));
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.bytesize = N * sizeof(uint32_t);
    CHECK(cuGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    EXPECT(ap.dptr != 0);
    CUDA_MEMSET_NODE_PARAMS mp = {0};
    mp.dst = ap.dptr;
    mp.value = 3;
    mp.elementSize = 4;
    mp.width = N;
    mp.height = 1;
    CHECK(cuGraphAddMemsetNode(&set, g, &alloc, 1, &mp, NULL));
    CUDA_MEMCPY3D c = d2d(p, ap.dptr, N * sizeof(uint32_t));
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    CHECK(cuGraphAddMemcpyNode(&cp, g, &set, 1, &c, NULL));
    CHECK(cuGraphAddMemFreeNode(&fr, g, &cp, 1, ap.dptr));
    CUDA_MEMCPY3D cq;
    CHECK(cuGraphMemcpyNodeGetParams(cp, &cq));
    EXPECT(cq.srcDevice == ap.dptr &&
           cq.srcMemoryType == CU_MEMORYTYPE_UNIFIED &&
           cq.dstMemoryType == CU_MEMORYTYPE_UNIFIED);
    CUDA_MEM_ALLOC_NODE_PARAMS aq;
    CHECK(cuGraphMemAllocNodeGetParams(alloc, &aq));
    EXPECT(aq.dptr == ap.dptr && aq.bytesize == ap.bytesize &&
           aq.poolProps.allocType == CU_MEM_ALLOCATION_TYPE_PINNED &&
           aq.accessDescCount == 0);
    CUdeviceptr fp = 0;
    CHECK(cuGraphMemFreeNodeGetParams(fr, &fp));
    EXPECT(fp == ap.dptr);
    EXPECT(cuGraphMemFreeNodeGetParams(alloc, &fp) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphInstantiate(&x, g, 0));
    CHECK(cuGraphLaunch(x, NULL));
    CHECK(cuCtxSynchronize());
    expect_all(p, 3);
    cuuint64_t used = 0;
    CHECK(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
                                       &used));
    EXPECT(used >= N * sizeof(uint32_t));
    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphDestroy(g));
    CHECK(cuDeviceGraphMemTrim(0));
    used = 0;
    CHECK(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
                                       &used));
    used = 1;
    EXPECT(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
                                        &used) == CUDA_ERROR_INVALID_VALUE);
}

/* A conditional node: its handle, the body graph CUDA made, which the
 * program fills through its id. */
static void conditional(CUcontext ctx)
{
    CUgraph g, body[1] = {NULL};
    CUgraphNode cond, inner;
    CUgraphExec x;
    CUgraphConditionalHandle h = 0;
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphConditionalHandleCreate(&h, g, ctx, 1,
                                         CU_GRAPH_COND_ASSIGN_DEFAULT));
    EXPECT(h != 0);
    CUgraphNodeParams cp;
    memset(&cp, 0, sizeof(cp));
    cp.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    cp.conditional.handle = h;
    cp.conditional.type = CU_GRAPH_COND_TYPE_IF;
    cp.conditional.size = 1;
    cp.conditional.phGraph_out = body;
    cp.conditional.ctx = ctx;
    CHECK(cuGraphAddNode(&cond, g, NULL, NULL, 0, &cp));
    EXPECT(body[0] != NULL && body[0] != g);
    CHECK(cuGraphAddEmptyNode(&inner, body[0], NULL, 0));
    size_t count = 0;
    CHECK(cuGraphGetNodes(body[0], NULL, &count));
    EXPECT(count == 1);
    cp.conditional.size = 0;
    EXPECT(cuGraphAddNode(&cond, g, NULL, NULL, 0, &cp) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphInstantiate(&x, g, 0));
    CHECK(cuGraphLaunch(x, NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphDestroy(g));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction ffill, fadd;
    CUdeviceptr p, q;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuModuleLoadData(&mod, "//gvs-mock module\n"));
    CHECK(cuModuleGetFunction(&ffill, mod, "fill"));
    CHECK(cuModuleGetFunction(&fadd, mod, "add"));
    CHECK(cuMemAlloc(&p, N * sizeof(uint32_t)));
    CHECK(cuMemAlloc(&q, N * sizeof(uint32_t)));

    CUgraph g;
    CUgraphNode set, k1, cp, k2;
    CHECK(cuGraphCreate(&g, 0));
    CUDA_MEMSET_NODE_PARAMS mp = {0};
    mp.dst = q;
    mp.value = 100;
    mp.elementSize = 4;
    mp.width = N;
    mp.height = 1;
    CHECK(cuGraphAddMemsetNode(&set, g, NULL, 0, &mp, ctx));
    /* fill(p, value, n): the arguments are taken now. */
    uint32_t value = 5, n = N;
    void *args[] = {&p, &value, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {0};
    kp.func = ffill;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 256;
    kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CHECK(cuGraphAddKernelNode(&k1, g, &set, 1, &kp));
    value = 1000;
    CUDA_MEMCPY3D c = d2d(q, p, N * sizeof(uint32_t));
    CHECK(cuGraphAddMemcpyNode(&cp, g, &k1, 1, &c, ctx));
    /* add(q, n, delta) with its arguments as one buffer. */
    struct {
        uint64_t p;
        uint32_t n, delta;
    } block = {q, N, 2};
    size_t bsize = sizeof(block);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &block,
                     CU_LAUNCH_PARAM_BUFFER_SIZE, &bsize, CU_LAUNCH_PARAM_END};
    CUDA_KERNEL_NODE_PARAMS ap = kp;
    ap.func = fadd;
    ap.kernelParams = NULL;
    ap.extra = extra;
    CHECK(cuGraphAddKernelNode(&k2, g, &cp, 1, &ap));

    size_t count = 0;
    CHECK(cuGraphGetNodes(g, NULL, &count));
    EXPECT(count == 4);
    CUgraphNode nodes[2];
    count = 2;
    CHECK(cuGraphGetNodes(g, nodes, &count));
    EXPECT(count == 2 && nodes[0] == set && nodes[1] == k1);

    /* Edges: the graph's, a node's dependencies, one added. */
    CUgraphNode from[5], to[5];
    size_t nedges = 0;
    CHECK(cuGraphGetEdges(g, NULL, NULL, NULL, &nedges));
    EXPECT(nedges == 3);
    nedges = 5;
    CHECK(cuGraphGetEdges(g, from, to, NULL, &nedges));
    EXPECT(nedges == 3 && from[1] == k1 && to[1] == cp && to[3] == NULL);
    CHECK(cuGraphAddDependencies(g, &set, &k2, NULL, 1));
    size_t ndeps = 5;
    CHECK(cuGraphNodeGetDependencies(k2, from, NULL, &ndeps));
    EXPECT(ndeps == 2 && from[0] == cp && from[1] == set);

    /* The description, written where the program said. */
    char path[] = "/tmp/gvs-mock-dot-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    close(fd);
    CHECK(cuGraphDebugDotPrint(g, path, 0));
    FILE *f = fopen(path, "r");
    char head[16] = {0};
    EXPECT(f != NULL && fread(head, 1, 12, f) == 12);
    fclose(f);
    unlink(path);
    EXPECT(strcmp(head, "digraph mock") == 0);

    CUgraphExec x;
    CHECK(cuGraphInstantiate(&x, g, 0));
    CHECK(cuGraphLaunch(x, NULL));
    CHECK(cuCtxSynchronize());
    expect_all(p, 5);
    expect_all(q, 7);

    /* In the executable graph only: the graph keeps its own. */
    value = 9;
    CHECK(cuGraphExecKernelNodeSetParams(x, k1, &kp));
    CHECK(cuGraphLaunch(x, NULL));
    CHECK(cuCtxSynchronize());
    expect_all(q, 11);
    value = 20;
    CHECK(cuGraphKernelNodeSetParams(k1, &kp));
    CUgraphExec x2;
    CHECK(cuGraphInstantiate(&x2, g, 0));
    CHECK(cuGraphLaunch(x2, NULL));
    CHECK(cuCtxSynchronize());
    expect_all(q, 22);
    queries(set, k1, cp, k2, ffill, p, q, value);

    /* A library's kernel (CUkernel) in a node of its own graph. */
    CUlibrary lib;
    CUkernel kadd;
    CHECK(cuLibraryLoadData(&lib, "//gvs-mock library\n", NULL, NULL, 0,
                            NULL, NULL, 0));
    CHECK(cuLibraryGetKernel(&kadd, lib, "add"));
    uint32_t delta = 1;
    void *kargs[] = {&q, &n, &delta};
    CUDA_KERNEL_NODE_PARAMS lp = kp;
    lp.func = NULL;
    lp.kern = kadd;
    lp.kernelParams = kargs;
    CUgraph g3;
    CUgraphNode kl;
    CUgraphExec x3;
    CHECK(cuGraphCreate(&g3, 0));
    CHECK(cuGraphAddKernelNode(&kl, g3, NULL, 0, &lp));
    CHECK(cuGraphInstantiate(&x3, g3, 0));
    CHECK(cuGraphLaunch(x3, NULL));
    CHECK(cuCtxSynchronize());
    expect_all(q, 23);
    CHECK(cuGraphExecDestroy(x3));
    CHECK(cuGraphDestroy(g3));
    CHECK(cuLibraryUnload(lib));

    /* A host node after a kernel node: run on the client at each launch;
     * its parameters changed in the executable graph. */
    CUgraph g4;
    CUgraphNode kh, hn;
    CUgraphExec x4;
    CUDA_HOST_NODE_PARAMS hp = {on_host_node, NULL};
    CHECK(cuGraphCreate(&g4, 0));
    CHECK(cuGraphAddKernelNode(&kh, g4, NULL, 0, &kp));
    CHECK(cuGraphAddHostNode(&hn, g4, &kh, 1, &hp));
    EXPECT(cuGraphAddHostNode(&hn, g4, NULL, 0, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphInstantiate(&x4, g4, 0));
    CHECK(cuGraphLaunch(x4, NULL));
    CHECK(cuGraphLaunch(x4, NULL));
    CHECK(cuCtxSynchronize());
    EXPECT(atomic_load(&host_runs) == 2);
    CUDA_HOST_NODE_PARAMS hq = {NULL, &hq};
    CHECK(cuGraphHostNodeGetParams(hn, &hq));
    EXPECT(hq.fn == on_host_node && hq.userData == NULL);
    CHECK(cuGraphExecHostNodeSetParams(x4, hn, &hp));
    CHECK(cuGraphLaunch(x4, NULL));
    CHECK(cuCtxSynchronize());
    EXPECT(atomic_load(&host_runs) == 3);
    /* The node's record outlives its graph in an executable graph. */
    CUgraphExec x5;
    CHECK(cuGraphInstantiate(&x5, g4, 0));
    CHECK(cuGraphDestroy(g4));
    CHECK(cuGraphLaunch(x5, NULL));
    CHECK(cuCtxSynchronize());
    EXPECT(atomic_load(&host_runs) == 4);
    CHECK(cuGraphExecDestroy(x5));
    CHECK(cuGraphExecDestroy(x4));

    /* Host memory in a copy node (the client's: hostcopy.c runs such
     * nodes); refused: host memory on both sides, a node of another
     * graph, kernel arguments the layout needs missing. */
    static uint32_t host[N];
    CUDA_MEMCPY3D h = c;
    h.srcMemoryType = CU_MEMORYTYPE_HOST;
    h.srcHost = host;
    CUgraphNode bad;
    CHECK(cuGraphAddMemcpyNode(&bad, g, NULL, 0, &h, ctx));
    CHECK(cuGraphDestroyNode(bad));
    h.dstMemoryType = CU_MEMORYTYPE_HOST;
    h.dstHost = host;
    EXPECT(cuGraphAddMemcpyNode(&bad, g, NULL, 0, &h, ctx) ==
           CUDA_ERROR_NOT_SUPPORTED);
    CUgraph other;
    CHECK(cuGraphCreate(&other, 0));
    EXPECT(cuGraphAddEmptyNode(&bad, other, &k1, 1) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphAddEmptyNode(&bad, other, NULL, 0));
    void *short_args[] = {&p, NULL, &n};
    kp.kernelParams = short_args;
    EXPECT(cuGraphAddKernelNode(&bad, g, NULL, 0, &kp) ==
           CUDA_ERROR_INVALID_VALUE);

    /* User objects: the destructor runs here once the last reference
     * goes, the program's or a graph's. */
    int one = 1, ten = 10;
    CUuserObject o;
    CHECK(cuUserObjectCreate(&o, &one, on_destroy, 2,
                             CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    CHECK(cuUserObjectRetain(o, 1));
    CHECK(cuUserObjectRelease(o, 2));
    usleep(20000);
    EXPECT(destroyed == 0);
    CHECK(cuUserObjectRelease(o, 1));
    wait_destroyed(1);
    CHECK(cuUserObjectCreate(&o, &ten, on_destroy, 1,
                             CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    CHECK(cuGraphRetainUserObject(other, o, 1, CU_GRAPH_USER_OBJECT_MOVE));
    EXPECT(cuUserObjectCreate(&o, &one, NULL, 1,
                              CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) ==
           CUDA_ERROR_INVALID_VALUE);

    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphExecDestroy(x2));
    EXPECT(cuGraphLaunch(x, NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphDestroy(other));
    wait_destroyed(11);
    CHECK(cuGraphDestroy(g));
    EXPECT(cuGraphDestroy(g) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphGetNodes(g, NULL, &count) == CUDA_ERROR_INVALID_VALUE);
    /* The thread's capture mode: exchanged, and the calls after it run
     * under it on the backend. */
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    EXPECT(m == CU_STREAM_CAPTURE_MODE_GLOBAL);
    CHECK(cuCtxSynchronize());
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    EXPECT(m == CU_STREAM_CAPTURE_MODE_RELAXED);
    m = (CUstreamCaptureMode)7;
    EXPECT(cuThreadExchangeStreamCaptureMode(&m) == CUDA_ERROR_INVALID_VALUE);

    graph_memory(p);
    conditional(ctx);
    CHECK(cuMemFree(p));
    CHECK(cuMemFree(q));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    printf("ok\n");
    return 0;
}
