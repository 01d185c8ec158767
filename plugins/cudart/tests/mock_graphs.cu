// cudart.mock_graphs: pitched and 3D memory, arrays, texture and surface
// objects, memory pools and graphs of an unmodified -cudart shared
// program, through our libcudart.so.13 and a gvsd whose cudart plugin
// runs on the host-memory mock (mock_mem3d.c, mock_pools.c,
// mock_graphs.c).  Checks contents, the packing of strided host rows,
// request counts, ids and the refusals.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_check.h"

// Emulated by the mock by name (mock_cudart.c).
__global__ void fill(int *p, int n, double d, char c) {}
__global__ void empty() {}
// mock_managed.c starts them as {42, 0, 0, 0} and {0, 0}, in one page.
__managed__ int mcounter[4];
__managed__ int mpair[2];

static const size_t CHUNK = (size_t)8 << 20;

static unsigned char pattern(size_t i, size_t seed)
{
    return (unsigned char)(i * 131 + seed * 7 + 1);
}

// A w x h box of rows through pitched device memory, from and to host
// buffers whose own pitch leaves gaps that must not travel or change.
static void pitched_round(size_t w, size_t h, size_t hpitch)
{
    unsigned char *src = (unsigned char *)malloc(hpitch * h);
    unsigned char *back = (unsigned char *)malloc(hpitch * h);
    CHECK(src != NULL && back != NULL);
    for (size_t i = 0; i < hpitch * h; i++)
        src[i] = pattern(i, w);
    memset(back, 0xee, hpitch * h);
    void *d;
    size_t pitch;
    OK(cudaMallocPitch(&d, &pitch, w, h));
    CHECK(pitch >= w && pitch % 512 == 0);
    struct stats s0 = now();
    OK(cudaMemcpy2D(d, pitch, src, hpitch, w, h, cudaMemcpyHostToDevice));
    struct stats s1 = now();
    // Only the rows' bytes travel, in pieces of at most one chunk.
    size_t pieces = w * h <= CHUNK ? 1
                    : w <= CHUNK   ? (h + CHUNK / w - 1) / (CHUNK / w)
                                   : h * ((w + CHUNK - 1) / CHUNK);
    CHECK(s1.round_trips - s0.round_trips == 1);
    CHECK(s1.posts - s0.posts == pieces - 1);
    CHECK(s1.bytes_sent - s0.bytes_sent < w * h + pieces * 256);
    OK(cudaMemcpy2D(back, hpitch, d, pitch, w, h, cudaMemcpyDefault));
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < hpitch; x++)
            CHECK(back[y * hpitch + x] ==
                  (x < w ? src[y * hpitch + x] : 0xee));
    OK(cudaFree(d));
    free(src);
    free(back);
}

