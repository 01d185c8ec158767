// cudart.mock_graphs_more: the rest of the graph, capture and stream
// attribute API of an unmodified -cudart shared program, through our
// libcudart.so.13 and a gvsd whose cudart plugin runs on the host-memory
// mock (mock_graphs.c, mock_stream_attr.c): node queries in the
// program's terms, kernel node and stream attributes, memory alloc and
// free nodes, generic and conditional nodes, user objects whose
// destructors run here, DOT output, capture into a graph and the
// per-thread capture mode.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_check.h"

// Emulated by the mock by name (mock_cudart.c).
__global__ void fill(int *p, int n, double d, char c) {}

static void stream_attributes()
{
    cudaStream_t s, t;
    OK(cudaStreamCreate(&s));
    OK(cudaStreamCreate(&t));
    cudaStreamAttrValue v = {};
    v.priority = 3;
    OK(cudaStreamSetAttribute(s, cudaStreamAttributePriority, &v));
    v = {};
    v.accessPolicyWindow.num_bytes = 4096;
    v.accessPolicyWindow.hitRatio = 0.5f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    OK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    cudaStreamAttrValue got = {};
    OK(cudaStreamGetAttribute(s, cudaStreamAttributePriority, &got));
    CHECK(got.priority == 3);
    OK(cudaStreamCopyAttributes(t, s));
    got = {};
    OK(cudaStreamGetAttribute(t, cudaStreamAttributeAccessPolicyWindow, &got));
    CHECK(got.accessPolicyWindow.num_bytes == 4096 &&
          got.accessPolicyWindow.hitRatio == 0.5f &&
          got.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting);
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributePriority, NULL) ==
          cudaErrorInvalidValue);
    CHECK(cudaStreamGetAttribute((cudaStream_t)0x77,
                                 cudaStreamAttributePriority, &got) ==
          cudaErrorInvalidResourceHandle);
    OK(cudaStreamDestroy(s));
    OK(cudaStreamDestroy(t));
}

static void *other_thread_mode(void *arg)
{
    // Each client thread has its own mode, Global to begin with.
    cudaStreamCaptureMode m = cudaStreamCaptureModeThreadLocal;
    OK(cudaThreadExchangeStreamCaptureMode(&m));
    *(cudaStreamCaptureMode *)arg = m;
    return NULL;
}

