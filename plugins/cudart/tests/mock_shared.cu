// cudart.mock_shared.{tcp,unix,shm}: page-locked and pageable copies
// through the mock backend.  Over shm and unix (argument "shared")
// cudaMallocHost memory is shared with the backend and pageable copies go
// through the staging region, so the bytes never cross the connection;
// over tcp ("plain") they do, and the device cannot map host memory.  Content, results and traffic are checked either way.
#include <pthread.h>
#include <atomic>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mock_check.h"

static int shared;

static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131 + seed);
}

// Bytes that crossed the connection for a copy of n: a few hundred when
// shared, at least n otherwise.
static void check_traffic(uint64_t moved, size_t n)
{
    if (shared)
        CHECK(moved < 4096);
    else
        CHECK(moved >= n);
}

// Whether p is shared with the backend: over ivshmem only what fits the
// connection's data area is.
static int is_shared(void *p)
{
    void *dp = NULL;
    int yes = shared && cudaHostGetDevicePointer(&dp, p, 0) == cudaSuccess;
    cudaGetLastError();
    return yes;
}

// Whether a copy may poll a word (GVS_SPIN_US not 0).
static int polls()
{
    const char *spin = getenv("GVS_SPIN_US");
    return spin == NULL || strcmp(spin, "0") != 0;
}

static void pinned(size_t size)
{
    unsigned char *h, *back;
    void *d;
    OK(cudaMallocHost((void **)&h, size));
    OK(cudaHostAlloc((void **)&back, size, cudaHostAllocDefault));
    OK(cudaMalloc(&d, size));
    pattern(h, size, 7);
    struct stats s0 = now();
    OK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
    struct stats s1 = now();
    // Up to 256 bytes the bytes travel, shared or not: sooner there than
    // a DMA from page-locked memory completes (GVS_REMOTE_H2D_INLINE_MAX).
    if (size > 256)
        check_traffic(s1.bytes_sent - s0.bytes_sent, size);
    else
        CHECK(s1.bytes_sent - s0.bytes_sent >= size);
    memset(back, 0, size);
    OK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
    struct stats s2 = now();
    check_traffic(s2.bytes_received - s1.bytes_received, size);
    CHECK(memcmp(h, back, size) == 0);

    // Stream-ordered, and from the middle of a region: shared, each copy
    // is posted (no round trip), the synchronization's the one.
    cudaStream_t st;
    OK(cudaStreamCreate(&st));
    pattern(h, size, 9);
    memset(back, 0, size);
    struct stats s3 = now();
    OK(cudaMemcpyAsync(d, h + 3, size - 3, cudaMemcpyHostToDevice, st));
    OK(cudaMemcpyAsync(back + 1, d, size - 3, cudaMemcpyDeviceToHost, st));
    OK(cudaStreamSynchronize(st));
    struct stats s4 = now();
    CHECK(memcmp(h + 3, back + 1, size - 3) == 0);
    if (is_shared(h) && is_shared(back)) {
        CHECK_EQ(s4.round_trips - s3.round_trips, 1);
        CHECK_EQ(s4.posts - s3.posts, 2);
    }
    // A range the tables cannot prove is not posted, and fails at once.
    s3 = now();
    CHECK_EQ(cudaMemcpyAsync((char *)d + 1, h, size, cudaMemcpyHostToDevice,
                             st),
             cudaErrorInvalidValue);
    CHECK_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    if (is_shared(h))
        CHECK_EQ(now().posts - s3.posts, 0);
    OK(cudaStreamSynchronize(st));
    OK(cudaStreamDestroy(st));

    // The GPU reaches shared memory; otherwise it cannot.
    void *dp = NULL;
    cudaError_t e = cudaHostGetDevicePointer(&dp, h + 5, 0);
    if (shared)
        CHECK(e == cudaSuccess && dp != NULL);
    else
        CHECK(e == cudaErrorNotSupported);
    cudaGetLastError();

    // A device address that is none fails as natively, and the region
    // stays usable.
    CHECK(cudaMemcpy((void *)0x1000, h, 16, cudaMemcpyHostToDevice) ==
          cudaErrorInvalidValue);
    cudaGetLastError();
    OK(cudaMemcpy(back, d, 16, cudaMemcpyDeviceToHost));
    OK(cudaFree(d));
    OK(cudaFreeHost(h));
    OK(cudaFreeHost(back));
}

static void pageable(size_t size, int alone)
{
    unsigned char *h = (unsigned char *)malloc(size + 1);
    unsigned char *back = (unsigned char *)malloc(size + 1);
    void *d;
    CHECK(h != NULL && back != NULL);
    OK(cudaMalloc(&d, size + 1));
    pattern(h, size, (unsigned)size);
    memset(back, 0xee, size + 1);
    struct stats s0 = now();
    OK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
    struct stats s1 = now();
    OK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
    struct stats s2 = now();
    CHECK(memcmp(h, back, size) == 0);
    CHECK(back[size] == 0xee);
    // Staging pays from 64 KiB on to the device and from 4 KiB on from
    // it, for one thread at a time.
    if (alone && size >= ((size_t)64 << 10))
        check_traffic(s1.bytes_sent - s0.bytes_sent, size);
    if (alone && size >= ((size_t)4 << 10))
        check_traffic(s2.bytes_received - s1.bytes_received, size);
    cudaStream_t st;
    OK(cudaStreamCreate(&st));
    pattern(h, size, 3);
    OK(cudaMemcpyAsync(d, h, size, cudaMemcpyHostToDevice, st));
    memset(h, 0, size);
    OK(cudaMemcpyAsync(back, d, size, cudaMemcpyDeviceToHost, st));
    pattern(h, size, 3);
    CHECK(memcmp(h, back, size) == 0);
    OK(cudaStreamDestroy(st));
    CHECK(cudaMemcpy((void *)0x1000, h, size, cudaMemcpyHostToDevice) ==
          cudaErrorInvalidValue);
    cudaGetLastError();
    OK(cudaFree(d));
    free(h);
    free(back);
}