static void pitched()
{
    pitched_round(1, 1, 1);
    pitched_round(100, 37, 128);
    pitched_round(4096, 4096, 4096 + 3);
    pitched_round(CHUNK + 5, 2, CHUNK + 9);

    // 2D device-to-device and memset, with a column offset.
    int *a, *b;
    size_t pa, pb;
    OK(cudaMallocPitch((void **)&a, &pa, 64 * sizeof(int), 16));
    OK(cudaMallocPitch((void **)&b, &pb, 64 * sizeof(int), 16));
    OK(cudaMemset2D(a, pa, 0x11, 64 * sizeof(int), 16));
    OK(cudaMemset2D(b, pb, 0, 64 * sizeof(int), 16));
    OK(cudaMemcpy2D((char *)b + 8, pb, (char *)a + 8, pa, 16, 16,
                    cudaMemcpyDeviceToDevice));
    int h[16][64];
    OK(cudaMemcpy2D(h, sizeof(h[0]), b, pb, sizeof(h[0]), 16,
                    cudaMemcpyDeviceToHost));
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 64; x++)
            CHECK(h[y][x] == (x >= 2 && x < 6 ? 0x11111111 : 0));
    CHECK(cudaMemcpy2D(h, 4, b, pb, 8, 2, cudaMemcpyDeviceToHost) ==
          cudaErrorInvalidPitchValue);
    CHECK(cudaMemcpy2D(h, 256, b, pb, 8, 2, (cudaMemcpyKind)9) ==
          cudaErrorInvalidMemcpyDirection);
    // A host pointer where device memory is expected is refused.
    CHECK(cudaMemcpy2D(h, 256, h, 256, 8, 2, cudaMemcpyDeviceToDevice) ==
          cudaErrorInvalidValue);
    OK(cudaMemcpy2DAsync(h, sizeof(h[0]), a, pa, 4, 16,
                         cudaMemcpyDeviceToHost, 0));
    CHECK(h[15][0] == 0x11111111);
    OK(cudaFree(a));
    OK(cudaFree(b));

    // 3D: a box inside a pitched volume, at an offset.
    cudaExtent ext = make_cudaExtent(40, 8, 5);
    cudaPitchedPtr vol;
    OK(cudaMalloc3D(&vol, ext));
    CHECK(vol.pitch >= 40 && vol.xsize == 40 && vol.ysize == 8);
    OK(cudaMemset3D(vol, 0, ext));
    unsigned char box[3][4][10];
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 10; x++)
                box[z][y][x] = (unsigned char)(z * 100 + y * 10 + x);
    cudaMemcpy3DParms p = {0};
    p.srcPtr = make_cudaPitchedPtr(box, 10, 10, 4);
    p.dstPtr = vol;
    p.dstPos = make_cudaPos(5, 2, 1);
    p.extent = make_cudaExtent(10, 4, 3);
    p.kind = cudaMemcpyHostToDevice;
    OK(cudaMemcpy3D(&p));
    static unsigned char all[5][8][40];
    cudaMemcpy3DParms q = {0};
    q.srcPtr = vol;
    q.dstPtr = make_cudaPitchedPtr(all, 40, 40, 8);
    q.extent = ext;
    q.kind = cudaMemcpyDefault;
    OK(cudaMemcpy3D(&q));
    for (int z = 0; z < 5; z++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 40; x++) {
                int in = z >= 1 && z < 4 && y >= 2 && y < 6 && x >= 5 && x < 15;
                CHECK(all[z][y][x] ==
                      (in ? box[z - 1][y - 2][x - 5] : 0));
            }
    p.srcArray = (cudaArray_t)0x10;
    CHECK(cudaMemcpy3D(&p) == cudaErrorInvalidValue);
    OK(cudaFree(vol.ptr));
    printf("pitched ok\n");
}

