// Batched copies, prefetches and discards (CUDA Runtime API, "Memory
// Management": cudaMemcpyBatchAsync, cudaMemcpy3DBatchAsync,
// cudaMemPrefetchBatchAsync, cudaMemDiscardBatchAsync) on a stream of
// the program's own.
#include "check.h"

#include <cstring>

int main()
{
    const int N = 4096;
    static int src[N], back[N];
    for (int i = 0; i < N; i++)
        src[i] = i * 7 + 1;
    int *d1, *d2, *d3;
    CHECK(cudaMalloc(&d1, sizeof(src)));
    CHECK(cudaMalloc(&d2, sizeof(src)));
    CHECK(cudaMalloc(&d3, sizeof(src)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // Host to device, then device to device, in two batches.
    void *dsts[2] = {d1, d1 + N / 2};
    const void *srcs[2] = {src, src + N / 2};
    size_t sizes[2] = {sizeof(src) / 2, sizeof(src) / 2};
    cudaMemcpyAttributes at = {};
    at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx = 0;
    CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &idx, 1, s));
    void *dsts2[2] = {d2, d3};
    const void *srcs2[2] = {d1, d1};
    size_t sizes2[2] = {sizeof(src), 64};
    CHECK(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, &at, &idx, 1, s));
    CHECK(cudaMemcpyAsync(back, d2, sizeof(back), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("memcpy batch: %d\n", memcmp(back, src, sizeof(src)) == 0);
    printf("legacy stream: %s\n",
           cudaGetErrorName(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &at,
                                                 &idx, 1, 0)));
    (void)cudaGetLastError();

    // A 3D batch of one pointer-to-pointer copy of 16 rows.
    cudaMemcpy3DBatchOp op = {};
    op.src.type = cudaMemcpyOperandTypePointer;
    op.src.op.ptr.ptr = d1;
    op.dst.type = cudaMemcpyOperandTypePointer;
    op.dst.op.ptr.ptr = d3;
    op.extent = make_cudaExtent(256 * sizeof(int), 16, 1);
    op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    CHECK(cudaMemcpy3DBatchAsync(1, &op, 0, s));
    memset(back, 0, sizeof(back));
    CHECK(cudaMemcpyAsync(back, d3, sizeof(back), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("3D batch: %d\n", memcmp(back, src, sizeof(src)) == 0);

    int *m;
    CHECK(cudaMallocManaged(&m, sizeof(src)));
    memcpy(m, src, sizeof(src));
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    void *ptrs[1] = {m};
    size_t lens[1] = {sizeof(src)};
    cudaMemLocation loc = {cudaMemLocationTypeDevice, dev};
    size_t li = 0;
    printf("prefetch batch: %s\n",
           cudaGetErrorName(
               cudaMemPrefetchBatchAsync(ptrs, lens, 1, &loc, &li, 1, 0, s)));
    (void)cudaGetLastError();
    CHECK(cudaStreamSynchronize(s));
    printf("managed intact: %d\n", memcmp(m, src, sizeof(src)) == 0);
    printf("discard batch: %s\n",
           cudaGetErrorName(cudaMemDiscardBatchAsync(ptrs, lens, 1, 0, s)));
    (void)cudaGetLastError();
    CHECK(cudaStreamSynchronize(s));

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(m));
    CHECK(cudaFree(d1));
    CHECK(cudaFree(d2));
    CHECK(cudaFree(d3));
    printf("done\n");
    return 0;
}