static void capture()
{
    cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    OK(cudaThreadExchangeStreamCaptureMode(&m));
    CHECK(m == cudaStreamCaptureModeGlobal);
    pthread_t th;
    cudaStreamCaptureMode seen = cudaStreamCaptureModeRelaxed;
    CHECK(pthread_create(&th, NULL, other_thread_mode, &seen) == 0);
    pthread_join(th, NULL);
    CHECK(seen == cudaStreamCaptureModeGlobal);
    OK(cudaThreadExchangeStreamCaptureMode(&m));
    CHECK(m == cudaStreamCaptureModeRelaxed);
    m = (cudaStreamCaptureMode)7;
    CHECK(cudaThreadExchangeStreamCaptureMode(&m) == cudaErrorInvalidValue);

    // Capture into a graph of ours, after one of its nodes.
    cudaGraph_t g, got;
    cudaGraphNode_t first;
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddEmptyNode(&first, g, NULL, 0));
    OK(cudaStreamBeginCaptureToGraph(s, g, &first, NULL, 1,
                                     cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus st;
    OK(cudaStreamIsCapturing(s, &st));
    CHECK(st == cudaStreamCaptureStatusActive);
    OK(cudaStreamUpdateCaptureDependencies(s, &first, NULL, 1,
                                           cudaStreamSetCaptureDependencies));
    cudaGraph_t other;
    cudaGraphNode_t foreign;
    OK(cudaGraphCreate(&other, 0));
    OK(cudaGraphAddEmptyNode(&foreign, other, NULL, 0));
    CHECK(cudaStreamUpdateCaptureDependencies(s, &foreign, NULL, 1, 0) ==
          cudaErrorInvalidValue);
    OK(cudaStreamEndCapture(s, &got));
    CHECK(got == g);
    CHECK(cudaStreamUpdateCaptureDependencies(s, &first, NULL, 1, 0) ==
          cudaErrorIllegalState);
    CHECK(cudaStreamBeginCaptureToGraph(s, (cudaGraph_t)0x77, NULL, NULL, 0,
                                        cudaStreamCaptureModeGlobal) ==
          cudaErrorInvalidValue);
    OK(cudaGraphDestroy(other));
    OK(cudaGraphDestroy(g));
    OK(cudaStreamDestroy(s));
}

static int host_calls;
static void CUDART_CB on_host(void *arg)
{
    host_calls += *(int *)arg;
}

static void node_queries()
{
    int *d;
    OK(cudaMalloc(&d, 512));
    cudaGraph_t g, child;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t k, set, cp, host, sub, rec, wait, bad;
    int n = 100;
    double dd = 2.5;
    char c = 9;
    void *args[] = {&d, &n, &dd, &c};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)fill;
    kp.gridDim = dim3(2, 3);
    kp.blockDim = dim3(64);
    kp.kernelParams = args;
    OK(cudaGraphAddKernelNode(&k, g, NULL, 0, &kp));
    n = 1;
    cudaKernelNodeParams kq = {};
    OK(cudaGraphKernelNodeGetParams(k, &kq));
    CHECK(kq.func == (void *)fill && kq.gridDim.y == 3 &&
          kq.blockDim.x == 64 && kq.extra == NULL);
    CHECK(*(int **)kq.kernelParams[0] == d &&
          *(int *)kq.kernelParams[1] == 100 &&
          *(double *)kq.kernelParams[2] == 2.5 &&
          *(char *)kq.kernelParams[3] == 9);

    cudaMemsetParams mp = {d, 512, 5, 4, 128, 1};
    OK(cudaGraphAddMemsetNode(&set, g, &k, 1, &mp));
    cudaMemsetParams mq = {};
    OK(cudaGraphMemsetNodeGetParams(set, &mq));
    CHECK(mq.dst == d && mq.value == 5 && mq.elementSize == 4 &&
          mq.width == 128);
    CHECK(cudaGraphKernelNodeGetParams(set, &kq) == cudaErrorInvalidValue);

    OK(cudaGraphAddMemcpyNode1D(&cp, g, &set, 1, d + 64, d, 256,
                                cudaMemcpyDeviceToDevice));
    cudaMemcpy3DParms cq = {};
    OK(cudaGraphMemcpyNodeGetParams(cp, &cq));
    CHECK(cq.dstPtr.ptr == d + 64 && cq.srcPtr.ptr == d &&
          cq.extent.width == 256 && cq.extent.height == 1);

    int weight = 4;
    cudaHostNodeParams hp = {on_host, &weight};
    OK(cudaGraphAddHostNode(&host, g, &cp, 1, &hp));
    cudaHostNodeParams hq = {};
    OK(cudaGraphHostNodeGetParams(host, &hq));
    CHECK(hq.fn == on_host && hq.userData == &weight);

    OK(cudaGraphAddChildGraphNode(&sub, g, NULL, 0, child));
    cudaGraph_t cg = NULL;
    OK(cudaGraphChildGraphNodeGetGraph(sub, &cg));
    CHECK(cg != NULL && cg != child);
    size_t count = 9;
    OK(cudaGraphGetNodes(cg, NULL, &count));
    CHECK(count == 0);

    cudaEvent_t ev, ev2 = NULL;
    OK(cudaEventCreate(&ev));
    OK(cudaGraphAddEventRecordNode(&rec, g, NULL, 0, ev));
    OK(cudaGraphAddEventWaitNode(&wait, g, &rec, 1, ev));
    OK(cudaGraphEventRecordNodeGetEvent(rec, &ev2));
    CHECK(ev2 == ev);
    ev2 = NULL;
    OK(cudaGraphEventWaitNodeGetEvent(wait, &ev2));
    CHECK(ev2 == ev);
    CHECK(cudaGraphEventWaitNodeGetEvent(rec, &ev2) == cudaErrorInvalidValue);

    // Kernel node attributes.
    cudaKernelNodeAttrValue av = {};
    av.priority = 2;
    OK(cudaGraphKernelNodeSetAttribute(k, cudaKernelNodeAttributePriority,
                                       &av));
    cudaGraphNode_t k2;
    OK(cudaGraphAddKernelNode(&k2, g, NULL, 0, &kp));
    OK(cudaGraphKernelNodeCopyAttributes(k2, k));
    av = {};
    OK(cudaGraphKernelNodeGetAttribute(k2, cudaKernelNodeAttributePriority,
                                       &av));
    CHECK(av.priority == 2);
    CHECK(cudaGraphKernelNodeCopyAttributes(k2, (cudaGraphNode_t)0x77) ==
          cudaErrorInvalidValue);
    CHECK(cudaGraphHostNodeGetParams((cudaGraphNode_t)0x77, &hq) ==
          cudaErrorInvalidValue);

    // A host node runs here every launch.
    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    CHECK(host_calls == 4);
    OK(cudaGraphExecDestroy(x));

    // The description, written to our path.
    char path[] = "/tmp/gvs-dot-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    OK(cudaGraphDebugDotPrint(g, path, 0));
    FILE *f = fopen(path, "r");
    char text[256] = {0};
    CHECK(f != NULL && fread(text, 1, sizeof(text) - 1, f) > 0);
    fclose(f);
    unlink(path);
    CHECK(strstr(text, "digraph mock") != NULL &&
          strstr(text, "8 nodes") != NULL);
    CHECK(cudaGraphDebugDotPrint(g, NULL, 0) == cudaErrorInvalidValue);
    (void)bad;
    OK(cudaEventDestroy(ev));
    OK(cudaGraphDestroy(g));
    OK(cudaGraphDestroy(child));
    OK(cudaFree(d));
}