// Stream-ordered copies of pageable memory that the tables prove valid
// return once their bytes are staged, as CUDA's do: through the staging
// region each is posted, the words that free its slots waited for by
// the copies after it (more copies than slots here), and the program may
// overwrite its buffer at once.  A synchronous copy after them, through
// the same slots, finds every byte where it belongs.
static void staged_posted()
{
    const size_t n = ((size_t)1 << 20) + 4096;
    const int copies = 9;
    unsigned char *h = (unsigned char *)malloc(n);
    unsigned char *back = (unsigned char *)malloc(n);
    char *d;
    CHECK(h != NULL && back != NULL);
    OK(cudaMalloc((void **)&d, n * copies));
    cudaStream_t st;
    OK(cudaStreamCreate(&st));
    struct stats s0 = now();
    for (int i = 0; i < copies; i++) {
        pattern(h, n, (unsigned)i);
        OK(cudaMemcpyAsync(d + i * n, h, n, cudaMemcpyHostToDevice, st));
    }
    struct stats s1 = now();
    if (shared) {
        CHECK_EQ(s1.round_trips - s0.round_trips, 0);
        CHECK_EQ(s1.posts - s0.posts, copies);
        CHECK(s1.bytes_sent - s0.bytes_sent < 4096 * copies);
    }
    memset(h, 0, n);
    OK(cudaStreamSynchronize(st));
    for (int i = 0; i < copies; i++) {
        OK(cudaMemcpy(back, d + i * n, n, cudaMemcpyDeviceToHost));
        pattern(h, n, (unsigned)i);
        CHECK(memcmp(h, back, n) == 0);
    }
    OK(cudaStreamDestroy(st));
    OK(cudaFree(d));
    free(h);
    free(back);
}

static std::atomic<int> gate_open;

static void CUDART_CB gate(void *arg)
{
    (void)arg;
    while (!gate_open)
        usleep(1000);
}

struct overlap {
    cudaStream_t st;
    char *d;
    unsigned char *h;
    size_t n;
    std::atomic<int> returned;
};

static void *overlap_copies(void *arg)
{
    struct overlap *o = (struct overlap *)arg;
    for (int i = 0; i < 5; i++) {
        pattern(o->h, o->n, 40u + (unsigned)i);
        OK(cudaMemcpyAsync(o->d + i * o->n, o->h, o->n,
                           cudaMemcpyHostToDevice, o->st));
        o->returned = i + 1;
    }
    return NULL;
}

// Copies of one chunk each, too big to share a slot (staged_packed), take
// the staging slots in turn: while the
// stream is held up (a host function waits for the gate), as many such
// copies as there are slots (4) return, none waiting for the one before
// it.  Were every copy to take the first slot, the second would wait
// until the stream moved on.  The fifth needs the first one's slot,
// whose word the held stream does not write: it waits, past its polling,
// for the worker to wait for the stream, and returns once the gate opens.
static void staged_overlap()
{
    const size_t n = (size_t)1 << 20;
    struct overlap o = {NULL, NULL, (unsigned char *)malloc(n), n, {0}};
    unsigned char *back = (unsigned char *)malloc(n);
    CHECK(o.h != NULL && back != NULL);
    OK(cudaMalloc((void **)&o.d, 5 * n));
    OK(cudaStreamCreate(&o.st));
    gate_open = 0;
    OK(cudaLaunchHostFunc(o.st, gate, NULL));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, overlap_copies, &o) == 0);
    for (int i = 0; i < 500 && o.returned < 4; i++)
        usleep(10000);
    int returned = o.returned.load();
    usleep(100000);
    int held = o.returned.load();
    gate_open = 1;
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_EQ(returned, 4);
    CHECK_EQ(held, 4);
    CHECK_EQ(o.returned.load(), 5);
    OK(cudaStreamSynchronize(o.st));
    for (int i = 0; i < 5; i++) {
        OK(cudaMemcpy(back, o.d + i * n, n, cudaMemcpyDeviceToHost));
        pattern(o.h, n, 40u + (unsigned)i);
        CHECK(memcmp(o.h, back, n) == 0);
    }
    OK(cudaStreamDestroy(o.st));
    OK(cudaFree(o.d));
    free(o.h);
    free(back);
}

struct packed {
    cudaStream_t st;
    char *d;
    int copies;
    std::atomic<int> returned;
};

// Copy i's size and where it goes: 1-31 KiB, not a multiple of 256;
// from 4 KiB packed, below the bytes sent in the request.
static size_t packed_len(int i)
{
    return (size_t)1024 * (size_t)(1 + i % 31) + (size_t)(i % 5) * 3;
}

static size_t packed_sent(int copies)
{
    size_t n = 0;
    for (int i = 0; i < copies; i++)
        n += packed_len(i) < (4 << 10) ? packed_len(i) : 0;
    return n;
}

static size_t packed_at(int i)
{
    return (size_t)i * (32 << 10);
}

static void *packed_copies(void *arg)
{
    struct packed *o = (struct packed *)arg;
    unsigned char *h = (unsigned char *)malloc(32 << 10);
    CHECK(h != NULL);
    for (int i = 0; i < o->copies; i++) {
        pattern(h, packed_len(i), 60u + (unsigned)i);
        OK(cudaMemcpyAsync(o->d + packed_at(i), h, packed_len(i),
                           cudaMemcpyHostToDevice, o->st));
        o->returned = i + 1;
    }
    free(h);
    return NULL;
}

static void check_packed(const char *d, int from, int to, unsigned seed)
{
    unsigned char *want = (unsigned char *)malloc(32 << 10);
    unsigned char *back = (unsigned char *)malloc(32 << 10);
    CHECK(want != NULL && back != NULL);
    for (int i = from; i < to; i++) {
        OK(cudaMemcpy(back, d + packed_at(i), packed_len(i),
                      cudaMemcpyDeviceToHost));
        pattern(want, packed_len(i), seed + (unsigned)i);
        CHECK(memcmp(want, back, packed_len(i)) == 0);
    }
    free(want);
    free(back);
}

