/*
 * cuda.mock_memops: a driver API program (linked with -lcuda) through
 * gvsd and the mock driver (mock_memops.c): stream memory operations
 * posted where they cannot fail and their round trips counted, the
 * failures the driver reports at once, batches, the legacy forms; host
 * memory shared over shm:// as their address; batch memory operation
 * nodes; tensor maps; 3D peer copies; the legacy unsuffixed exports.
 * Prints "ok".
 */
#include <string.h>

#include "driver_check.h"

typedef CUresult (*memop32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
typedef CUresult (*batch_fn)(CUstream, unsigned, CUstreamBatchMemOpParams *,
                             unsigned);

static void *sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    EXPECT(p != NULL);
    return p;
}

static uint32_t read32(CUdeviceptr p)
{
    uint32_t v = 0;
    CHECK(cuMemcpyDtoH(&v, p, sizeof(v)));
    return v;
}

static uint64_t read64(CUdeviceptr p)
{
    uint64_t v = 0;
    CHECK(cuMemcpyDtoH(&v, p, sizeof(v)));
    return v;
}

static CUstreamBatchMemOpParams write_op(CUdeviceptr a, uint64_t v, int wide)
{
    CUstreamBatchMemOpParams op;
    memset(&op, 0, sizeof(op));
    op.operation = wide ? CU_STREAM_MEM_OP_WRITE_VALUE_64
                        : CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = a;
    if (wide)
        op.writeValue.value64 = v;
    else
        op.writeValue.value = (cuuint32_t)v;
    return op;
}

/* Waits and writes on device memory of the stream's device, posted; the
 * failures the driver reports at once, each a round trip. */
