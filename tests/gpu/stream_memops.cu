// Stream memory operations (CUDA Driver API, "Stream Memory Operations"):
// a write on one stream releases a wait on another that gates a kernel;
// the 64-bit forms and the wait conditions; a batch; a graph with a batch
// memory operation node, its parameters queried and changed; the legacy
// unsuffixed forms; the driver's refusals.  The streams and memory are
// the runtime's, as libraries mixing both APIs use them.
#include "check.h"
#include "driver_api.h"

#include <cstring>

#define CHECK_CU(call)                                                         \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            printf("FAIL %s: %s\n", #call, name(r_));                          \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static const char *name(CUresult r)
{
    return driver_error_name(r);
}

__global__ void read32(const unsigned *flag, unsigned *out)
{
    out[threadIdx.x] = *flag * 10 + threadIdx.x;
}

__global__ void read64(const unsigned long long *flag, unsigned long long *out)
{
    out[threadIdx.x] = *flag + threadIdx.x;
}

// Memory for the flags: 32-bit ones at 0.., 64-bit ones at 256...
struct flags {
    unsigned *f32;
    unsigned long long *f64;
    CUdeviceptr d32(int i) const { return (CUdeviceptr)(f32 + i); }
    CUdeviceptr d64(int i) const { return (CUdeviceptr)(f64 + i); }
};

static CUstreamBatchMemOpParams op(CUstreamBatchMemOpType type, CUdeviceptr a,
                                   unsigned long long v, unsigned flags)
{
    CUstreamBatchMemOpParams p;
    memset(&p, 0, sizeof(p));
    p.operation = type;
    p.waitValue.address = a;
    p.waitValue.flags = flags;
    if (type == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
        type == CU_STREAM_MEM_OP_WRITE_VALUE_64)
        p.waitValue.value64 = v;
    else
        p.waitValue.value = (cuuint32_t)v;
    return p;
}

static void gate(const flags &f, cudaStream_t waiter, cudaStream_t writer,
                 unsigned *out)
{
    unsigned host[4];
    CHECK_CU(DRIVER(cuStreamWaitValue32)(waiter, f.d32(0), 1,
                                         CU_STREAM_WAIT_VALUE_EQ));
    read32<<<1, 4, 0, waiter>>>(f.f32, out);
    CHECK(cudaGetLastError());
    // The kernel waits for the write, which has not been enqueued.
    printf("gated before the write: %s\n",
           cudaGetErrorName(cudaStreamQuery(waiter)));
    CHECK_CU(DRIVER(cuStreamWriteValue32)(writer, f.d32(0), 1, 0));
    CHECK(cudaStreamSynchronize(waiter));
    CHECK(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost));
    printf("gated kernel read: %u %u %u %u\n", host[0], host[1], host[2],
           host[3]);

    // A cyclic greater-or-equal, a mask, and NOR where the device has it.
    CUresult w = DRIVER(cuStreamWriteValue32)(
        writer, f.d32(1), 6, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER);
    printf("write without a memory barrier: %s\n", name(w));
    if (w != CUDA_SUCCESS)
        CHECK_CU(DRIVER(cuStreamWriteValue32)(writer, f.d32(1), 6, 0));
    CHECK(cudaStreamSynchronize(writer));
    CHECK_CU(DRIVER(cuStreamWaitValue32)(waiter, f.d32(1), 5,
                                         CU_STREAM_WAIT_VALUE_GEQ));
    CHECK_CU(DRIVER(cuStreamWaitValue32)(waiter, f.d32(1), 4,
                                         CU_STREAM_WAIT_VALUE_AND));
    int nor = 0;
    CHECK_CU(DRIVER(cuDeviceGetAttribute)(
        &nor, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 0));
    CUresult r = DRIVER(cuStreamWaitValue32)(waiter, f.d32(1), 0,
                                             CU_STREAM_WAIT_VALUE_NOR);
    printf("nor supported %d: %s\n", nor != 0, name(r));
    CHECK(cudaStreamSynchronize(waiter));
    printf("conditions met\n");
}