// Small stream-ordered copies of one thread and stream share a staging
// slot, each after the one before (frontend/staging.c): while the stream
// is held up, far more of them return than there are slots (4), each
// posted, no round trip.  Then copies that alternate between two
// streams, and a thread's copies beside another's, each land where they
// belong.
static void staged_packed()
{
    const int copies = 200;
    struct packed o = {NULL, NULL, copies, {0}};
    OK(cudaMalloc((void **)&o.d, packed_at(copies)));
    OK(cudaStreamCreate(&o.st));
    gate_open = 0;
    OK(cudaLaunchHostFunc(o.st, gate, NULL));
    struct stats s0 = now();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, packed_copies, &o) == 0);
    for (int i = 0; i < 500 && o.returned < copies; i++)
        usleep(10000);
    int returned = o.returned.load();
    // Counted before the gate opens: the host function's end is sent
    // then, by the thread that ran it, at a time of its own.
    struct stats s1 = now();
    gate_open = 1;
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_EQ(returned, copies);
    CHECK_EQ(s1.round_trips - s0.round_trips, 0);
    CHECK_EQ(s1.posts - s0.posts, copies);
    CHECK(s1.bytes_sent - s0.bytes_sent < packed_sent(copies) + 256 * copies);
    OK(cudaStreamSynchronize(o.st));
    check_packed(o.d, 0, copies, 60u);

    cudaStream_t other;
    char *d2;
    OK(cudaStreamCreate(&other));
    OK(cudaMalloc((void **)&d2, packed_at(copies)));
    OK(cudaMemset(o.d, 0, packed_at(copies)));
    struct packed beside = {other, o.d, copies, {0}};
    CHECK(pthread_create(&t, NULL, packed_copies, &beside) == 0);
    unsigned char *h = (unsigned char *)malloc(32 << 10);
    CHECK(h != NULL);
    for (int i = 0; i < copies; i++) {
        pattern(h, packed_len(i), 90u + (unsigned)i);
        OK(cudaMemcpyAsync(d2 + packed_at(i), h, packed_len(i),
                           cudaMemcpyHostToDevice, i % 3 ? o.st : other));
    }
    CHECK(pthread_join(t, NULL) == 0);
    OK(cudaDeviceSynchronize());
    check_packed(o.d, 0, copies, 60u);
    check_packed(d2, 0, copies, 90u);
    free(h);
    OK(cudaFree(d2));
    OK(cudaStreamDestroy(other));
    OK(cudaStreamDestroy(o.st));
    OK(cudaFree(o.d));
}

// One of the mock backend's kernels (mock_kernels.c).
__global__ void say(int) {}

// Runs f with stdout going to a file: whether what it printed holds s.
static int prints(void (*f)(void *), void *arg, const char *s)
{
    fflush(stdout);
    int saved = dup(1);
    FILE *tmp = tmpfile();
    CHECK(saved >= 0 && tmp != NULL && dup2(fileno(tmp), 1) == 1);
    f(arg);
    fflush(stdout);
    CHECK(dup2(saved, 1) == 1);
    close(saved);
    char said[256] = {0};
    rewind(tmp);
    CHECK(fread(said, 1, sizeof(said) - 1, tmp) > 0);
    fclose(tmp);
    return strstr(said, s) != NULL;
}

// A kernel that prints, then a synchronous copy.
struct said_copy {
    int value;
    void *dst;
    const void *src;
    size_t n;
    enum cudaMemcpyKind kind;
};

static void say_then_copy(void *arg)
{
    const struct said_copy *c = (const struct said_copy *)arg;
    say<<<1, 1>>>(c->value);
    OK(cudaMemcpy(c->dst, c->src, c->n, c->kind));
}


// Synchronous copies the tables prove valid, of shared page-locked memory
// and through the staging region, return at a word the worker stores
// once each is done, and no reply comes for them where threads may poll
// (GVS_SPIN_US not 0); one each is waited for where they may not.  A failure latched meanwhile (a posted launch on a stream that is
// gone) is the copy's to answer, once, and device output comes before
// the copy returns.  (The mock's legacy stream runs its work at once: a
// copy held behind a busy stream is tests/gpu/sync_copies.cu's.)
static void signalled()
{
    int polling = polls();
    const size_t n = (size_t)256 << 10;
    unsigned char *h, *back, *page = (unsigned char *)malloc(n);
    void *d;
    CHECK(page != NULL);
    OK(cudaMallocHost((void **)&h, n));
    OK(cudaMallocHost((void **)&back, n));
    OK(cudaMalloc(&d, n));
    pattern(h, n, 21);
    struct stats s0 = now();
    OK(cudaDeviceSynchronize());
    struct stats s1 = now();
    uint64_t sync_reply = s1.bytes_received - s0.bytes_received;
    s0 = now();
    OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    s1 = now();
    CHECK(memcmp(h, back, n) == 0);
    CHECK_EQ(s1.round_trips - s0.round_trips, polling ? 0 : 2);
    CHECK_EQ(s1.posts - s0.posts, 0);
    // Whatever came for the copies came before this reply.
    OK(cudaDeviceSynchronize());
    if (polling)
        CHECK_EQ(now().bytes_received - s1.bytes_received, sync_reply);
    // Pageable, through the staging region: a chunk each way.
    pattern(page, n, 22);
    s0 = now();
    OK(cudaMemcpy(d, page, n, cudaMemcpyHostToDevice));
    memset(page, 0, n);
    OK(cudaMemcpy(page, d, n, cudaMemcpyDeviceToHost));
    s1 = now();
    pattern(back, n, 22);
    CHECK(memcmp(page, back, n) == 0);
    CHECK_EQ(s1.round_trips - s0.round_trips, polling ? 0 : 2);
    // The one to the device is posted behind its mark (staging.c).
    CHECK_EQ(s1.posts - s0.posts, polling ? 1 : 0);
    // Small ones too, posted through the staging region: 32 KiB to the
    // device on a stream, whose bytes do not travel either, and a few
    // bytes from it.
    cudaStream_t st;
    OK(cudaStreamCreate(&st));
    pattern(page, 32768, 23);
    s0 = now();
    OK(cudaMemcpyAsync(d, page, 32768, cudaMemcpyHostToDevice, st));
    OK(cudaStreamSynchronize(st));
    memset(page, 0, 32768);
    s1 = now();
    OK(cudaMemcpy(page, d, 100, cudaMemcpyDeviceToHost));
    struct stats s2 = now();
    pattern(back, 100, 23);
    CHECK(memcmp(page, back, 100) == 0 && page[100] == 0);
    CHECK(s1.bytes_sent - s0.bytes_sent < 4096);
    CHECK_EQ(s1.posts - s0.posts, 1);
    CHECK_EQ(s2.round_trips - s1.round_trips, polling ? 0 : 1);
    CHECK_EQ(s2.posts - s1.posts, 0);
    OK(cudaStreamDestroy(st));
    pattern(page, n, 22);
    OK(cudaMemcpy(d, page, n, cudaMemcpyHostToDevice));

    cudaStream_t gone;
    OK(cudaStreamCreate(&gone));
    say<<<1, 1, 0, gone>>>(1);
    OK(cudaStreamDestroy(gone));
    s0 = now();
    say<<<1, 1, 0, gone>>>(2);
    CHECK(now().round_trips == s0.round_trips);
    OK(cudaGetLastError());
    CHECK_EQ(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost),
             cudaErrorInvalidResourceHandle);
    CHECK_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(page, back, n) == 0);

    // Device output comes before the copy that follows it returns, as
    // natively (the mock's kernel prints in the worker).
    struct said_copy c = {5, back, d, n, cudaMemcpyDeviceToHost};
    CHECK(prints(say_then_copy, &c, "mock device says 5"));
    OK(cudaFree(d));
    OK(cudaFreeHost(h));
    OK(cudaFreeHost(back));
    free(page);
}

