/*
 * cuda.mock_batch: a driver API program (linked with -lcuda) through gvsd
 * and the mock driver: batches of copies on a stream of the program's,
 * each copy through its single copy's path; the batch's refusals and the
 * failing copy's index (the CUDA 12.8 exports, found by name); 3D
 * batches between pointers; batched prefetches and discards of managed
 * memory (mock_batch.c).  Prints "ok".
 */
#include <string.h>

#include "driver_check.h"

#define N 4096

typedef CUresult (*batch_v1)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
                             CUmemcpyAttributes *, size_t *, size_t,
                             size_t *, CUstream);
typedef CUresult (*batch3d_v1)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *,
                               unsigned long long, CUstream);

static int src[N], back[N];
static CUdeviceptr d1, d2, d3;
static CUstream s;

static void copies(void)
{
    CUdeviceptr dsts[2] = {d1, d1 + sizeof(src) / 2};
    CUdeviceptr srcs[2] = {(CUdeviceptr)(uintptr_t)src,
                           (CUdeviceptr)(uintptr_t)(src + N / 2)};
    size_t sizes[2] = {sizeof(src) / 2, sizeof(src) / 2};
    CUmemcpyAttributes at;
    memset(&at, 0, sizeof(at));
    at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    size_t idx = 0;
    CHECK(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &idx, 1, s));
    CUdeviceptr dsts2[2] = {d2, d3};
    CUdeviceptr srcs2[2] = {d1, d1};
    size_t sizes2[2] = {sizeof(src), 64};
    CHECK(cuMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, &at, &idx, 1, s));
    CHECK(cuMemcpyDtoHAsync(back, d2, sizeof(back), s));
    CHECK(cuStreamSynchronize(s));
    EXPECT(memcmp(back, src, sizeof(src)) == 0);

    /* No legacy stream; the per-thread one is no legacy one. */
    EXPECT(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &idx, 1, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &idx, 1,
                              CU_STREAM_LEGACY) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &idx, 1,
                             CU_STREAM_PER_THREAD));
    /* Attributes that start past the first copy, or name no order. */
    size_t one = 1;
    EXPECT(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &one, 1, s) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyBatchAsync(dsts, srcs, sizes, 0, &at, &idx, 1, s) ==
           CUDA_ERROR_INVALID_VALUE);

    batch_v1 v1;
    *(void **)&v1 = dlsym(RTLD_DEFAULT, "cuMemcpyBatchAsync");
    EXPECT(v1 != NULL);
    size_t fail = 0;
    /* The second copy runs past its allocation: its index. */
    CUdeviceptr bad_dsts[2] = {d2, d3 + sizeof(src) - 16};
    CUdeviceptr bad_srcs[2] = {d1, d1};
    size_t bad_sizes[2] = {64, 64};
    EXPECT(v1(bad_dsts, bad_srcs, bad_sizes, 2, &at, &idx, 1, &fail, s) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(fail == 1);
    CUmemcpyAttributes none;
    memset(&none, 0, sizeof(none));
    EXPECT(v1(dsts, srcs, sizes, 2, &none, &idx, 1, &fail, s) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(fail == SIZE_MAX);
    CHECK(v1(dsts, srcs, sizes, 2, &at, &idx, 1, &fail, s));
    CHECK(cuStreamSynchronize(s));
}

static void copies3d(void)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof(op));
    op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = d1;
    op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.dst.op.ptr.ptr = d3;
    op.extent.width = 256 * sizeof(int);
    op.extent.height = 16;
    op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    CHECK(cuMemsetD8Async(d3, 0, sizeof(src), s));
    CHECK(cuMemcpy3DBatchAsync(1, &op, 0, s));
    memset(back, 0, sizeof(back));
    CHECK(cuMemcpyDtoHAsync(back, d3, sizeof(back), s));
    CHECK(cuStreamSynchronize(s));
    EXPECT(memcmp(back, src, sizeof(src)) == 0);
    EXPECT(cuMemcpy3DBatchAsync(1, &op, 1, s) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpy3DBatchAsync(1, &op, 0, NULL) == CUDA_ERROR_INVALID_VALUE);

    /* Rows of a host buffer 2 ints apart into packed device rows. */
    static int wide[32];
    for (int i = 0; i < 32; i++)
        wide[i] = i;
    CUDA_MEMCPY3D_BATCH_OP ops[2];
    ops[0] = op;
    ops[0].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)wide;
    ops[0].src.op.ptr.rowLength = 2 * sizeof(int);
    ops[0].extent.width = sizeof(int);
    ops[0].extent.height = 16;
    ops[1] = op;
    ops[1].extent.width = 0;
    batch3d_v1 v1;
    *(void **)&v1 = dlsym(RTLD_DEFAULT, "cuMemcpy3DBatchAsync");
    EXPECT(v1 != NULL);
    size_t fail = 0;
    EXPECT(v1(2, ops, &fail, 0, s) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(fail == 1);
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemcpyDtoH(back, d3, 16 * sizeof(int)));
    for (int i = 0; i < 16; i++)
        EXPECT(back[i] == 2 * i);
    ops[1].extent.width = 4;
    ops[1].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    EXPECT(v1(2, ops, &fail, 0, s) == CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(fail == 1);
    CHECK(cuStreamSynchronize(s));
}

static void managed(void)
{
    CUdeviceptr m;
    CHECK(cuMemAllocManaged(&m, sizeof(src), CU_MEM_ATTACH_GLOBAL));
    CUdeviceptr ptrs[2] = {m, m + 64};
    size_t lens[2] = {64, 128};
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    size_t first = 0;
    CHECK(cuMemPrefetchBatchAsync(ptrs, lens, 2, &loc, &first, 1, 0, s));
    CHECK(cuMemDiscardBatchAsync(ptrs, lens, 2, 0, s));
    CHECK(cuMemDiscardAndPrefetchBatchAsync(ptrs, lens, 2, &loc, &first, 1,
                                            0, s));
    /* The per-thread stream is a stream to a batch too (its session was
     * once ended as malformed). */
    CHECK(cuMemPrefetchBatchAsync(ptrs, lens, 2, &loc, &first, 1, 0,
                                  CU_STREAM_PER_THREAD));
    CHECK(cuMemDiscardBatchAsync(ptrs, lens, 2, 0, CU_STREAM_PER_THREAD));
    CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    /* The driver's refusals come back; a range that is no device
     * memory is the backend's. */
    EXPECT(cuMemDiscardBatchAsync(ptrs, lens, 2, 1, s) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemPrefetchBatchAsync(ptrs, lens, 2, &loc, &first, 1, 0, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
    size_t late = 1;
    EXPECT(cuMemPrefetchBatchAsync(ptrs, lens, 2, &loc, &late, 1, 0, s) ==
           CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr host[1] = {(CUdeviceptr)(uintptr_t)src};
    EXPECT(cuMemDiscardBatchAsync(host, lens, 1, 0, s) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemDiscardBatchAsync(NULL, lens, 1, 0, s) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemFree(m));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    stats_init();
    for (int i = 0; i < N; i++)
        src[i] = i * 7 + 1;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuMemAlloc(&d1, sizeof(src)));
    CHECK(cuMemAlloc(&d2, sizeof(src)));
    CHECK(cuMemAlloc(&d3, sizeof(src)));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    copies();
    copies3d();
    managed();
    CHECK(cuStreamDestroy(s));
    CHECK(cuMemFree(d1));
    CHECK(cuMemFree(d2));
    CHECK(cuMemFree(d3));
    CHECK(cuCtxDestroy(ctx));
    printf("ok\n");
    return 0;
}
