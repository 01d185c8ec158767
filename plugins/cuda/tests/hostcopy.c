/*
 * cuda.mock_hostcopy: copies between device memory and host memory
 * through the driver frontend (gvs_remote.h, "Shared host memory").
 * Over shm://, unix:// and ivshmem:// page-locked memory (cuMemHostAlloc)
 * is shared with the worker: cuMemHostGetDevicePointer answers, and a
 * copy from or to it is one round trip that carries none of its bytes,
 * or none on a stream (posted);
 * pageable copies go through the staging region, their bytes not
 * through the connection either.  Over the other transports the bytes
 * travel, a large device-to-host copy in pipelined pieces.  Either way
 * the bytes arrive, and a bad device range is reported at once.  Prints
 * "ok".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_check.h"
#include "mock_driver.h"

#define PINNED ((size_t)8 << 20)
#define PAGEABLE ((size_t)5 << 20)
/* The mock driver's module image (its kernels fill and add). */
#define MOCK_MODULE "//gvs-mock module\n"
/* What a request or reply of a copy carries besides the bytes. */
#define SMALL 4096u

static void pattern(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 7 + seed);
}

static int same(const uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(i * 7 + seed))
            return 0;
    return 1;
}

/* There and back on stream st: the bytes of h arrive in h2. */
static void on_stream(CUdeviceptr d, uint8_t *h, uint8_t *h2, size_t n,
                      uint8_t seed, CUstream st)
{
    memset(h2, 0, n);
    pattern(h, n, seed);
    CHECK(cuMemcpyHtoDAsync(d, h, n, st));
    CHECK(cuMemcpyDtoHAsync(h2, d, n, st));
    CHECK(cuStreamSynchronize(st));
    EXPECT(same(h2, n, seed));
}