// One of the mock backend's kernels: the stream writes the worker had
// the driver enqueue so far, into *out.
__global__ void writes_seen(unsigned long long *) {}

static unsigned long long writes_now(unsigned long long *out)
{
    return mock_counter(writes_seen, out);
}

// Once every kernel launched has ended and its output was sent, a
// synchronous copy of shared memory is answered by the GPU's write
// behind it, the worker not waiting: one stream write each.  That holds
// after a cudaDeviceSynchronize, and after a copy on the legacy stream
// that the worker waited for, unless a non-blocking stream was made (the
// legacy stream does not wait for its work).  After a launch the worker
// waits, and writes the word itself.  (writes_now launches, then copies
// from the device: that copy waits, and settles its launch.)
static void answered_by_gpu()
{
    const size_t n = (size_t)64 << 10;
    unsigned char *h, *back;
    unsigned long long *counter;
    void *d;
    OK(cudaMallocHost((void **)&h, n));
    OK(cudaMallocHost((void **)&back, n));
    unsigned long long gpu = polls() && is_shared(h) && is_shared(back);
    OK(cudaMalloc(&d, n));
    OK(cudaMalloc((void **)&counter, sizeof(*counter)));
    pattern(h, n, 31);
    unsigned long long w0 = writes_now(counter);
    OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, n) == 0);
    unsigned long long w1 = writes_now(counter);
    CHECK_EQ(w1 - w0, 2 * gpu);
    writes_seen<<<1, 1>>>(counter);
    memset(back, 0, n);
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, n) == 0);
    unsigned long long w2 = writes_now(counter);
    CHECK_EQ(w2 - w1, gpu);
    cudaStream_t nb;
    OK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    writes_seen<<<1, 1>>>(counter);
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    unsigned long long w3 = writes_now(counter);
    CHECK_EQ(w3 - w2, 0u);
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, n) == 0);
    CHECK_EQ(writes_now(counter) - w3, gpu);
    OK(cudaStreamDestroy(nb));
    OK(cudaFree(counter));
    OK(cudaFree(d));
    OK(cudaFreeHost(h));
    OK(cudaFreeHost(back));
}

// A synchronous copy from pageable memory to the device returns once the
// stream's earlier work is done and its bytes are staged (staging.c,
// "marked"): posted behind its mark, which the GPU writes while every
// kernel launched has ended; no round trip, no bytes on the connection.
// After a launch the worker waits for the stream, and the kernel's output
// comes before the copy returns; a failure latched before it is its to
// answer, and the copy is made all the same.
static void marked()
{
    const size_t sizes[] = {(4 << 10) + 1, 64 << 10, (2 << 20) + 3000};
    unsigned long long *counter;
    OK(cudaMalloc((void **)&counter, sizeof(*counter)));
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        unsigned chunks = n > ((size_t)2 << 20) ? 2 : 1;
        unsigned char *h = (unsigned char *)malloc(n);
        unsigned char *back = (unsigned char *)malloc(n);
        void *d;
        CHECK(h != NULL && back != NULL);
        OK(cudaMalloc(&d, n));
        pattern(h, n, 41);
        unsigned long long w0 = writes_now(counter);
        // Every kernel launched has ended (answered_by_gpu: a copy on the
        // legacy stream no longer tells so once a non-blocking stream was
        // made).
        OK(cudaDeviceSynchronize());
        struct stats s0 = now();
        OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
        struct stats s1 = now();
        memset(h, 0, n);
        CHECK_EQ(s1.round_trips - s0.round_trips, 0);
        CHECK_EQ(s1.posts - s0.posts, chunks);
        CHECK(s1.bytes_sent - s0.bytes_sent < 4096);
        // The mark's write and each chunk's, for its slot.
        CHECK_EQ(writes_now(counter) - w0, 1u + chunks);
        OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
        pattern(h, n, 41);
        CHECK(memcmp(h, back, n) == 0);

        pattern(h, n, 42);
        struct said_copy c = {7, d, h, n, cudaMemcpyHostToDevice};
        CHECK(prints(say_then_copy, &c, "mock device says 7"));
        OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
        CHECK(memcmp(h, back, n) == 0);

        cudaStream_t gone;
        OK(cudaStreamCreate(&gone));
        OK(cudaStreamDestroy(gone));
        say<<<1, 1, 0, gone>>>(8);
        OK(cudaGetLastError());
        pattern(h, n, 43);
        CHECK_EQ(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice),
                 cudaErrorInvalidResourceHandle);
        CHECK_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
        OK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
        CHECK(memcmp(h, back, n) == 0);
        OK(cudaFree(d));
        free(h);
        free(back);
    }
    OK(cudaFree(counter));
}

// Two of the mock backend's kernels: the driver's batch copies the
// worker made so far (calls, copies) into out[0..1], the launches of the
// layer's copy kernel (launches, copies) into out[2..3] and those of them
// that made their copies in order into out[4]; and one that holds the
// worker's thread launching it for ms milliseconds.
__global__ void batches_seen(unsigned long long *) {}
__global__ void stall(int) {}

static void batches_now(unsigned long long *dev, unsigned long long out[5])
{
    batches_seen<<<1, 1>>>(dev);
    OK(cudaMemcpy(out, dev, 5 * sizeof(*out), cudaMemcpyDeviceToHost));
}