static void arrays()
{
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    CHECK(desc.x == 32 && desc.f == cudaChannelFormatKindFloat);
    cudaArray_t arr, arr2;
    OK(cudaMallocArray(&arr, &desc, 16, 8));
    OK(cudaMallocArray(&arr2, &desc, 16, 8));
    cudaChannelFormatDesc d2;
    cudaExtent e;
    unsigned flags = 7;
    OK(cudaArrayGetInfo(&d2, &e, &flags, arr));
    CHECK(d2.x == 32 && e.width == 16 && e.height == 8 && e.depth == 0 &&
          flags == 0);
    float src[8][20], dst[8][16];
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 20; x++)
            src[y][x] = (float)(y * 100 + x);
    // 2D array calls count offsets and widths in bytes.
    OK(cudaMemcpy2DToArray(arr, 0, 0, src, sizeof(src[0]), 16 * sizeof(float),
                           8, cudaMemcpyHostToDevice));
    OK(cudaMemcpy2DArrayToArray(arr2, 0, 0, arr, 0, 0, 16 * sizeof(float), 8));
    OK(cudaMemcpy2DFromArray(dst, sizeof(dst[0]), arr2, 4 * sizeof(float), 2,
                             8 * sizeof(float), 3, cudaMemcpyDeviceToHost));
    CHECK(dst[0][0] == 204.0f && dst[2][7] == 411.0f);
    CHECK(cudaMemcpy2DFromArray(dst, sizeof(dst[0]), arr2, 3, 0, 8, 1,
                                cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    // cudaMemcpy3D counts an array's extent and offsets in elements.
    cudaMemcpy3DParms p = {0};
    p.srcArray = arr;
    p.srcPos = make_cudaPos(2, 1, 0);
    p.dstPtr = make_cudaPitchedPtr(dst, sizeof(dst[0]), 16, 8);
    p.extent = make_cudaExtent(3, 2, 1);
    p.kind = cudaMemcpyDeviceToHost;
    OK(cudaMemcpy3D(&p));
    CHECK(dst[0][0] == 102.0f && dst[1][2] == 204.0f);
    CHECK(cudaMemcpy2DToArray((cudaArray_t)0x1234, 0, 0, src, 80, 4, 1,
                              cudaMemcpyHostToDevice) ==
          cudaErrorInvalidResourceHandle);

    cudaArray_t vol;
    OK(cudaMalloc3DArray(&vol, &desc, make_cudaExtent(4, 4, 4)));
    OK(cudaArrayGetInfo(NULL, &e, NULL, vol));
    CHECK(e.depth == 4);
    OK(cudaFreeArray(vol));
    CHECK(cudaFreeArray(vol) == cudaErrorInvalidResourceHandle);

    cudaMipmappedArray_t mip;
    cudaArray_t l1, l1b;
    OK(cudaMallocMipmappedArray(&mip, &desc, make_cudaExtent(16, 16, 0), 3));
    OK(cudaGetMipmappedArrayLevel(&l1, mip, 1));
    OK(cudaGetMipmappedArrayLevel(&l1b, mip, 1));
    CHECK(l1 == l1b);
    OK(cudaArrayGetInfo(NULL, &e, NULL, l1));
    CHECK(e.width == 8);
    CHECK(cudaFreeArray(l1) == cudaErrorInvalidValue);

    // Texture and surface objects: CUDA's own values, the description
    // given back as given.
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.borderColor[2] = 0.5f;
    cudaTextureObject_t tex;
    OK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
    CHECK(tex != 0);
    cudaResourceDesc rd2;
    cudaTextureDesc td2;
    OK(cudaGetTextureObjectResourceDesc(&rd2, tex));
    CHECK(rd2.resType == cudaResourceTypeArray && rd2.res.array.array == arr);
    OK(cudaGetTextureObjectTextureDesc(&td2, tex));
    CHECK(td2.borderColor[2] == 0.5f);
    OK(cudaDestroyTextureObject(tex));
    CHECK(cudaDestroyTextureObject(tex) == cudaErrorInvalidValue);
    CHECK(cudaDestroyTextureObject(12345) == cudaErrorInvalidValue);
    rd.res.mipmap.mipmap = mip;
    rd.resType = cudaResourceTypeMipmappedArray;
    OK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
    OK(cudaDestroyTextureObject(tex));
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = arr2;
    cudaSurfaceObject_t surf;
    OK(cudaCreateSurfaceObject(&surf, &rd));
    OK(cudaGetSurfaceObjectResourceDesc(&rd2, surf));
    CHECK(rd2.res.array.array == arr2);
    OK(cudaDestroySurfaceObject(surf));
    // Linear memory that is not the device's is refused.
    rd.resType = cudaResourceTypeLinear;
    rd.res.linear.devPtr = src;
    rd.res.linear.desc = desc;
    rd.res.linear.sizeInBytes = sizeof(src);
    CHECK(cudaCreateTextureObject(&tex, &rd, &td, NULL) ==
          cudaErrorInvalidValue);

    OK(cudaFreeMipmappedArray(mip));
    CHECK(cudaArrayGetInfo(NULL, &e, NULL, l1) ==
          cudaErrorInvalidResourceHandle);
    OK(cudaFreeArray(arr));
    OK(cudaFreeArray(arr2));
    printf("arrays ok\n");
}

static void pools()
{
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    int *p;
    OK(cudaMallocAsync((void **)&p, 4096, s));
    OK(cudaMemsetAsync(p, 0x22, 4096, s));
    int h[1024];
    // Stream-ordered memory is device memory to cudaMemcpyDefault.
    OK(cudaMemcpyAsync(h, p, sizeof(h), cudaMemcpyDefault, s));
    OK(cudaStreamSynchronize(s));
    CHECK(h[1023] == 0x22222222);
    OK(cudaFreeAsync(p, s));

    cudaMemPool_t def, def2, cur;
    OK(cudaDeviceGetDefaultMemPool(&def, 0));
    OK(cudaDeviceGetDefaultMemPool(&def2, 0));
    OK(cudaDeviceGetMemPool(&cur, 0));
    CHECK(def == def2 && def == cur);

    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    OK(cudaMemPoolCreate(&pool, &props));
    CHECK(pool != def);
    uint64_t thr = 1 << 20, got = 0;
    OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got));
    CHECK(got == thr);
    int reuse = 0, r = 1;
    OK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
    OK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &r));
    CHECK(r == 0);
    CHECK(cudaMemPoolGetAttribute(pool, (cudaMemPoolAttr)99, &r) ==
          cudaErrorInvalidValue);
    OK(cudaMallocFromPoolAsync((void **)&p, 1000, pool, s));
    OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &got));
    CHECK(got == 1000);
    OK(cudaFreeAsync(p, s));
    OK(cudaMemPoolTrimTo(pool, 0));
    cudaMemAccessDesc acc = {};
    acc.location.type = cudaMemLocationTypeDevice;
    acc.location.id = 1;
    acc.flags = cudaMemAccessFlagsProtReadWrite;
    OK(cudaMemPoolSetAccess(pool, &acc, 1));
    cudaMemAccessFlags f;
    OK(cudaMemPoolGetAccess(&f, pool, &acc.location));
    CHECK(f == cudaMemAccessFlagsProtReadWrite);
    OK(cudaDeviceSetMemPool(0, pool));
    OK(cudaDeviceGetMemPool(&cur, 0));
    CHECK(cur == pool);
    OK(cudaDeviceSetMemPool(0, def));
    CHECK(cudaMemPoolDestroy(def) == cudaErrorInvalidValue);
    OK(cudaMemPoolDestroy(pool));
    CHECK(cudaMemPoolDestroy(pool) == cudaErrorInvalidValue);
    CHECK(cudaMemPoolTrimTo((cudaMemPool_t)0x4242, 0) == cudaErrorInvalidValue);
    OK(cudaStreamDestroy(s));
    printf("pools ok\n");
}