/* Page-locked memory: zero-copy over shm://. */
static void pinned(CUdeviceptr d, int shm)
{
    uint8_t *h, *h2;
    CUdeviceptr dp = 0;
    CHECK(cuMemHostAlloc((void **)&h, PINNED, 0));
    CHECK(cuMemAllocHost((void **)&h2, PINNED));
    CUresult r = cuMemHostGetDevicePointer(&dp, h + 4096, 0);
    EXPECT(shm ? r == CUDA_SUCCESS && dp != 0 : r == CUDA_ERROR_NOT_SUPPORTED);
    unsigned int flags = 0;
    CHECK(cuMemHostGetFlags(&flags, h2));
    EXPECT(flags & CU_MEMHOSTALLOC_DEVICEMAP);

    pattern(h, PINNED, 1);
    struct stats s0 = now();
    CHECK(cuMemcpyHtoD(d, h, PINNED));
    struct stats s1 = now();
    CHECK(cuMemcpyDtoH(h2, d, PINNED));
    struct stats s2 = now();
    EXPECT(same(h2, PINNED, 1));
    if (shm) {
        EXPECT(s1.round_trips - s0.round_trips == 1);
        EXPECT(s1.posts == s0.posts);
        EXPECT(s1.bytes_sent - s0.bytes_sent < SMALL);
        EXPECT(s2.round_trips - s1.round_trips == 1);
        EXPECT(s2.bytes_received - s1.bytes_received < SMALL);
    } else {
        EXPECT(s1.bytes_sent - s0.bytes_sent >= PINNED);
        EXPECT(s2.bytes_received - s1.bytes_received >= PINNED);
    }

    /* On a stream: each copy posted (the tables prove it valid), the
     * synchronization the one round trip. */
    CUstream st;
    CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    struct stats s3 = now();
    on_stream(d, h, h2, PINNED, 2, st);
    struct stats s4 = now();
    if (shm) {
        EXPECT(s4.round_trips - s3.round_trips == 1);
        EXPECT(s4.posts - s3.posts == 2);
    }
    /* A stream-ordered copy the tables prove valid costs no round trip:
     * over shm one posted request, else every piece posted with its
     * bytes; one running past the allocation is refused at once. */
    struct stats s5 = now();
    CHECK(cuMemcpyHtoDAsync(d, h, PINNED, st));
    struct stats s6 = now();
    EXPECT_EQ(s6.round_trips - s5.round_trips, 0);
    EXPECT_EQ(s6.posts - s5.posts, shm ? 1 : PINNED / (1u << 20));
    EXPECT(cuMemcpyHtoDAsync(d + PINNED - 16, h, 32, st) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(now().posts - s6.posts, 0);
    /* A part of a region, at an offset. */
    CHECK(cuMemcpyDtoHAsync(h2 + 4096, d, 4096, st));
    CHECK(cuStreamSynchronize(st));
    EXPECT(same(h2 + 4096, 4096, 2));

    /* A device range past the allocation is refused at once, nothing
     * copied; so is a bad stream. */
    EXPECT(cuMemcpyHtoD(d + PINNED - 16, h, 32) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyDtoHAsync(h2, d + PINNED - 16, 32, st) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuStreamDestroy(st));
    EXPECT(cuMemcpyHtoDAsync(d, h, PINNED, st) == CUDA_ERROR_INVALID_HANDLE);

    CHECK(cuMemFreeHost(h));
    CHECK(cuMemFreeHost(h2));
    EXPECT(cuMemFreeHost(h) == CUDA_ERROR_INVALID_VALUE);
}

/* Pageable memory: staged over shm://, sent otherwise. */
static void pageable(CUdeviceptr d, int shm)
{
    uint8_t *p = malloc(PAGEABLE), *q = malloc(PAGEABLE);
    EXPECT(p != NULL && q != NULL);
    pattern(p, PAGEABLE, 3);
    struct stats s0 = now();
    CHECK(cuMemcpyHtoD(d, p, PAGEABLE));
    CHECK(cuMemcpyDtoH(q, d, PAGEABLE));
    struct stats s1 = now();
    EXPECT(same(q, PAGEABLE, 3));
    uint64_t moved = (s1.bytes_sent - s0.bytes_sent) +
                     (s1.bytes_received - s0.bytes_received);
    EXPECT(shm ? moved < 16 * SMALL : moved >= 2 * PAGEABLE);
    /* Three chunks each way, and the staging region's share collected. */
    if (shm)
        EXPECT(s1.round_trips - s0.round_trips <= 7);

    CUstream st;
    CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    on_stream(d, p, q, PAGEABLE, 4, st);
    CHECK(cuStreamDestroy(st));

    EXPECT(cuMemcpyHtoD(d + PINNED - (1u << 20), p, PAGEABLE) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyDtoH(q, d + PINNED - (1u << 20), PAGEABLE) ==
           CUDA_ERROR_INVALID_VALUE);

    /* Registered memory is the program's own: the GPU cannot reach it,
     * and copies from it arrive all the same. */
    CUdeviceptr dp;
    CHECK(cuMemHostRegister(p, PAGEABLE, 0));
    EXPECT(cuMemHostGetDevicePointer(&dp, p, 0) == CUDA_ERROR_NOT_SUPPORTED);
    pattern(p, PAGEABLE, 5);
    CHECK(cuMemcpyHtoD(d, p, PAGEABLE));
    CHECK(cuMemcpyDtoH(q, d, PAGEABLE));
    EXPECT(same(q, PAGEABLE, 5));
    CHECK(cuMemHostUnregister(p));
    free(p);
    free(q);
}

/* Larger than a frame's bytes (GVS_BULK_CHUNK, 8 MiB): on the socket
 * transports a copy of it is pieces, host to device all but the last
 * posted, device to host pipelined, each one round trip.  Both ways 21,
 * twenty of 1 MiB (GVS_REMOTE_PIECE) and the last 4 KiB. */
#define LARGE (((size_t)20 << 20) + 4096)

static void large(int shm)
{
    CUdeviceptr d;
    uint8_t *p = malloc(LARGE), *q = malloc(LARGE);
    EXPECT(p != NULL && q != NULL);
    CHECK(cuMemAlloc(&d, LARGE));
    pattern(p, LARGE, 6);
    struct stats s0 = now();
    CHECK(cuMemcpyHtoD(d, p, LARGE));
    struct stats s1 = now();
    CHECK(cuMemcpyDtoH(q, d, LARGE));
    struct stats s2 = now();
    EXPECT(same(q, LARGE, 6));
    if (!shm) {
        /* Host to device: 20 pieces posted, the last waited for. */
        EXPECT(s1.posts - s0.posts == 20);
        EXPECT(s1.round_trips - s0.round_trips == 1);
        EXPECT(s1.bytes_sent - s0.bytes_sent >= LARGE);
        EXPECT(s2.round_trips - s1.round_trips == 21);
        EXPECT(s2.posts == s1.posts);
        EXPECT(s2.bytes_received - s1.bytes_received >= LARGE);
    }
    /* A posted piece's failure is the last piece's answer. */
    EXPECT(cuMemcpyHtoD(d + 4096, p, LARGE) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemcpyHtoD(d, p, LARGE));
    /* A range past the allocation: the failure, every reply collected
     * (the next copy finds the connection in step). */
    EXPECT(cuMemcpyDtoH(q, d + 4096, LARGE) == CUDA_ERROR_INVALID_VALUE);
    memset(q, 0, LARGE);
    CHECK(cuMemcpyDtoHAsync(q, d, LARGE, NULL));
    CHECK(cuStreamSynchronize(NULL));
    EXPECT(same(q, LARGE, 6));
    CHECK(cuMemFree(d));
    free(p);
    free(q);
}

/* A 2D copy to pitched device memory from rows w bytes long that
 * follow each other on the host (one span: pipelined on every
 * transport), and back: in pieces each way, all but the last posted to
 * the device, each a round trip from it.  The bytes come back whole. */
static void pitched_2d(size_t w, size_t rows, size_t pieces, int seed)
{
    const size_t pitch = w + 512;
    uint8_t *p = malloc(w * rows), *q = malloc(w * rows);
    CUdeviceptr d;
    EXPECT(p != NULL && q != NULL);
    CHECK(cuMemAlloc(&d, pitch * rows));
    pattern(p, w * rows, seed);
    CUDA_MEMCPY2D c = {0};
    c.WidthInBytes = w;
    c.Height = rows;
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = p;
    c.srcPitch = w;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = d;
    c.dstPitch = pitch;
    struct stats s0 = now();
    CHECK(cuMemcpy2D(&c));
    struct stats s1 = now();
    EXPECT_EQ(s1.posts - s0.posts, pieces - 1);
    EXPECT_EQ(s1.round_trips - s0.round_trips, 1);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = d;
    c.srcPitch = pitch;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = q;
    c.dstPitch = w;
    memset(q, 0, w * rows);
    CHECK(cuMemcpy2D(&c));
    EXPECT_EQ(now().round_trips - s1.round_trips, pieces);
    EXPECT(same(q, w * rows, seed));
    CHECK(cuMemFree(d));
    free(p);
    free(q);
}

/* Rows longer than a piece (GVS_REMOTE_PIECE, 1 MiB) go in parts: four
 * rows of 3 MiB + 8, each three parts of 1 MiB and one of 8 bytes.
 * Shorter rows go whole, as many as reach 1 MiB: 526 rows of 4,000
 * bytes, 263 a piece (1,052,000 bytes), in two pieces, not 262 (48
 * bytes short, which gvsd would copy where it reads them) and three. */
static void rows_2d(void)
{
    pitched_2d(((size_t)3 << 20) + 8, 4, 16, 9);
    pitched_2d(4000, 526, 2, 10);
}

/* A failure posted before a page-locked allocation (whose sharing is a
 * request of its own over shm://) is still the next synchronization's. */
static void posted_failure(void)
{
    CUmodule mod;
    CUfunction fill;
    CUdeviceptr p;
    uint32_t value = 1, n = 1024;
    void *args[] = {&p, &value, &n};
    CHECK(cuModuleLoadData(&mod, "//gvs-mock module\n"));
    CHECK(cuModuleGetFunction(&fill, mod, "fill"));
    CHECK(cuMemAlloc(&p, 1024 * sizeof(uint32_t)));
    CHECK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    n = 1025;
    CHECK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    void *h;
    CHECK(cuMemHostAlloc(&h, 1 << 20, 0));
    EXPECT(cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(cuMemFreeHost(h));
    CHECK(cuMemFree(p));
    CHECK(cuModuleUnload(mod));
}

/* A stream-ordered copy the tables prove valid returns at once, posted
 * over every transport; a failure the worker then meets (the mock's
 * broken stream fails its copies) is the next synchronization's. */
static void posted_copy_failure(CUdeviceptr d)
{
    CUstream broken;
    static uint8_t buf[4096];
    CHECK(cuStreamCreateWithPriority(&broken, 0, MOCK_BROKEN_PRIORITY));
    struct stats s0 = now();
    CHECK(cuMemcpyHtoDAsync(d, buf, sizeof(buf), broken));
    EXPECT_EQ(now().round_trips - s0.round_trips, 0);
    EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(cuCtxSynchronize());
    CHECK(cuStreamDestroy(broken));
}

/* Three launches of g, whose nodes copy in to the device and back out:
 * out holds in's bytes after each. */
static void launches(CUgraph g, uint8_t *in, uint8_t *out, unsigned seed)
{
    CUgraphExec x;
    CHECK(cuGraphInstantiate(&x, g, 0));
    for (unsigned round = 0; round < 3; round++) {
        pattern(in, SMALL, seed + round);
        memset(out, 0, SMALL);
        CHECK(cuGraphLaunch(x, NULL));
        CHECK(cuStreamSynchronize(NULL));
        EXPECT(same(out, SMALL, seed + round));
    }
    CHECK(cuGraphExecDestroy(x));
}

/* A graph's copy nodes from and to page-locked memory: over shm:// and
 * unix:// they reach the memory shared with the worker at each launch;
 * over tcp the bytes are moved around each launch (the layer's ghost.c).
 * Either way they report the program's pointers back. */
static void graph_copies(CUdeviceptr d, int shm)
{
    uint8_t *in, *out;
    CHECK(cuMemAllocHost((void **)&in, SMALL));
    CHECK(cuMemAllocHost((void **)&out, SMALL));
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUDA_MEMCPY3D up = {0}, down = {0}, got;
    up.srcMemoryType = CU_MEMORYTYPE_HOST;
    up.srcHost = in;
    up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    up.dstDevice = d;
    up.WidthInBytes = SMALL;
    up.Height = up.Depth = 1;
    down = up;
    down.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    down.srcDevice = d;
    down.srcHost = NULL;
    down.dstMemoryType = CU_MEMORYTYPE_HOST;
    down.dstHost = out;
    down.dstDevice = 0;
    CUgraphNode a, b;
    CHECK(cuGraphAddMemcpyNode(&a, g, NULL, 0, &up, NULL));
    CHECK(cuGraphAddMemcpyNode(&b, g, &a, 1, &down, NULL));
    CHECK(cuGraphMemcpyNodeGetParams(a, &got));
    EXPECT(got.srcMemoryType == CU_MEMORYTYPE_HOST && got.srcHost == in &&
           got.dstDevice == d);
    CHECK(cuGraphMemcpyNodeGetParams(b, &got));
    EXPECT(got.dstMemoryType == CU_MEMORYTYPE_HOST && got.dstHost == out);
    launches(g, in, out, 60);
    if (shm) {
        up.srcHost = in + 16;
        EXPECT(cuGraphAddMemcpyNode(&a, g, NULL, 0, &up, NULL) ==
               CUDA_ERROR_INVALID_VALUE);
    }
    /* Pageable memory, on any transport. */
    uint8_t *src = malloc(SMALL), *dst = malloc(SMALL);
    EXPECT(src != NULL && dst != NULL);
    CUgraph p;
    CHECK(cuGraphCreate(&p, 0));
    up.srcHost = src;
    down.dstHost = dst;
    CHECK(cuGraphAddMemcpyNode(&a, p, NULL, 0, &up, NULL));
    CHECK(cuGraphAddMemcpyNode(&b, p, &a, 1, &down, NULL));
    launches(p, src, dst, 70);
    CHECK(cuGraphDestroy(p));
    free(src);
    free(dst);
    CHECK(cuGraphDestroy(g));
    CHECK(cuMemFreeHost(in));
    CHECK(cuMemFreeHost(out));
}

/* The mock driver's log line: its batches of copies and the copies
 * they held so far (0 and 0 before the first). */
static void batches_now(unsigned long long *calls, unsigned long long *copies)
{
    char line[128];
    size_t size = sizeof(line);
    CUlogIterator it = 0;
    *calls = *copies = 0;
    CHECK(cuLogsDumpToMemory(&it, line, &size, 0));
    if (strcmp(line, "mock driver log\n") != 0)
        EXPECT(sscanf(line, "mock driver log: %llu batches, %llu copies",
                      calls, copies) == 2);
}

/* Posted copies of shared page-locked memory that wait in the
 * connection together (the worker held by a long fill, which the mock
 * makes at its launch) go to the driver in batches of at most 16, one
 * per run on a stream (remote batch.c): 32 copies in two.  A copy that
 * depends on one in the batch (the same destination, another source)
 * ends it, the same copy again does not.  The mock makes a batch's
 * copies last first, as the driver may: the bytes still land as they
 * would one copy after the other. */
static void batched(void)
{
    const size_t n = 64;
    CUmodule mod;
    CUfunction fill;
    CUdeviceptr big, d;
    CUstream st;
    uint8_t *h, back[64 * 64];
    uint32_t value = 5, words = 1;
    void *args[] = {&big, &value, &words};
    unsigned long long c0, n0, c1, n1;
    CHECK(cuModuleLoadData(&mod, MOCK_MODULE));
    CHECK(cuModuleGetFunction(&fill, mod, "fill"));
    CHECK(cuMemAlloc(&big, (size_t)256 << 20));
    CHECK(cuMemAlloc(&d, 64 * n));
    CHECK(cuMemHostAlloc((void **)&h, 64 * n, 0));
    CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    pattern(h, 64 * n, 9);
    /* The first launch waits for its reply; the next are posted. */
    CHECK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, st, args, NULL));
    CHECK(cuStreamSynchronize(st));
    batches_now(&c0, &n0);
    words = (uint32_t)(((size_t)256 << 20) / 4);
    CHECK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, st, args, NULL));
    for (int i = 0; i < 32; i++)
        CHECK(cuMemcpyHtoDAsync(d + i * n, h + i * n, n, st));
    CUdeviceptr x = d + 40 * n;
    CHECK(cuMemcpyHtoDAsync(x, h, n, st));
    CHECK(cuMemcpyHtoDAsync(x, h, n, st));
    CHECK(cuMemcpyHtoDAsync(x, h + n, n, st));
    CHECK(cuStreamSynchronize(st));
    batches_now(&c1, &n1);
    EXPECT(c1 - c0 == 3 && n1 - n0 == 32 + 2);
    CHECK(cuMemcpyDtoH(back, d, 32 * n));
    EXPECT(same(back, 32 * n, 9));
    CHECK(cuMemcpyDtoH(back, x, n));
    EXPECT(memcmp(back, h + n, n) == 0);
    CHECK(cuStreamDestroy(st));
    CHECK(cuMemFreeHost(h));
    CHECK(cuMemFree(d));
    CHECK(cuMemFree(big));
    CHECK(cuModuleUnload(mod));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr d;
    const char *uri = getenv("GVS_SERVER");
    /* shm:// and unix:// share memory with the worker, ivshmem:// in its
     * slot's data area. */
    int shm = uri != NULL && (strncmp(uri, "shm://", 6) == 0 ||
                              strncmp(uri, "unix://", 7) == 0 ||
                              strncmp(uri, "ivshmem://", 10) == 0);
    stats_init();
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    /* Where memory is not shared (tcp), a device that cannot map it. */
    int can_map = -1;
    for (int i = 0; i < 2; i++) {
        CHECK(cuDeviceGetAttribute(&can_map, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev));
        EXPECT(can_map == shm);
    }
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuMemAlloc(&d, PINNED));
    pinned(d, shm);
    pageable(d, shm);
    large(shm);
    rows_2d();
    graph_copies(d, shm);
    posted_failure();
    posted_copy_failure(d);
    if (shm)
        batched();
    CHECK(cuMemFree(d));
    CHECK(cuCtxDestroy(ctx));
    printf("ok\n");
    return 0;
}