// The copies of batched(), from a thread of their own: a lane no worker
// thread has served before, which the worker's reader serves itself once
// the stalling launch let it go, or queues behind that launch on the
// thread stalled by it.
struct burst {
    unsigned char *h, *d, *d2, *x;
    size_t n;
    cudaStream_t s;
};

static void *burst_copies(void *arg)
{
    struct burst *b = (struct burst *)arg;
    size_t n = b->n;
    // A thread's first launch waits for its reply; the next is posted.
    stall<<<1, 1>>>(0);
    OK(cudaStreamSynchronize(b->s));
    stall<<<1, 1>>>(200);
    for (int i = 0; i < 32; i++)
        OK(cudaMemcpyAsync(b->d + i * n, b->h + i * n, n,
                           cudaMemcpyHostToDevice, b->s));
    for (int i = 0; i < 8; i++)
        OK(cudaMemcpyAsync(b->d2 + i * n, b->d + i * n, n,
                           cudaMemcpyDeviceToDevice, b->s));
    OK(cudaMemcpyAsync(b->x, b->h, n, cudaMemcpyHostToDevice, b->s));
    OK(cudaMemcpyAsync(b->x, b->h, n, cudaMemcpyHostToDevice, b->s));
    OK(cudaMemcpyAsync(b->x, b->h + n, n, cudaMemcpyHostToDevice, b->s));
    OK(cudaStreamSynchronize(b->s));
    return NULL;
}

static void *burst_unbatched(void *arg)
{
    struct burst *b = (struct burst *)arg;
    size_t n = b->n;
    stall<<<1, 1>>>(200);
    for (int i = 0; i < 3; i++)
        OK(cudaMemcpyAsync(b->d + i * n, b->h + i * n, n,
                           cudaMemcpyHostToDevice, b->s));
    OK(cudaStreamSynchronize(b->s));
    stall<<<1, 1>>>(200);
    for (int i = 3; i < 8; i++)
        OK(cudaMemcpyAsync(b->d + i * n, b->h + i * n, n,
                           cudaMemcpyHostToDevice, 0));
    OK(cudaStreamSynchronize(0));
    return NULL;
}

static void run_burst(void *(*f)(void *), struct burst *b)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, f, b) == 0);
    CHECK(pthread_join(t, NULL) == 0);
}

// Posted copies that wait in the connection together (the worker held
// by a stalling launch) go to the driver in batches of at most 16, one
// per run of the same op on the same stream (remote batch.c): 32 copies
// to the device in two; 8 device-to-device ones in one launch of the
// layer's copy kernel.  A copy that depends on one in the batch (the
// same destination, another source) makes the batch one the kernel
// makes in order, the very same copy again does not; a batch the
// driver refuses (the mock refuses 3) is made one copy at a time; the
// legacy stream takes none of the driver's.  Every byte lands where and
// in the order it would alone.
static void batched()
{
    const size_t n = 64;
    struct burst b;
    unsigned long long *counter, b0[5], b1[5];
    b.n = n;
    OK(cudaMallocHost((void **)&b.h, 64 * n));
    OK(cudaMalloc((void **)&b.d, 64 * n));
    OK(cudaMalloc((void **)&b.d2, 64 * n));
    OK(cudaMalloc((void **)&counter, 5 * sizeof(*counter)));
    OK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
    b.x = b.d2 + 40 * n;
    pattern(b.h, 64 * n, 41);
    OK(cudaMemset(b.d, 0, 64 * n));
    OK(cudaMemset(b.d2, 0, 64 * n));
    batches_now(counter, b0);
    run_burst(burst_copies, &b);
    batches_now(counter, b1);
    if (is_shared(b.h)) {
        CHECK_EQ(b1[0] - b0[0], 2ull);
        CHECK_EQ(b1[1] - b0[1], 32ull);
        CHECK_EQ(b1[2] - b0[2], 2ull);
        CHECK_EQ(b1[3] - b0[3], 8ull + 3);
        CHECK_EQ(b1[4] - b0[4], 1ull);
    }
    unsigned char *back = (unsigned char *)malloc(64 * n);
    CHECK(back != NULL);
    OK(cudaMemcpy(back, b.d, 32 * n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, b.h, 32 * n) == 0);
    OK(cudaMemcpy(back, b.d2, 8 * n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, b.h, 8 * n) == 0);
    OK(cudaMemcpy(back, b.x, n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, b.h + n, n) == 0);

    // Refused (3), then the legacy stream: no batch, the same bytes.
    OK(cudaMemset(b.d, 0, 64 * n));
    run_burst(burst_unbatched, &b);
    batches_now(counter, b0);
    CHECK_EQ(b0[0], b1[0]);
    CHECK_EQ(b0[1], b1[1]);
    CHECK_EQ(b0[3], b1[3]);
    OK(cudaMemcpy(back, b.d, 8 * n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, b.h, 8 * n) == 0);
    free(back);
    OK(cudaStreamDestroy(b.s));
    OK(cudaFree(counter));
    OK(cudaFree(b.d2));
    OK(cudaFree(b.d));
    OK(cudaFreeHost(b.h));
}

// The copies of packed_batches(), from a thread of their own as in
// batched(): 40 stream-ordered pageable copies of 4 KiB into one buffer,
// each of other bytes, then 20 into buffers of their own; the round
// trips they took into packed_trips.
static uint64_t packed_trips;

static void *burst_packed(void *arg)
{
    struct burst *b = (struct burst *)arg;
    const size_t n = b->n;
    stall<<<1, 1>>>(0);
    OK(cudaStreamSynchronize(b->s));
    stall<<<1, 1>>>(200);
    struct stats s0 = now();
    for (int i = 0; i < 60; i++) {
        pattern(b->h, n, 100u + (unsigned)i);
        OK(cudaMemcpyAsync(i < 40 ? b->d : b->d2 + (i - 40) * n, b->h, n,
                           cudaMemcpyHostToDevice, b->s));
    }
    packed_trips = now().round_trips - s0.round_trips;
    OK(cudaStreamSynchronize(b->s));
    return NULL;
}

// Copies of b->n bytes into one buffer, enough to fill every staging
// slot and come back to the first, from a thread of their own: the first
// of them (past the first slot's end) wait together in the connection,
// the worker held by a stalling launch for 5 ms, less than a copy polls
// a slot's word before it asks for it.  The round trips they took into
// packed_trips.
static int slot_copies(size_t len)
{
    return 5 * (int)(((size_t)2 << 20) / len);
}