static int host_runs;
static void CUDART_CB on_host(void *arg)
{
    host_runs += *(int *)arg;
}

static void graphs()
{
    int *d, h[128];
    OK(cudaMalloc(&d, sizeof(h)));
    int *d2;
    OK(cudaMalloc(&d2, sizeof(h)));
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t set, k, cp, e, host;
    cudaMemsetParams mp = {};
    mp.dst = d;
    mp.pitch = sizeof(h);
    mp.value = 7;
    mp.elementSize = 4;
    mp.width = 128;
    mp.height = 1;
    OK(cudaGraphAddMemsetNode(&set, g, NULL, 0, &mp));
    int n = 100;
    double dd = 1.0;
    char c = 2;
    void *args[] = {&d, &n, &dd, &c};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)fill;
    kp.gridDim = dim3(2);
    kp.blockDim = dim3(64);
    kp.kernelParams = args;
    OK(cudaGraphAddKernelNode(&k, g, &set, 1, &kp));
    // The arguments were taken when the node was made.
    n = 0;
    OK(cudaGraphAddMemcpyNode1D(&cp, g, &k, 1, d2, d, sizeof(h),
                                cudaMemcpyDeviceToDevice));
    OK(cudaGraphAddEmptyNode(&e, g, &cp, 1));
    int weight = 1;
    cudaHostNodeParams hp = {on_host, &weight};
    OK(cudaGraphAddHostNode(&host, g, &e, 1, &hp));
    size_t count = 0;
    OK(cudaGraphGetNodes(g, NULL, &count));
    CHECK(count == 5);
    cudaGraphNode_t nodes[8], roots[8];
    count = 8;
    OK(cudaGraphGetNodes(g, nodes, &count));
    CHECK(count == 5 && nodes[0] == set && nodes[1] == k && nodes[5] == NULL);
    count = 8;
    OK(cudaGraphGetRootNodes(g, roots, &count));
    CHECK(count == 1 && roots[0] == set);
    cudaGraphNode_t from[8], to[8];
    count = 8;
    OK(cudaGraphGetEdges(g, from, to, NULL, &count));
    CHECK(count == 4 && from[0] == set && to[0] == k);
    cudaGraphNodeType t;
    OK(cudaGraphNodeGetType(k, &t));
    CHECK(t == cudaGraphNodeTypeKernel);
    count = 8;
    OK(cudaGraphNodeGetDependentNodes(set, nodes, NULL, &count));
    CHECK(count == 1 && nodes[0] == k);

    // A copy node of the program's host memory (mock_shared.cu runs
    // such nodes); a node that names no graph.
    cudaGraphNode_t bad;
    OK(cudaGraphAddMemcpyNode1D(&bad, g, NULL, 0, h, d, 4,
                                cudaMemcpyDeviceToHost));
    OK(cudaGraphDestroyNode(bad));
    CHECK(cudaGraphAddKernelNode(&bad, (cudaGraph_t)0x77, NULL, 0, &kp) ==
          cudaErrorInvalidValue);

    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(h, d2, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 3 && h[99] == 102 && h[100] == 7);
    CHECK(host_runs == 1);
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    CHECK(host_runs == 2);

    // New kernel arguments in the executable graph only.
    n = 10;
    dd = 5.0;
    OK(cudaGraphExecKernelNodeSetParams(x, k, &kp));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(h, d2, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 7 && h[9] == 16 && h[10] == 7);
    unsigned enabled = 9;
    OK(cudaGraphNodeGetEnabled(x, host, &enabled));
    CHECK(enabled == 1);
    OK(cudaGraphNodeSetEnabled(x, host, 0));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    CHECK(host_runs == 3);

    // Clone, find, update.
    cudaGraph_t g2;
    cudaGraphNode_t k2;
    OK(cudaGraphClone(&g2, g));
    OK(cudaGraphNodeFindInClone(&k2, k, g2));
    CHECK(k2 != k);
    n = 128;
    dd = 0.0;
    c = 0;
    OK(cudaGraphKernelNodeSetParams(k2, &kp));
    cudaGraphExecUpdateResultInfo info;
    OK(cudaGraphExecUpdate(x, g2, &info));
    CHECK(info.result == cudaGraphExecUpdateSuccess);
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(h, d2, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 0 && h[127] == 127);
    OK(cudaGraphDestroyNode(k2));
    CHECK(cudaGraphExecUpdate(x, g2, &info) == cudaErrorGraphExecUpdateFailure);
    CHECK(info.result == cudaGraphExecUpdateErrorTopologyChanged);
    CHECK(cudaGraphNodeGetType(k2, &t) == cudaErrorInvalidValue);

    OK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphLaunch(x, 0) == cudaErrorInvalidValue);
    OK(cudaGraphDestroy(g2));
    OK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(g) == cudaErrorInvalidValue);
    CHECK(cudaGraphNodeGetType(k, &t) == cudaErrorInvalidValue);

    // Capture: ids and status travel (the mock captures no work).
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    cudaStreamCaptureStatus st;
    OK(cudaStreamIsCapturing(s, &st));
    CHECK(st == cudaStreamCaptureStatusNone);
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    OK(cudaStreamIsCapturing(s, &st));
    CHECK(st == cudaStreamCaptureStatusActive);
    unsigned long long id = 0;
    cudaGraph_t in_flight = NULL, captured;
    OK(cudaStreamGetCaptureInfo(s, &st, &id, &in_flight, NULL, NULL, NULL));
    CHECK(st == cudaStreamCaptureStatusActive && id != 0 && in_flight != NULL);
    CHECK(cudaGraphDestroy(in_flight) == cudaErrorInvalidValue);
    OK(cudaStreamEndCapture(s, &captured));
    CHECK(captured == in_flight);
    OK(cudaGraphDestroy(captured));
    CHECK(cudaStreamEndCapture(s, &captured) != cudaSuccess && captured == NULL);
    OK(cudaStreamDestroy(s));
    OK(cudaFree(d));
    OK(cudaFree(d2));
    printf("graphs ok\n");
}