static void wide(const flags &f, cudaStream_t waiter, cudaStream_t writer,
                 unsigned long long *out)
{
    unsigned long long host[2];
    int ok = 0;
    CHECK_CU(DRIVER(cuDeviceGetAttribute)(
        &ok, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0));
    printf("64-bit operations: %d\n", ok != 0);
    if (!ok)
        return;
    CHECK_CU(DRIVER(cuStreamWaitValue64)(waiter, f.d64(0), 0x100000000ull,
                                         CU_STREAM_WAIT_VALUE_GEQ));
    read64<<<1, 2, 0, waiter>>>(f.f64, out);
    CHECK(cudaGetLastError());
    CHECK_CU(DRIVER(cuStreamWriteValue64)(writer, f.d64(0), 0x100000002ull, 0));
    CHECK(cudaStreamSynchronize(waiter));
    CHECK(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost));
    printf("64-bit gated read: %llx %llx\n", host[0], host[1]);
}

static void batch(const flags &f, cudaStream_t s, unsigned *out)
{
    unsigned host[4];
    CUstreamBatchMemOpParams ops[4] = {
        op(CU_STREAM_MEM_OP_WRITE_VALUE_32, f.d32(2), 5, 0),
        op(CU_STREAM_MEM_OP_WRITE_VALUE_64, f.d64(1), 0xabcdef0123ull, 0),
        op(CU_STREAM_MEM_OP_WAIT_VALUE_32, f.d32(2), 5,
           CU_STREAM_WAIT_VALUE_EQ),
    };
    memset(&ops[3], 0, sizeof(ops[3]));
    ops[3].operation = CU_STREAM_MEM_OP_BARRIER;
    ops[3].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_GPU;
    CHECK_CU(DRIVER(cuStreamBatchMemOp)(s, 4, ops, 0));
    read32<<<1, 4, 0, s>>>(f.f32 + 2, out);
    CHECK(cudaStreamSynchronize(s));
    unsigned long long v = 0;
    CHECK(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&v, f.f64 + 1, sizeof(v), cudaMemcpyDeviceToHost));
    printf("batch: %u %u, %llx\n", host[0], host[3], v);

    // As many operations as the driver takes, and no flags.
    static CUstreamBatchMemOpParams many[256];
    for (int i = 0; i < 256; i++)
        many[i] = op(CU_STREAM_MEM_OP_WRITE_VALUE_32, f.d32(8 + i % 32), i, 0);
    auto batch_op = DRIVER(cuStreamBatchMemOp);
    printf("batch of 256: %s\n", name(batch_op(s, 256, many, 0)));
    printf("batch of 255: %s\n", name(batch_op(s, 255, many, 0)));
    printf("batch flags 1: %s\n", name(batch_op(s, 2, ops, 1)));
    printf("batch of 0: %s\n", name(batch_op(s, 0, ops, 0)));
    CHECK(cudaStreamSynchronize(s));
}