static void *burst_slots(void *arg)
{
    struct burst *b = (struct burst *)arg;
    stall<<<1, 1>>>(0);
    OK(cudaStreamSynchronize(b->s));
    stall<<<1, 1>>>(5);
    struct stats s0 = now();
    for (int i = 0; i < slot_copies(b->n); i++) {
        pattern(b->h, b->n, (unsigned)i);
        OK(cudaMemcpyAsync(b->d, b->h, b->n, cudaMemcpyHostToDevice, b->s));
    }
    packed_trips = now().round_trips - s0.round_trips;
    OK(cudaStreamSynchronize(b->s));
    return NULL;
}

// Small pageable copies packed into a staging slot join the worker's
// batches too, the write of the slot's word behind the batch (remote
// shared.c, "tail"): copies into one buffer depend on each other, and
// the kernel makes them in order, one block, 16 to a launch (remote
// batch.c); once the batch holds 16, the 8 left of them and the first 8
// into buffers of their own go together, and the last 12 go to the
// driver's batch, from host memory.  Then copies enough to fill every
// slot and come back to the first, at the pace they come: each slot's
// word comes (one that did not would be asked for by a round trip, after
// 20 ms).  The last bytes into each buffer are the ones there.
static void packed_batches()
{
    const size_t n = 4096;
    struct burst b;
    unsigned long long *counter, b0[5], b1[5];
    b.n = n;
    b.h = (unsigned char *)malloc(n);
    unsigned char *back = (unsigned char *)malloc(20 * n),
                  *want = (unsigned char *)malloc(n);
    CHECK(b.h != NULL && back != NULL && want != NULL);
    OK(cudaMalloc((void **)&b.d, n));
    OK(cudaMalloc((void **)&b.d2, 20 * n));
    OK(cudaMalloc((void **)&counter, 5 * sizeof(*counter)));
    OK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
    OK(cudaMemset(b.d, 0, n));
    OK(cudaMemset(b.d2, 0, 20 * n));
    batches_now(counter, b0);
    run_burst(burst_packed, &b);
    batches_now(counter, b1);
    CHECK_EQ(packed_trips, 0ull);
    CHECK_EQ(b1[4] - b0[4], 3ull);
    CHECK_EQ(b1[2] - b0[2], 3ull);
    CHECK_EQ(b1[3] - b0[3], 48ull);
    CHECK_EQ(b1[0] - b0[0], 1ull);
    CHECK_EQ(b1[1] - b0[1], 12ull);
    OK(cudaMemcpy(back, b.d, n, cudaMemcpyDeviceToHost));
    pattern(want, n, 139);
    CHECK(memcmp(back, want, n) == 0);
    OK(cudaMemcpy(back, b.d2, 20 * n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 20; i++) {
        pattern(want, n, 140u + (unsigned)i);
        CHECK(memcmp(back + i * n, want, n) == 0);
    }

    // Of 4 KiB, made in order by the kernel; of 32 KiB, too long for
    // that: one at a time.
    for (size_t len = n; len <= 8 * n; len *= 8) {
        struct burst c = {(unsigned char *)malloc(len), NULL, NULL, NULL,
                          len, b.s};
        unsigned char *got = (unsigned char *)malloc(len),
                      *exp = (unsigned char *)malloc(len);
        CHECK(c.h != NULL && got != NULL && exp != NULL);
        OK(cudaMalloc((void **)&c.d, len));
        run_burst(burst_slots, &c);
        if (polls())
            CHECK_EQ(packed_trips, 0ull);
        OK(cudaMemcpy(got, c.d, len, cudaMemcpyDeviceToHost));
        pattern(exp, len, (unsigned)slot_copies(len) - 1);
        CHECK(memcmp(got, exp, len) == 0);
        OK(cudaFree(c.d));
        free(exp);
        free(got);
        free(c.h);
    }
    OK(cudaStreamDestroy(b.s));
    OK(cudaFree(counter));
    OK(cudaFree(b.d2));
    OK(cudaFree(b.d));
    free(want);
    free(back);
    free(b.h);
}

// The copies of kernel_copies(), from a thread of its own as above: on
// the legacy stream, cudaMemcpyAsync's and cudaMemcpy's (which CUDA
// does not wait for either) in one run; then copies of memory of the
// other device's context.
static void *burst_legacy(void *arg)
{
    struct burst *b = (struct burst *)arg;
    size_t n = b->n;
    stall<<<1, 1>>>(0);
    OK(cudaDeviceSynchronize());
    stall<<<1, 1>>>(200);
    for (int i = 0; i < 6; i++)
        OK(cudaMemcpyAsync(b->d2 + i * n, b->d + i * n, n,
                           cudaMemcpyDeviceToDevice, 0));
    for (int i = 6; i < 10; i++)
        OK(cudaMemcpy(b->d2 + i * n, b->d + i * n, n,
                      cudaMemcpyDeviceToDevice));
    OK(cudaDeviceSynchronize());
    return NULL;
}

static void *burst_other_device(void *arg)
{
    struct burst *b = (struct burst *)arg;
    size_t n = b->n;
    stall<<<1, 1>>>(200);
    for (int i = 0; i < 4; i++)
        OK(cudaMemcpyAsync(b->x + i * n, b->d + i * n, n,
                           cudaMemcpyDeviceToDevice, 0));
    OK(cudaDeviceSynchronize());
    return NULL;
}

// Three copies of 2 MiB waiting together, as in burst_legacy.
static void *burst_long(void *arg)
{
    struct burst *b = (struct burst *)arg;
    stall<<<1, 1>>>(0);
    OK(cudaDeviceSynchronize());
    stall<<<1, 1>>>(200);
    for (int i = 0; i < 3; i++)
        OK(cudaMemcpyAsync(b->d2 + i * b->n, b->d + i * b->n, b->n,
                           cudaMemcpyDeviceToDevice, 0));
    OK(cudaDeviceSynchronize());
    return NULL;
}

// Device-to-device copies longer than a batch of the driver's takes
// (1 MiB): up to 16 MiB the copy kernel's, in one launch when they wait
// together, alone otherwise; the driver's beyond (remote batch.c).
static void alone_copies(unsigned long long *counter)
{
    const size_t lens[2] = {(size_t)4 << 20, ((size_t)16 << 20) + 4096};
    const unsigned long long launches[2] = {1, 0};
    unsigned char *d, *d2;
    unsigned char *h = (unsigned char *)malloc(lens[1]),
                  *back = (unsigned char *)malloc(lens[1]);
    CHECK(h != NULL && back != NULL);
    OK(cudaMalloc((void **)&d, lens[1]));
    OK(cudaMalloc((void **)&d2, lens[1]));
    for (int i = 0; i < 2; i++) {
        unsigned long long c0[5], c1[5];
        pattern(h, lens[i], 31 + i);
        OK(cudaMemcpy(d, h, lens[i], cudaMemcpyHostToDevice));
        OK(cudaMemset(d2, 0, lens[i]));
        batches_now(counter, c0);
        OK(cudaMemcpy(d2, d, lens[i], cudaMemcpyDeviceToDevice));
        batches_now(counter, c1);
        CHECK_EQ(c1[2] - c0[2], launches[i]);
        CHECK_EQ(c1[3] - c0[3], launches[i]);
        OK(cudaMemcpy(back, d2, lens[i], cudaMemcpyDeviceToHost));
        CHECK(memcmp(back, h, lens[i]) == 0);
    }
    struct burst b = {NULL, d, d2, NULL, (size_t)2 << 20, NULL};
    unsigned long long c0[5], c1[5];
    OK(cudaMemset(d2, 0, 3 * b.n));
    batches_now(counter, c0);
    run_burst(burst_long, &b);
    batches_now(counter, c1);
    CHECK_EQ(c1[2] - c0[2], 1ull);
    CHECK_EQ(c1[3] - c0[3], 3ull);
    OK(cudaMemcpy(back, d2, 3 * b.n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, h, 3 * b.n) == 0);
    OK(cudaFree(d2));
    OK(cudaFree(d));
    free(back);
    free(h);
}

// Device-to-device copies are the layer's copy kernel's (remote
// copy_kernel.c), over every transport: 10 on the legacy stream, which
// takes no batch of the driver's, in one launch; a copy from or to
// memory of another device's context is the driver's alone (the mock's
// stream is the current device's).  Every byte as it would be.
static void kernel_copies()
{
    const size_t n = 96;
    struct burst b;
    unsigned long long *counter, b0[5], b1[5];
    b.n = n;
    OK(cudaMalloc((void **)&b.d, 16 * n));
    OK(cudaMalloc((void **)&b.d2, 16 * n));
    OK(cudaMalloc((void **)&counter, 5 * sizeof(*counter)));
    unsigned char *h = (unsigned char *)malloc(16 * n),
                  *back = (unsigned char *)malloc(16 * n);
    CHECK(h != NULL && back != NULL);
    pattern(h, 16 * n, 77);
    OK(cudaMemcpy(b.d, h, 16 * n, cudaMemcpyHostToDevice));
    OK(cudaMemset(b.d2, 0, 16 * n));
    batches_now(counter, b0);
    run_burst(burst_legacy, &b);
    batches_now(counter, b1);
    CHECK_EQ(b1[2] - b0[2], 1ull);
    CHECK_EQ(b1[3] - b0[3], 10ull);
    OK(cudaMemcpy(back, b.d2, 10 * n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, h, 10 * n) == 0);

    int count = 0;
    OK(cudaGetDeviceCount(&count));
    if (count > 1) {
        OK(cudaSetDevice(1));
        OK(cudaMalloc((void **)&b.x, 4 * n));
        OK(cudaSetDevice(0));
        run_burst(burst_other_device, &b);
        batches_now(counter, b0);
        CHECK_EQ(b0[2], b1[2]);
        CHECK_EQ(b0[3], b1[3]);
        OK(cudaMemcpy(back, b.x, 4 * n, cudaMemcpyDeviceToHost));
        CHECK(memcmp(back, h, 4 * n) == 0);
        OK(cudaFree(b.x));
    }
    alone_copies(counter);
    free(back);
    free(h);
    OK(cudaFree(counter));
    OK(cudaFree(b.d2));
    OK(cudaFree(b.d));
}

static void *copier(void *arg)
{
    size_t size = (size_t)arg;
    for (int i = 0; i < 4; i++)
        pageable(size, 0);
    return NULL;
}

// The first pageable copy that could use the staging region has it set
// up in the background and sends its bytes, as do the copies until it is
// there; over shm it must come.
static void await_staging()
{
    const size_t n = 1 << 20;
    unsigned char *h = (unsigned char *)malloc(n);
    void *d;
    CHECK(h != NULL);
    OK(cudaMalloc(&d, n));
    pattern(h, n, 1);
    for (int i = 0; i < 500; i++) {
        struct stats s0 = now();
        OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
        if (!shared || now().bytes_sent - s0.bytes_sent < 4096)
            break;
        CHECK(i < 499);
        usleep(10000);
    }
    OK(cudaFree(d));
    free(h);
}

// A graph's copy nodes between host memory and the device, at each
// launch: over shm and unix page-locked memory is shared with the backend
// and the nodes read and write it there; other host memory (pageable
// memory, and over tcp page-locked memory too) is moved around each
// launch.  Either way the nodes report the program's own pointers back.
static void graph_copies()
{
    const size_t n = 1 << 16;
    unsigned char *in, *out;
    void *d;
    OK(cudaMallocHost((void **)&in, n));
    OK(cudaMallocHost((void **)&out, n));
    OK(cudaMalloc(&d, n));
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaMemcpy3DParms up = {};
    up.srcPtr = make_cudaPitchedPtr(in, n, n, 1);
    up.dstPtr = make_cudaPitchedPtr(d, n, n, 1);
    up.extent = make_cudaExtent(n, 1, 1);
    up.kind = cudaMemcpyHostToDevice;
    cudaGraphNode_t a, b;
    OK(cudaGraphAddMemcpyNode(&a, g, NULL, 0, &up));
    cudaMemcpy3DParms down = {};
    down.srcPtr = make_cudaPitchedPtr(d, n, n, 1);
    down.dstPtr = make_cudaPitchedPtr(out, n, n, 1);
    down.extent = make_cudaExtent(n, 1, 1);
    down.kind = cudaMemcpyDeviceToHost;
    OK(cudaGraphAddMemcpyNode(&b, g, &a, 1, &down));
    cudaMemcpy3DParms got = {};
    OK(cudaGraphMemcpyNodeGetParams(a, &got));
    CHECK(got.srcPtr.ptr == in && got.dstPtr.ptr == d &&
          got.kind == cudaMemcpyHostToDevice);
    OK(cudaGraphMemcpyNodeGetParams(b, &got));
    CHECK(got.dstPtr.ptr == out && got.kind == cudaMemcpyDeviceToHost);
    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, 0));
    for (unsigned round = 0; round < 3; round++) {
        pattern(in, n, 40 + round);
        memset(out, 0, n);
        OK(cudaGraphLaunch(x, 0));
        OK(cudaStreamSynchronize(0));
        CHECK(memcmp(in, out, n) == 0);
    }
    if (shared) {
        // Rows that leave the shared region.
        up.srcPtr = make_cudaPitchedPtr(in + 16, n, n, 1);
        CHECK(cudaGraphAddMemcpyNode(&a, g, NULL, 0, &up) ==
              cudaErrorInvalidValue);
        (void)cudaGetLastError();
    }
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));

    // Pageable memory, on two streams in turn, through a clone, with a
    // node's destination changed in the executable graph.
    unsigned char *src = (unsigned char *)malloc(n);
    unsigned char *dst = (unsigned char *)malloc(n);
    unsigned char *dst2 = (unsigned char *)malloc(n);
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddMemcpyNode1D(&a, g, NULL, 0, d, src, n,
                                cudaMemcpyHostToDevice));
    OK(cudaGraphAddMemcpyNode1D(&b, g, &a, 1, dst, d, n,
                                cudaMemcpyDeviceToHost));
    OK(cudaGraphMemcpyNodeGetParams(b, &got));
    CHECK(got.dstPtr.ptr == dst && got.srcPtr.ptr == d);
    cudaStream_t s1, s2;
    OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    OK(cudaGraphInstantiate(&x, g, 0));
    for (unsigned round = 0; round < 4; round++) {
        pattern(src, n, 60 + round);
        memset(dst, 0, n);
        OK(cudaGraphLaunch(x, round % 2 ? s2 : s1));
        OK(cudaStreamSynchronize(round % 2 ? s2 : s1));
        CHECK(memcmp(src, dst, n) == 0);
    }
    OK(cudaGraphExecMemcpyNodeSetParams1D(x, b, dst2, d, n,
                                          cudaMemcpyDeviceToHost));
    pattern(src, n, 70);
    memset(dst, 0, n);
    memset(dst2, 0, n);
    OK(cudaGraphLaunch(x, s1));
    OK(cudaStreamSynchronize(s1));
    CHECK(memcmp(src, dst2, n) == 0 && dst[0] == 0 && dst[n - 1] == 0);
    cudaGraph_t c;
    cudaGraphExec_t cx;
    OK(cudaGraphClone(&c, g));
    OK(cudaGraphDestroy(g));
    OK(cudaGraphInstantiate(&cx, c, 0));
    pattern(src, n, 80);
    OK(cudaGraphLaunch(cx, s2));
    OK(cudaStreamSynchronize(s2));
    CHECK(memcmp(src, dst, n) == 0);
    // Rows that do not follow each other in pageable memory.
    cudaGraphNode_t e;
    cudaMemcpy3DParms rows = {};
    rows.srcPtr = make_cudaPitchedPtr(d, 128, 128, 2);
    rows.dstPtr = make_cudaPitchedPtr(dst, 256, 128, 2);
    rows.extent = make_cudaExtent(128, 2, 1);
    rows.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaGraphAddMemcpyNode(&e, c, NULL, 0, &rows) == cudaErrorNotSupported);
    (void)cudaGetLastError();
    OK(cudaGraphExecDestroy(cx));
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(c));
    OK(cudaStreamDestroy(s1));
    OK(cudaStreamDestroy(s2));
    free(src);
    free(dst);
    free(dst2);
    OK(cudaFree(d));
    OK(cudaFreeHost(in));
    OK(cudaFreeHost(out));
}

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    shared = strcmp(argv[1], "shared") == 0;
    stats_init();
    OK(cudaFree(0));

    // Where memory is not shared (tcp) the device is one that cannot map
    // host memory, through the attribute and the properties alike, even
    // though the backend's GPU can.
    int can_map = -1;
    cudaDeviceProp prop;
    OK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    CHECK(can_map == shared);
    OK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    CHECK(can_map == shared);
    OK(cudaGetDeviceProperties(&prop, 0));
    CHECK(prop.canMapHostMemory == shared);

    // Before any test makes a non-blocking stream.
    if (shared) {
        await_staging();
        answered_by_gpu();
        if (polls())
            marked();
    }
    graph_copies();
    pinned(256);
    pinned(257);
    pinned(4096);
    pinned(((size_t)16 << 20) + 5);
    await_staging();
    const size_t sizes[] = {1, (4 << 10) - 1, 4 << 10, (64 << 10) - 1,
                            64 << 10, 2 << 20, (2 << 20) + 1,
                            (9 << 20) + 7};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        pageable(sizes[i], 1);
    staged_posted();
    if (shared) {
        staged_overlap();
        staged_packed();
        signalled();
        batched();
        packed_batches();
    }
    kernel_copies();

    // Threads copy at once: one has the staging region, the others send
    // their bytes; all must be right.
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&t[i], NULL, copier,
                             (void *)(((size_t)3 << 20) + i)) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(pthread_join(t[i], NULL) == 0);

    // A forked child has its own session, which shares nothing with the
    // parent's: its copies from the parent's pinned memory still work.
    unsigned char *h;
    OK(cudaMallocHost((void **)&h, 1 << 20));
    pattern(h, 1 << 20, 5);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        void *d;
        unsigned char *back = (unsigned char *)malloc(1 << 20);
        if (back == NULL || cudaMalloc(&d, 1 << 20) != cudaSuccess ||
            cudaMemcpy(d, h, 1 << 20, cudaMemcpyHostToDevice) !=
                cudaSuccess ||
            cudaMemcpy(back, d, 1 << 20, cudaMemcpyDeviceToHost) !=
                cudaSuccess ||
            memcmp(back, h, 1 << 20) != 0)
            _exit(1);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    OK(cudaFreeHost(h));
    printf("ok\n");
    return 0;
}