// The client's records of callbacks (ids from 1 up), through the layer
// frontend's exported lookup.
static int client_records()
{
    typedef int (*find_fn)(uint64_t, void *);
    static find_fn find =
        (find_fn)dlsym(RTLD_DEFAULT, "gvs_remote_callback_find");
    CHECK(find != NULL);
    alignas(16) unsigned char out[256];
    int n = 0;
    for (uint64_t id = 1; id <= 4096; id++)
        n += find(id, out) == 0;
    return n;
}

// The worker tells the client when a record goes (CALLBACK_FORGET), on
// CUDA's thread for user objects: waits up to 5 s for want records.
static void wait_records(int want)
{
    int n = client_records();
    for (int i = 0; i < 500 && n != want; i++) {
        usleep(10000);
        n = client_records();
    }
    if (n != want)
        fprintf(stderr, "client records: %d, want %d\n", n, want);
    CHECK(n == want);
}

// A host node's record on the backend lives while a graph, a clone or an
// executable graph holds it: each graph here goes before what was made
// from it runs (the worker's ASan would see a record freed too soon).
// Once none holds it, the client's record goes too.
static void host_records()
{
    wait_records(0);
    int ten = 10, hundred = 100;
    cudaHostNodeParams hp = {on_host, &ten}, hq = {on_host, &hundred};
    cudaGraph_t g, clone;
    cudaGraphNode_t host;
    cudaGraphExec_t x, y;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddHostNode(&host, g, NULL, 0, &hp));
    OK(cudaGraphClone(&clone, g));
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphHostNodeSetParams(host, &hq));
    OK(cudaGraphInstantiate(&y, g, 0));
    OK(cudaGraphExecHostNodeSetParams(y, host, &hp));
    OK(cudaGraphDestroy(g));
    int before = host_runs;
    OK(cudaGraphLaunch(x, 0));
    OK(cudaGraphLaunch(y, 0));
    OK(cudaDeviceSynchronize());
    CHECK(host_runs == before + 20);
    OK(cudaGraphExecDestroy(y));
    cudaGraphExecUpdateResultInfo info;
    OK(cudaGraphExecUpdate(x, clone, &info));
    OK(cudaGraphDestroy(clone));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    CHECK(host_runs == before + 30);
    OK(cudaGraphExecDestroy(x));

    // More host nodes than the mock's graph takes user objects: the
    // records it refused are held by the worker, and run all the same.
    OK(cudaGraphCreate(&g, 0));
    for (int i = 0; i < 40; i++)
        OK(cudaGraphAddHostNode(&host, g, NULL, 0, &hp));
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphDestroy(g));
    before = host_runs;
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    CHECK(host_runs == before + 400);
    OK(cudaGraphExecDestroy(x));

    // A host function captured from a stream (the mock runs it as it
    // comes): its record goes with the capture's graph.
    cudaStream_t s;
    cudaGraph_t captured;
    OK(cudaStreamCreate(&s));
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    OK(cudaLaunchHostFunc(s, on_host, &ten));
    OK(cudaStreamEndCapture(s, &captured));
    OK(cudaGraphInstantiate(&x, captured, 0));
    OK(cudaGraphDestroy(captured));
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    OK(cudaGraphExecDestroy(x));
    OK(cudaStreamDestroy(s));
    // Left: the record set on y's node and the 8 the graph refused.
    wait_records(9);
    printf("host records ok\n");
}