static void single(CUstream s, CUdeviceptr d)
{
    int v = 0;
    /* The 64-bit forms are posted once the device said it has them. */
    CHECK(cuDeviceGetAttribute(
        &v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0));
    struct stats s0 = now();
    CHECK(cuStreamWriteValue32(s, d, 7, 0));
    CHECK(cuStreamWaitValue32(s, d, 7, CU_STREAM_WAIT_VALUE_EQ));
    CHECK(cuStreamWriteValue64(s, d + 8, 0x123456789aull, 0));
    CHECK(cuStreamWaitValue64(s, d + 8, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK(cuStreamWriteValue32(NULL, d + 16, 5, 0));
    CHECK(cuStreamWriteValue32(CU_STREAM_PER_THREAD, d + 20, 6, 0));
    EXPECT(now().round_trips == s0.round_trips);
    EXPECT(now().posts - s0.posts == 6);
    EXPECT(read32(d) == 7 && read64(d + 8) == 0x123456789aull);
    EXPECT(read32(d + 16) == 5 && read32(d + 20) == 6);

    s0 = now();
    /* Misaligned, flags no wait has, a stream that is none, the
     * client's own memory, the legacy form (answered by the driver). */
    EXPECT(cuStreamWriteValue32(s, d + 2, 1, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamWaitValue32(s, d, 1, 9) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamWriteValue64(s, d + 4, 1, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamWriteValue32((CUstream)(uintptr_t)0x7777, d, 1, 0) ==
           CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuStreamWriteValue32(s, (CUdeviceptr)(uintptr_t)&v, 1, 0) ==
           CUDA_ERROR_INVALID_VALUE);
    memop32 legacy = (memop32)sym("cuStreamWriteValue32");
    CHECK(legacy(s, d + 24, 11, 0));
    EXPECT(now().round_trips - s0.round_trips == 6);
    EXPECT(now().posts == s0.posts);
    EXPECT(read32(d + 24) == 11);
    memop32 legacy_ptsz = (memop32)sym("cuStreamWaitValue32_ptsz");
    CHECK(legacy_ptsz(NULL, d + 24, 11, CU_STREAM_WAIT_VALUE_EQ));
}

static void batches(CUstream s, CUdeviceptr d)
{
    CUstreamBatchMemOpParams ops[3] = {write_op(d + 32, 3, 0),
                                       write_op(d + 40, 0xabcdef01234ull, 1)};
    struct stats s0 = now();
    CHECK(cuStreamBatchMemOp(s, 2, ops, 0));
    EXPECT(now().round_trips == s0.round_trips);
    EXPECT(read32(d + 32) == 3 && read64(d + 40) == 0xabcdef01234ull);

    /* A barrier takes a round trip; the legacy form has none. */
    memset(&ops[2], 0, sizeof(ops[2]));
    ops[2].operation = CU_STREAM_MEM_OP_BARRIER;
    ops[2].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_GPU;
    ops[0].writeValue.value = 4;
    s0 = now();
    CHECK(cuStreamBatchMemOp(s, 3, ops, 0));
    EXPECT(now().round_trips - s0.round_trips == 1);
    EXPECT(read32(d + 32) == 4);
    batch_fn legacy = (batch_fn)sym("cuStreamBatchMemOp");
    EXPECT(legacy(s, 3, ops, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(legacy(s, 2, ops, 0));

    /* Flags, no operation, more than the driver takes, an unknown type,
     * a flush the mock's devices cannot do. */
    EXPECT(cuStreamBatchMemOp(s, 2, ops, 1) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamBatchMemOp(s, 0, ops, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamBatchMemOp(s, 1000, ops, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamBatchMemOp(s, 2, NULL, 0) == CUDA_ERROR_INVALID_VALUE);
    ops[2].operation = (CUstreamBatchMemOpType)99;
    EXPECT(cuStreamBatchMemOp(s, 3, ops, 0) == CUDA_ERROR_INVALID_VALUE);
    ops[2].operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
    ops[2].flushRemoteWrites.flags = 0;
    EXPECT(cuStreamBatchMemOp(s, 3, ops, 0) == CUDA_ERROR_NOT_SUPPORTED);
}

/* Page-locked memory shared with the backend (shm://) is an address the
 * GPU reaches: its device address takes a write the client then reads.
 * Elsewhere it is the client's own memory, which the GPU cannot reach. */
static void host_memory(CUstream s)
{
    void *h;
    CUdeviceptr dp;
    CHECK(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    memset(h, 0, 4096);
    CUresult r = cuMemHostGetDevicePointer(&dp, h, 0);
    if (r == CUDA_SUCCESS) {
        CHECK(cuStreamWriteValue32(s, dp + 64, 0xfeed, 0));
        CHECK(cuStreamWaitValue32(s, dp + 64, 0xfeed,
                                  CU_STREAM_WAIT_VALUE_EQ));
        CHECK(cuStreamSynchronize(s));
        EXPECT(((volatile uint32_t *)h)[16] == 0xfeed);
        EXPECT(cuStreamWriteValue32(s, dp + 4096, 1, 0) ==
               CUDA_ERROR_INVALID_VALUE);
    } else {
        EXPECT(r == CUDA_ERROR_NOT_SUPPORTED);
        EXPECT(cuStreamWriteValue32(s, (CUdeviceptr)(uintptr_t)h, 1, 0) ==
               CUDA_ERROR_INVALID_VALUE);
    }
    CHECK(cuMemFreeHost(h));
}

static void nodes(CUcontext ctx, CUstream s, CUdeviceptr d)
{
    CUstreamBatchMemOpParams ops[2] = {write_op(d + 48, 21, 0),
                                       write_op(d + 56, 22, 1)};
    CUDA_BATCH_MEM_OP_NODE_PARAMS p = {ctx, 2, ops, 0}, q;
    CUgraph g;
    CUgraphNode n;
    CUgraphExec x;
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
    memset(&q, 0, sizeof(q));
    CHECK(cuGraphBatchMemOpNodeGetParams(n, &q));
    EXPECT(q.ctx == ctx && q.count == 2 && q.flags == 0);
    EXPECT(q.paramArray[0].operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 &&
           q.paramArray[0].writeValue.address == d + 48 &&
           q.paramArray[0].writeValue.value == 21);
    EXPECT(q.paramArray[1].operation == CU_STREAM_MEM_OP_WRITE_VALUE_64 &&
           q.paramArray[1].writeValue.value64 == 22);
    ops[0].writeValue.value = 31;
    CHECK(cuGraphBatchMemOpNodeSetParams(n, &p));
    CHECK(cuGraphInstantiate(&x, g, 0));
    CHECK(cuGraphLaunch(x, s));
    CHECK(cuStreamSynchronize(s));
    EXPECT(read32(d + 48) == 31 && read64(d + 56) == 22);
    ops[0].writeValue.value = 41;
    CHECK(cuGraphExecBatchMemOpNodeSetParams(x, n, &p));
    CHECK(cuGraphLaunch(x, s));
    CHECK(cuStreamSynchronize(s));
    EXPECT(read32(d + 48) == 41);

    /* Host memory of the client's, a context the session never had. */
    ops[0].writeValue.address = (CUdeviceptr)(uintptr_t)&p;
    EXPECT(cuGraphBatchMemOpNodeSetParams(n, &p) == CUDA_ERROR_INVALID_VALUE);
    ops[0].writeValue.address = d + 48;
    p.ctx = (CUcontext)(uintptr_t)0x7777;
    EXPECT(cuGraphAddBatchMemOpNode(&n, g, NULL, 0, &p) ==
           CUDA_ERROR_INVALID_CONTEXT);
    CUgraphNode e;
    CHECK(cuGraphAddEmptyNode(&e, g, NULL, 0));
    EXPECT(cuGraphBatchMemOpNodeGetParams(e, &q) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphDestroy(g));
}

/* The mock's encoding: magic, address, rank, dims (mock_memops.c). */
static void tensor_maps(CUdeviceptr d)
{
    CUtensorMap m;
    uint64_t w[16];
    cuuint64_t dims[3] = {16, 16, 4}, strides[2] = {64, 1024};
    cuuint32_t box[3] = {8, 8, 1}, es[3] = {1, 1, 1};
    int lower[1] = {0}, upper[1] = {0};
    uint64_t s0 = now().round_trips;
    CHECK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                 (void *)(uintptr_t)d, dims, strides, box, es,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    EXPECT(now().round_trips - s0 == 1);
    memcpy(w, &m, sizeof(w));
    EXPECT(w[1] == d && w[2] == 2 && w[3] == 16 && w[4] == 16 && w[5] == 0);
    CHECK(cuTensorMapReplaceAddress(&m, (void *)(uintptr_t)(d + 256)));
    memcpy(w, &m, sizeof(w));
    EXPECT(w[1] == d + 256 && w[3] == 16);
    CHECK(cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3,
                                  (void *)(uintptr_t)d, dims, strides, lower,
                                  upper, 8, 4, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    memcpy(w, &m, sizeof(w));
    EXPECT(w[2] == 3 && w[5] == 4);
    CHECK(cuTensorMapEncodeIm2colWide(
        &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)(uintptr_t)d, dims,
        strides, 0, 0, 8, 4, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));

    /* Misaligned (the driver's answer), the client's memory (the
     * backend's), no rank (the client's), the map untouched each time. */
    CUtensorMap keep = m;
    EXPECT(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                  (void *)(uintptr_t)(d + 4), dims, strides,
                                  box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, w,
                                  dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
           CUDA_ERROR_INVALID_VALUE);
    s0 = now().round_trips;
    EXPECT(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0,
                                  (void *)(uintptr_t)d, dims, strides, box,
                                  es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips == s0);
    EXPECT(cuTensorMapReplaceAddress(&m, (void *)(uintptr_t)(d + 8)) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(memcmp(&m, &keep, sizeof(m)) == 0);
}

/* A 3D copy between the primary contexts of the mock's two devices and
 * host memory: the 3D copy's own path. */
static void copy3d_peer(CUcontext c0, CUdeviceptr d)
{
    static uint8_t src[64 * 4], back[64 * 4];
    CUcontext c1;
    CUdeviceptr b;
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)(i * 7);
    CHECK(cuDevicePrimaryCtxRetain(&c1, 1));
    CHECK(cuCtxSetCurrent(c1));
    CHECK(cuMemAlloc(&b, 4096));
    CHECK(cuMemcpyHtoD(b, src, sizeof(src)));
    CHECK(cuCtxSetCurrent(c0));
    CUDA_MEMCPY3D_PEER p;
    memset(&p, 0, sizeof(p));
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = b;
    p.srcContext = c1;
    p.srcPitch = 64;
    p.srcHeight = 4;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = d + 1024;
    p.dstContext = c0;
    p.dstPitch = 128;
    p.dstHeight = 4;
    p.WidthInBytes = 64;
    p.Height = 4;
    p.Depth = 1;
    CHECK(cuMemcpy3DPeer(&p));
    p.srcDevice = d + 1024;
    p.srcContext = c0;
    p.srcPitch = 128;
    p.dstMemoryType = CU_MEMORYTYPE_HOST;
    p.dstHost = back;
    p.dstContext = NULL;
    p.dstPitch = 64;
    CHECK(cuMemcpy3DPeerAsync(&p, NULL));
    CHECK(cuCtxSynchronize());
    EXPECT(memcmp(src, back, sizeof(src)) == 0);
    p.dstContext = (CUcontext)(uintptr_t)0x7777;
    EXPECT(cuMemcpy3DPeer(&p) == CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuMemcpy3DPeer(NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuCtxSetCurrent(c1));
    CHECK(cuMemFree(b));
    CHECK(cuCtxSetCurrent(c0));
    CHECK(cuDevicePrimaryCtxRelease(1));
}

/* The unsuffixed exports of old binaries, found by name. */
static void legacy(CUcontext c0)
{
    CUresult (*stream_destroy)(CUstream) = sym("cuStreamDestroy");
    CUresult (*event_destroy)(CUevent) = sym("cuEventDestroy");
    CUresult (*info)(CUstream, CUstreamCaptureStatus *, cuuint64_t *) =
        sym("cuStreamGetCaptureInfo");
    CUresult (*elapsed)(float *, CUevent, CUevent) = sym("cuEventElapsedTime");
    CUstream s;
    CUevent a, b;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    cuuint64_t id;
    float ms, ms2;
    CHECK(cuStreamCreate(&s, 0));
    CHECK(info(s, &st, &id));
    EXPECT(st == CU_STREAM_CAPTURE_STATUS_NONE);
    CHECK(cuEventCreate(&a, 0));
    CHECK(cuEventCreate(&b, 0));
    CHECK(cuEventRecord(a, s));
    CHECK(cuEventRecord(b, s));
    EXPECT(elapsed(&ms, a, b) == cuEventElapsedTime(&ms2, a, b));
    CHECK(event_destroy(a));
    CHECK(event_destroy(b));
    CHECK(stream_destroy(s));
    EXPECT(stream_destroy((CUstream)(uintptr_t)0x7777) ==
           CUDA_ERROR_INVALID_HANDLE);
    /* CUDA 3.2's contexts: not served. */
    CUresult (*create)(CUcontext *, unsigned, CUdevice) = sym("cuCtxCreate");
    CUcontext c = NULL;
    EXPECT(create(&c, 0, 1) == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(cuCtxSetCurrent(c0));
}

int main(void)
{
    CUcontext c0;
    CUstream s;
    CUdeviceptr d, t;
    stats_init();
    EXPECT(cuStreamWriteValue32(NULL, 0, 0, 0) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&c0, 0));
    CHECK(cuCtxSetCurrent(c0));
    CHECK(cuStreamCreate(&s, 0));
    CHECK(cuMemAlloc(&d, 4096));
    CHECK(cuMemsetD8(d, 0, 4096));
    single(s, d);
    batches(s, d);
    host_memory(s);
    nodes(c0, s, d);
    CHECK(cuMemAlloc(&t, 4096));
    tensor_maps(t);
    copy3d_peer(c0, d);
    legacy(c0);
    CHECK(cuMemFree(t));
    CHECK(cuMemFree(d));
    CHECK(cuStreamDestroy(s));
    CHECK(cuCtxSetCurrent(NULL));
    CHECK(cuDevicePrimaryCtxRelease(0));
    printf("ok\n");
    return 0;
}