static void graph_memory()
{
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    cudaMemAccessDesc acc = {{cudaMemLocationTypeDevice, 0},
                             cudaMemAccessFlagsProtReadWrite};
    ap.accessDescs = &acc;
    ap.accessDescCount = 1;
    ap.bytesize = 1024;
    cudaGraphNode_t alloc, freen, set;
    OK(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    CHECK(ap.dptr != NULL);
    // The graph's address is device memory to the program.
    int h[4] = {1, 2, 3, 4}, back[4] = {0};
    OK(cudaMemcpy(ap.dptr, h, sizeof(h), cudaMemcpyDefault));
    OK(cudaMemcpy(back, ap.dptr, sizeof(back), cudaMemcpyDefault));
    CHECK(back[3] == 4);
    cudaMemAllocNodeParams aq = {};
    OK(cudaGraphMemAllocNodeGetParams(alloc, &aq));
    CHECK(aq.dptr == ap.dptr && aq.bytesize == 1024 &&
          aq.accessDescCount == 1 && aq.accessDescs != NULL &&
          aq.accessDescs[0].flags == cudaMemAccessFlagsProtReadWrite &&
          aq.poolProps.allocType == cudaMemAllocationTypePinned);
    cudaMemsetParams mp = {ap.dptr, 1024, 0, 1, 1024, 1};
    OK(cudaGraphAddMemsetNode(&set, g, &alloc, 1, &mp));
    OK(cudaGraphAddMemFreeNode(&freen, g, &set, 1, ap.dptr));
    void *fp = NULL;
    OK(cudaGraphMemFreeNodeGetParams(freen, &fp));
    CHECK(fp == ap.dptr);
    ap.accessDescs = NULL;
    CHECK(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap) ==
          cudaErrorInvalidValue);

    unsigned long long v = 0;
    OK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &v));
    CHECK(v == (1u << 20));
    v = 0;
    OK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &v));
    v = 5;
    CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh,
                                         &v) == cudaErrorInvalidValue);
    OK(cudaDeviceGraphMemTrim(0));
    CHECK(cudaDeviceGraphMemTrim(9) == cudaErrorInvalidDevice);
    OK(cudaGraphDestroy(g));
}

