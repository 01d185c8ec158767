// gpu.security.quota (quota.py): one session of a gvsd started with
// --memory-quota 256M.  The device shows the quota as its memory; 200 MiB
// fit, 100 MiB more do not (cudaErrorMemoryAllocation, a null pointer,
// not sticky); frees give the room back; other kinds of allocation
// count against the same quota.
#include <cstdint>
#include <cstdio>

#include "../check.h"

static const size_t MiB = (size_t)1 << 20;
static const size_t QUOTA = 256 * MiB;

// allocation must be refused by the quota, leaving p null.
#define REFUSED(allocation, p)                                               \
    do {                                                                     \
        *(void **)&(p) = (void *)0x1234;                                     \
        cudaError_t e_ = (allocation);                                       \
        if (e_ != cudaErrorMemoryAllocation) {                               \
            printf("FAIL %s: %s, expected cudaErrorMemoryAllocation\n",      \
                   #allocation, cudaGetErrorName(e_));                       \
            exit(1);                                                         \
        }                                                                    \
        EXPECT((p) == NULL);                                                 \
        EXPECT(cudaGetLastError() == cudaErrorMemoryAllocation);             \
    } while (0)

static size_t left()
{
    size_t f = 0, t = 0;
    CHECK(cudaMemGetInfo(&f, &t));
    EXPECT(t == QUOTA);
    EXPECT(f <= QUOTA);
    return f;
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    EXPECT(prop.totalGlobalMem == QUOTA);
    size_t before = left();
    printf("total %zu MiB, free %zu MiB\n", QUOTA / MiB, before / MiB);

    void *a, *b, *c;
    CHECK(cudaMalloc(&a, 200 * MiB));
    CHECK(cudaMemset(a, 1, 200 * MiB));
    EXPECT(left() <= QUOTA - 200 * MiB);
    REFUSED(cudaMalloc(&b, 100 * MiB), b);
    // Not sticky: the session goes on.
    CHECK(cudaMalloc(&c, 32 * MiB));
    CHECK(cudaMemset(c, 2, 32 * MiB));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    REFUSED(cudaMallocAsync(&b, 100 * MiB, s), b);
    REFUSED(cudaMallocManaged(&b, 100 * MiB), b);
    size_t pitch;
    REFUSED(cudaMallocPitch(&b, &pitch, 10 * MiB, 10), b);
    CHECK(cudaFree(a));
    CHECK(cudaMalloc(&b, 100 * MiB));
    CHECK(cudaMemset(b, 3, 100 * MiB));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaMallocAsync(&b, 200 * MiB, s));
    CHECK(cudaFreeAsync(b, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));
    EXPECT(left() == before);
    printf("ok\n");
    return 0;
}