static void graph(const flags &f, cudaStream_t s)
{
    CUcontext ctx;
    CHECK_CU(DRIVER(cuCtxGetCurrent)(&ctx));
    CUstreamBatchMemOpParams ops[2] = {
        op(CU_STREAM_MEM_OP_WRITE_VALUE_32, f.d32(3), 77, 0),
        op(CU_STREAM_MEM_OP_WRITE_VALUE_64, f.d64(2), 78, 0),
    };
    CUDA_BATCH_MEM_OP_NODE_PARAMS p = {ctx, 2, ops, 0}, q;
    CUgraph g;
    CUgraphNode n;
    CUgraphExec x;
    CHECK_CU(DRIVER(cuGraphCreate)(&g, 0));
    CHECK_CU(DRIVER(cuGraphAddBatchMemOpNode)(&n, g, NULL, 0, &p));
    CUgraphNodeType type;
    CHECK_CU(DRIVER(cuGraphNodeGetType)(n, &type));
    memset(&q, 0, sizeof(q));
    CHECK_CU(DRIVER(cuGraphBatchMemOpNodeGetParams)(n, &q));
    printf("node type %d: count %u, ops %d %d, values %u %llu, same "
           "context %d\n",
           (int)type, q.count, (int)q.paramArray[0].operation,
           (int)q.paramArray[1].operation, q.paramArray[0].writeValue.value,
           (unsigned long long)q.paramArray[1].writeValue.value64,
           q.ctx == ctx);
    ops[0].writeValue.value = 87;
    CHECK_CU(DRIVER(cuGraphBatchMemOpNodeSetParams)(n, &p));
    CHECK_CU(DRIVER(cuGraphInstantiate)(&x, g, 0));
    CHECK_CU(DRIVER(cuGraphLaunch)(x, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned v = 0;
    unsigned long long w = 0;
    CHECK(cudaMemcpy(&v, f.f32 + 3, sizeof(v), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&w, f.f64 + 2, sizeof(w), cudaMemcpyDeviceToHost));
    printf("graph wrote: %u %llu\n", v, w);
    ops[0].writeValue.value = 97;
    CHECK_CU(DRIVER(cuGraphExecBatchMemOpNodeSetParams)(x, n, &p));
    CHECK_CU(DRIVER(cuGraphLaunch)(x, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(&v, f.f32 + 3, sizeof(v), cudaMemcpyDeviceToHost));
    printf("executable graph wrote: %u\n", v);
    CHECK_CU(DRIVER(cuGraphExecDestroy)(x));
    CHECK_CU(DRIVER(cuGraphDestroy)(g));
}

// The driver's refusals, and the unsuffixed form of CUDA 8 old binaries
// link, found by its name.
static void refusals(const flags &f, cudaStream_t s)
{
    printf("misaligned write: %s\n",
           name(DRIVER(cuStreamWriteValue32)(s, f.d32(0) + 2, 1, 0)));
    printf("misaligned 64-bit write: %s\n",
           name(DRIVER(cuStreamWriteValue64)(s, f.d64(0) + 4, 1, 0)));
    printf("wait flags 7: %s\n",
           name(DRIVER(cuStreamWaitValue32)(s, f.d32(0), 1, 7)));
    printf("write flags 2: %s\n",
           name(DRIVER(cuStreamWriteValue32)(s, f.d32(0), 1, 2)));
    unsigned *managed;
    CHECK(cudaMallocManaged(&managed, 64));
    printf("managed memory: %s\n",
           name(DRIVER(cuStreamWriteValue32)(s, (CUdeviceptr)managed, 1, 0)));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(managed));

    typedef CUresult (*memop32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    memop32 legacy = (memop32)gvs_driver_sym("cuStreamWriteValue32");
    CUresult r = legacy(s, f.d32(4), 12, 0);
    printf("legacy write: %s\n", name(r));
    CHECK(cudaStreamSynchronize(s));
    unsigned v = 0;
    CHECK(cudaMemcpy(&v, f.f32 + 4, sizeof(v), cudaMemcpyDeviceToHost));
    printf("legacy wrote: %u\n", r == CUDA_SUCCESS ? v : 12);
}

int main()
{
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    if (driver_use_primary(0))
        return 1;
    flags f;
    unsigned *out;
    unsigned long long *out64;
    CHECK(cudaMalloc(&f.f32, 4096));
    CHECK(cudaMemset(f.f32, 0, 4096));
    f.f64 = (unsigned long long *)(f.f32 + 256);
    CHECK(cudaMalloc(&out, 64));
    CHECK(cudaMalloc(&out64, 64));
    cudaStream_t waiter, writer;
    CHECK(cudaStreamCreateWithFlags(&waiter, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&writer, cudaStreamNonBlocking));
    // Loaded before any stream waits: CUDA loads a kernel at its first
    // launch (lazy loading), which would wait for the blocked stream.
    read32<<<1, 4, 0, writer>>>(f.f32, out);
    read64<<<1, 2, 0, writer>>>(f.f64, out64);
    CHECK(cudaStreamSynchronize(writer));
    gate(f, waiter, writer, out);
    wide(f, waiter, writer, out64);
    batch(f, waiter, out);
    graph(f, waiter);
    refusals(f, waiter);
    CHECK(cudaStreamDestroy(waiter));
    CHECK(cudaStreamDestroy(writer));
    CHECK(cudaFree(f.f32));
    CHECK(cudaFree(out));
    CHECK(cudaFree(out64));
    printf("done\n");
    return 0;
}