// Managed memory: the host's writes reach the device before device work,
// the device's reach the host at synchronizations.
static void managed()
{
    const int n = 5000;
    int *m, *d, h[n];
    OK(cudaMallocManaged((void **)&m, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        m[i] = 3 * i;
    OK(cudaMalloc((void **)&d, n * sizeof(int)));
    OK(cudaMemcpy(d, m, n * sizeof(int), cudaMemcpyDefault));
    OK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 0 && h[n - 1] == 3 * (n - 1));
    fill<<<8, 1024>>>(m, n, 0.0, 1);
    OK(cudaDeviceSynchronize());
    CHECK(m[0] == 1 && m[n - 1] == n);
    // Written again, read by the device again.
    m[17] = -5;
    OK(cudaMemcpy(h, m, n * sizeof(int), cudaMemcpyDefault));
    CHECK(h[17] == -5 && h[18] == 19);
    CHECK(cudaMallocManaged((void **)&d, 0) == cudaErrorInvalidValue);
    OK(cudaFree(m));

    CHECK(mcounter[0] == 42 && mcounter[1] == 0 && mpair[1] == 0);
    mcounter[1] = 7;
    mpair[1] = 9;
    fill<<<1, 1>>>(mpair, 1, 1.0, 0);
    OK(cudaDeviceSynchronize());
    CHECK(mpair[0] == 1 && mpair[1] == 9);
    fill<<<1, 1>>>(mcounter, 1, 5.0, 0);
    OK(cudaStreamSynchronize(0));
    CHECK(mcounter[0] == 5 && mcounter[1] == 7);
    OK(cudaMemcpy(h, mcounter, sizeof(mcounter), cudaMemcpyDefault));
    CHECK(h[0] == 5 && h[1] == 7);
    OK(cudaFree(d));
    printf("managed ok\n");
}

int main()
{
    stats_init();
    pitched();
    arrays();
    pools();
    graphs();
    host_records();
    managed();
    printf("ok\n");
    return 0;
}
