// The stream-ordered allocator and memory pools: cudaMallocAsync and
// cudaFreeAsync across two streams ordered by events, the default and
// current pools, a created pool with attributes, access and trimming,
// cudaMallocFromPoolAsync, and cudaMemcpyDefault on pool memory.
#include "check.h"
#include <cstdint>
#include <vector>

__global__ void iota(int *p, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = base + i;
}

__global__ void add(int *dst, const int *a, const int *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = a[i] + b[i];
}

int main()
{
    const int n = 1 << 20;
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t ready;
    CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));

    // Allocated on one stream, used and freed on another after an event.
    long long total = 0;
    for (int round = 0; round < 5; round++) {
        int *a, *b, *c;
        CHECK(cudaMallocAsync((void **)&a, n * sizeof(int), s1));
        CHECK(cudaMallocAsync((void **)&b, n * sizeof(int), s1));
        iota<<<(n + 255) / 256, 256, 0, s1>>>(a, n, round);
        iota<<<(n + 255) / 256, 256, 0, s1>>>(b, n, 1000 * round);
        CHECK(cudaEventRecord(ready, s1));
        CHECK(cudaStreamWaitEvent(s2, ready, 0));
        CHECK(cudaMallocAsync((void **)&c, n * sizeof(int), s2));
        add<<<(n + 255) / 256, 256, 0, s2>>>(c, a, b, n);
        CHECK(cudaFreeAsync(a, s2));
        CHECK(cudaFreeAsync(b, s2));
        std::vector<int> h(n);
        // Pool memory is device memory to cudaMemcpyDefault.
        CHECK(cudaMemcpyAsync(h.data(), c, n * sizeof(int), cudaMemcpyDefault,
                              s2));
        CHECK(cudaFreeAsync(c, s2));
        CHECK(cudaStreamSynchronize(s2));
        for (int i = 0; i < n; i++)
            EXPECT(h[i] == 2 * i + 1001 * round);
        total += h[n - 1];
    }
    printf("stream-ordered rounds ok, last sum %lld\n", total);

    cudaMemPool_t def, def2, cur;
    CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
    CHECK(cudaDeviceGetDefaultMemPool(&def2, 0));
    CHECK(cudaDeviceGetMemPool(&cur, 0));
    printf("default pool stable: %s, current is default: %s\n",
           def == def2 ? "yes" : "no", cur == def ? "yes" : "no");
    uint64_t threshold = UINT64_MAX, got = 0;
    CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold,
                                  &threshold));
    CHECK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &got));
    printf("release threshold kept: %s\n", got == threshold ? "yes" : "no");

    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    CHECK(cudaMemPoolCreate(&pool, &props));
    int reuse = 0, r = -1;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic,
                                  &reuse));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &r));
    printf("opportunistic reuse: %d\n", r);
    int *p;
    CHECK(cudaMallocFromPoolAsync((void **)&p, n * sizeof(int), pool, s1));
    iota<<<(n + 255) / 256, 256, 0, s1>>>(p, n, 5);
    CHECK(cudaStreamSynchronize(s1));
    uint64_t used = 0, high = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
    printf("used >= 4 MiB: %s, high >= used: %s\n",
           used >= (4u << 20) ? "yes" : "no", high >= used ? "yes" : "no");
    int last;
    CHECK(cudaMemcpy(&last, p + n - 1, sizeof(int), cudaMemcpyDefault));
    printf("pool allocation holds %d\n", last);
    CHECK(cudaFreeAsync(p, s1));
    CHECK(cudaStreamSynchronize(s1));
    CHECK(cudaMemPoolTrimTo(pool, 0));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent,
                                  &used));
    printf("reserved after trim: %llu\n", (unsigned long long)used);

    cudaMemLocation loc = {cudaMemLocationTypeDevice, 0};
    cudaMemAccessFlags flags;
    CHECK(cudaMemPoolGetAccess(&flags, pool, &loc));
    printf("own device access: %d\n", (int)flags);

    // The pool as the device's current one serves cudaMallocAsync.
    CHECK(cudaDeviceSetMemPool(0, pool));
    CHECK(cudaDeviceGetMemPool(&cur, 0));
    CHECK(cudaMallocAsync((void **)&p, 4096, s1));
    CHECK(cudaFreeAsync(p, s1));
    CHECK(cudaStreamSynchronize(s1));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
    printf("current pool set: %s, served: %s\n", cur == pool ? "yes" : "no",
           high >= 4096 ? "yes" : "no");
    CHECK(cudaDeviceSetMemPool(0, def));
    CHECK(cudaMemPoolDestroy(pool));

    cudaError_t e = cudaMemPoolDestroy(def);
    printf("destroying the default pool: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    CHECK(cudaEventDestroy(ready));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    printf("done\n");
    return 0;
}
