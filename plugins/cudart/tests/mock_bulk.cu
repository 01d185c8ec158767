// cudart.mock_bulk: bulk copies through the frontend, gvsd and the
// backend's pinned staging, on the host-memory mock of the runtime.
// Sizes around the chunk boundaries, pageable and page-locked host
// memory, synchronous and stream-ordered copies, unaligned host
// addresses; every byte is checked, and so are the bytes around the
// destination.  Then a copy whose middle chunk fails, and more threads
// copying at once than the backend gives staging to.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_check.h"

static const size_t CHUNK = (size_t)8 << 20;
// Bytes checked on each side of a destination.
static const size_t GUARD = 64;
static const unsigned char POISON = 0xee;
// More than the backend's BE_STAGED_LANES_MAX.
static const int THREADS = 10;

static unsigned char pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131) ^ (i >> 13) ^ (seed * 29 + 7));
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(i, seed);
}

// The n bytes at p hold the pattern from byte `from` on; 0 if not.
static int holds(const unsigned char *p, size_t n, unsigned seed,
                 size_t from = 0)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(from + i, seed))
            return 0;
    return 1;
}

static int poisoned(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != POISON)
            return 0;
    return 1;
}

enum host_kind { PAGEABLE, PINNED };

// Host memory of n bytes with GUARD bytes on each side, at an address
// `skew` bytes past an aligned one.
struct host_buf {
    unsigned char *base, *p;
    enum host_kind kind;
};

static host_buf host_alloc(size_t n, enum host_kind kind, size_t skew)
{
    host_buf b;
    size_t total = n + 2 * GUARD + skew;
    b.kind = kind;
    if (kind == PINNED)
        OK(cudaMallocHost((void **)&b.base, total));
    else
        b.base = (unsigned char *)malloc(total);
    CHECK(b.base != NULL);
    memset(b.base, POISON, total);
    b.p = b.base + GUARD + skew;
    return b;
}

static void host_free(host_buf b)
{
    if (b.kind == PINNED)
        OK(cudaFreeHost(b.base));
    else
        free(b.base);
}

static void copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind,
                 cudaStream_t s)
{
    if (s == NULL) {
        OK(cudaMemcpy(dst, src, n, kind));
    } else {
        OK(cudaMemcpyAsync(dst, src, n, kind, s));
        OK(cudaStreamSynchronize(s));
    }
}

// Up and back down again, every byte and the guards checked.
static void round_trip(size_t n, enum host_kind kind, cudaStream_t s,
                       unsigned seed)
{
    size_t skew = seed % 7;
    host_buf up = host_alloc(n, kind, skew), down = host_alloc(n, kind, 0);
    unsigned char *d;
    OK(cudaMalloc((void **)&d, n ? n : 1));
    fill(up.p, n, seed);
    copy(d, up.p, n, cudaMemcpyHostToDevice, s);
    copy(down.p, d, n, cudaMemcpyDeviceToHost, s);
    CHECK(holds(down.p, n, seed));
    CHECK(poisoned(down.p - GUARD, GUARD) && poisoned(down.p + n, GUARD));
    // The upload left its source alone.
    CHECK(holds(up.p, n, seed));
    OK(cudaFree(d));
    host_free(up);
    host_free(down);
}

// The mock's device memory ends where the allocation does: in a copy of
// 3 chunks + 5 bytes to or from an allocation of 1 chunk + 5, the first
// chunk is copied and the second is the first to fail.
static void middle_chunk_fails()
{
    const size_t n = 3 * CHUNK + 5, have = CHUNK + 5;
    host_buf h = host_alloc(n, PAGEABLE, 3), back = host_alloc(n, PAGEABLE, 0);
    unsigned char *d;
    OK(cudaMalloc((void **)&d, have));
    fill(h.p, n, 41);
    CHECK(cudaMemcpy(d, h.p, n, cudaMemcpyHostToDevice) ==
          cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    // What the first chunk carried has landed.
    OK(cudaMemcpy(back.p, d, CHUNK, cudaMemcpyDeviceToHost));
    CHECK(holds(back.p, CHUNK, 41));

    fill(h.p, have, 42);
    OK(cudaMemcpy(d, h.p, have, cudaMemcpyHostToDevice));
    memset(back.p, POISON, n);
    CHECK(cudaMemcpy(back.p, d, n, cudaMemcpyDeviceToHost) ==
          cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(holds(back.p, CHUNK, 42));
    CHECK(poisoned(back.p + CHUNK, n - CHUNK + GUARD));
    CHECK(poisoned(back.p - GUARD, GUARD));

    // Every reply was collected: the next copies are in step.
    round_trip(CHUNK + 1, PAGEABLE, NULL, 43);
    round_trip(3 * CHUNK + 5, PAGEABLE, NULL, 44);
    OK(cudaFree(d));
    host_free(h);
    host_free(back);
}

struct worker {
    int index;
    size_t size;
};

static void *copy_thread(void *arg)
{
    struct worker *w = (struct worker *)arg;
    for (int i = 0; i < 3; i++)
        round_trip(w->size, i % 2 ? PINNED : PAGEABLE, NULL,
                   (unsigned)(100 + w->index * 3 + i));
    return NULL;
}

static void threads()
{
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].index = i;
        w[i].size = i % 2 ? 2 * CHUNK + 3 : CHUNK - 1;
        CHECK(pthread_create(&th[i], NULL, copy_thread, &w[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
}

int main()
{
    const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5};
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    unsigned seed = 1;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int kind = PAGEABLE; kind <= PINNED; kind++) {
            round_trip(sizes[i], (enum host_kind)kind, NULL, seed++);
            round_trip(sizes[i], (enum host_kind)kind, s, seed++);
        }
    OK(cudaStreamDestroy(s));
    middle_chunk_fails();
    threads();
    printf("ok\n");
    return 0;
}