static void generic_nodes()
{
    int *d;
    OK(cudaMalloc(&d, 512));
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeMemset;
    p.memset.dst = d;
    p.memset.pitch = 512;
    p.memset.value = 6;
    p.memset.elementSize = 4;
    p.memset.width = 128;
    p.memset.height = 1;
    cudaGraphNode_t set, k, e, cond;
    OK(cudaGraphAddNode(&set, g, NULL, NULL, 0, &p));
    int n = 50;
    double dd = 0;
    char c = 0;
    void *args[] = {&d, &n, &dd, &c};
    p = {};
    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = (void *)fill;
    p.kernel.gridDim = dim3(1);
    p.kernel.blockDim = dim3(64);
    p.kernel.kernelParams = args;
    OK(cudaGraphAddNode(&k, g, &set, NULL, 1, &p));
    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    int h[128];
    OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 0 && h[49] == 49 && h[50] == 6);
    // New arguments through the generic call, in the executable graph.
    n = 10;
    OK(cudaGraphExecNodeSetParams(x, k, &p));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[9] == 9 && h[10] == 6);
    OK(cudaGraphExecDestroy(x));
    n = 20;
    OK(cudaGraphNodeSetParams(k, &p));
    cudaKernelNodeParams kq;
    OK(cudaGraphKernelNodeGetParams(k, &kq));
    CHECK(*(int *)kq.kernelParams[1] == 20);

    p = {};
    p.type = cudaGraphNodeTypeEmpty;
    cudaGraphEdgeData ed = {};
    OK(cudaGraphAddNode(&e, g, &k, &ed, 1, &p));
    ed.type = cudaGraphDependencyTypeProgrammatic;
    CHECK(cudaGraphAddNode(&e, g, &k, &ed, 1, &p) == cudaErrorNotSupported);
    p.type = cudaGraphNodeTypeExtSemaphoreSignal;
    CHECK(cudaGraphAddNode(&e, g, NULL, NULL, 0, &p) ==
          cudaErrorNotSupported);

    // A conditional node, its body filled through its id.
    cudaGraphConditionalHandle hnd = 0;
    OK(cudaGraphConditionalHandleCreate(&hnd, g, 1, 0));
    CHECK(hnd != 0);
    cudaGraph_t bodies[2] = {NULL, NULL};
    p = {};
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = hnd;
    p.conditional.type = cudaGraphCondTypeIf;
    p.conditional.size = 2;
    p.conditional.phGraph_out = bodies;
    OK(cudaGraphAddNode(&cond, g, &e, NULL, 1, &p));
    CHECK(bodies[0] != NULL && bodies[1] != NULL && bodies[0] != bodies[1]);
    cudaGraphNode_t inner;
    OK(cudaGraphAddEmptyNode(&inner, bodies[0], NULL, 0));
    cudaGraphNodeType t;
    OK(cudaGraphNodeGetType(cond, &t));
    CHECK(t == cudaGraphNodeTypeConditional);
    p.conditional.handle = 12345;
    CHECK(cudaGraphAddNode(&cond, g, NULL, NULL, 0, &p) ==
          cudaErrorInvalidValue);
    OK(cudaGraphDestroy(g));
    OK(cudaFree(d));
}

static volatile int destroyed;
static void CUDART_CB on_destroy(void *arg)
{
    destroyed += *(int *)arg;
}

static void wait_destroyed(int want)
{
    for (int i = 0; i < 500 && destroyed != want; i++)
        usleep(10000);
    CHECK(destroyed == want);
}

static void user_objects()
{
    int one = 1, ten = 10;
    cudaUserObject_t o, o2;
    OK(cudaUserObjectCreate(&o, &one, on_destroy, 2,
                            cudaUserObjectNoDestructorSync));
    OK(cudaUserObjectRetain(o, 1));
    OK(cudaUserObjectRelease(o, 2));
    usleep(50000);
    CHECK(destroyed == 0);
    OK(cudaUserObjectRelease(o, 1));
    wait_destroyed(1);

    // A graph's reference goes with the graph.
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaUserObjectCreate(&o2, &ten, on_destroy, 1,
                            cudaUserObjectNoDestructorSync));
    OK(cudaGraphRetainUserObject(g, o2, 1, cudaGraphUserObjectMove));
    OK(cudaGraphRetainUserObject(g, o2, 2, 0));
    OK(cudaGraphReleaseUserObject(g, o2, 2));
    usleep(50000);
    CHECK(destroyed == 1);
    OK(cudaGraphDestroy(g));
    wait_destroyed(11);
    CHECK(cudaUserObjectCreate(&o, &one, NULL, 1,
                               cudaUserObjectNoDestructorSync) ==
          cudaErrorInvalidValue);
    CHECK(cudaUserObjectRetain((cudaUserObject_t)0x77, 1) ==
          cudaErrorInvalidValue);
}

int main()
{
    stream_attributes();
    capture();
    node_queries();
    graph_memory();
    generic_nodes();
    user_objects();
    printf("ok\n");
    return 0;
}
