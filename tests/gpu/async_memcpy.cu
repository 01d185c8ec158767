// cudaMemcpyAsync in every direction from pageable and page-locked
// memory, cudaMemsetAsync, stream order with kernels, memory information,
// prefetch of ordinary device memory, and the errors of misuse.
#include "check.h"
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

__device__ int sym[256];

__global__ void scale(uint8_t *v, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = (uint8_t)(v[i] * 3 + 1);
}

static void fill(uint8_t *v, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (uint8_t)(x >> 24);
    }
}

// Up, across, a kernel, down, all queued on one stream and synchronized
// once; the source is overwritten right after the H2D call, which CUDA
// allows for pageable memory.
static void round_trip(cudaStream_t s, size_t size, bool pinned,
                       cudaMemcpyKind up, cudaMemcpyKind down)
{
    uint8_t *src, *dst, *expect = new uint8_t[size];
    if (pinned) {
        CHECK(cudaMallocHost(&src, size));
        CHECK(cudaHostAlloc(&dst, size, cudaHostAllocDefault));
    } else {
        src = new uint8_t[size];
        dst = new uint8_t[size];
    }
    fill(src, size, (uint32_t)size);
    for (size_t i = 0; i < size; i++)
        expect[i] = (uint8_t)(src[i] * 3 + 1);
    memset(dst, 0, size);
    uint8_t *d1, *d2;
    CHECK(cudaMalloc(&d1, size));
    CHECK(cudaMalloc(&d2, size));
    CHECK(cudaMemcpyAsync(d1, src, size, up, s));
    if (!pinned)
        memset(src, 0xff, size);
    CHECK(cudaMemcpyAsync(d2, d1, size, cudaMemcpyDeviceToDevice, s));
    scale<<<(unsigned)((size + 255) / 256), 256, 0, s>>>(d2, size);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(dst, d2, size, down, s));
    CHECK(cudaStreamSynchronize(s));
    printf("%-8s %-7s %9zu bytes %s\n", pinned ? "pinned" : "pageable",
           up == cudaMemcpyDefault ? "default" : "typed", size,
           memcmp(dst, expect, size) == 0 ? "ok" : "WRONG");
    // A memset ordered after the copies.
    CHECK(cudaMemsetAsync(d2, 0x5a, size, s));
    CHECK(cudaMemcpyAsync(dst, d2, size, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    bool ok = true;
    for (size_t i = 0; i < size; i++)
        ok = ok && dst[i] == 0x5a;
    printf("memset %9zu bytes %s\n", size, ok ? "ok" : "WRONG");
    CHECK(cudaFree(d1));
    CHECK(cudaFree(d2));
    if (pinned) {
        CHECK(cudaFreeHost(src));
        CHECK(cudaFreeHost(dst));
    } else {
        delete[] src;
        delete[] dst;
    }
    delete[] expect;
}

// Many small copies from one pageable buffer, overwritten after each
// call, each to its own place: on one stream, alternating between two,
// and on a stream destroyed right after them.  Through gvs they share
// staging slots, the GPU's writes that free a slot held back by the
// worker (docs/remoting.md, "Shared host memory").
static void packed_runs()
{
    const int n = 3000;
    const size_t stride = ((size_t)16 << 10) + 256;
    std::vector<uint8_t> h(stride), back(stride * n), expect(stride * n, 0);
    uint8_t *d;
    CHECK(cudaMalloc(&d, stride * n));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    const char *modes[] = {"one stream", "two streams", "stream destroyed"};
    for (int mode = 0; mode < 3; mode++) {
        CHECK(cudaMemset(d, 0, stride * n));
        cudaStream_t gone = NULL;
        if (mode == 2)
            CHECK(cudaStreamCreate(&gone));
        for (int i = 0; i < n; i++) {
            size_t len = ((size_t)4096 << (i % 3)) + (size_t)(i % 5) * 8;
            fill(h.data(), len, (uint32_t)(i * 7 + mode));
            memcpy(&expect[stride * i], h.data(), len);
            cudaStream_t s = mode == 0 ? s1 : mode == 1 ? (i / 7 % 2 ? s2 : s1)
                                                       : gone;
            CHECK(cudaMemcpyAsync(d + stride * i, h.data(), len,
                                  cudaMemcpyHostToDevice, s));
            memset(h.data(), 0xee, len);
        }
        if (gone != NULL)
            CHECK(cudaStreamDestroy(gone));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(back.data(), d, stride * n, cudaMemcpyDeviceToHost));
        printf("packed, %s: %s\n", modes[mode],
               memcmp(back.data(), expect.data(), stride * n) == 0 ? "ok"
                                                                   : "WRONG");
        std::fill(expect.begin(), expect.end(), 0);
    }
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(d));
}

int main()
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    const size_t sizes[] = {1, 4097, (size_t)1 << 20, ((size_t)8 << 20) + 3,
                            (size_t)40 << 20};
    for (size_t size : sizes) {
        round_trip(s, size, false, cudaMemcpyHostToDevice,
                   cudaMemcpyDeviceToHost);
        round_trip(s, size, true, cudaMemcpyDefault, cudaMemcpyDefault);
    }
    round_trip(0, 4096, false, cudaMemcpyDefault, cudaMemcpyDefault);
    round_trip(cudaStreamPerThread, 4096, true, cudaMemcpyHostToDevice,
               cudaMemcpyDeviceToHost);
    packed_runs();

    char h[64] = "host to host";
    CHECK(cudaMemcpyAsync(h + 32, h, 13, cudaMemcpyHostToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("host to host: %s\n", h + 32);
    uint8_t *d;
    CHECK(cudaMalloc(&d, 4096));
    printf("zero bytes: %s\n", cudaGetErrorName(cudaMemcpyAsync(
                                   NULL, NULL, 0, cudaMemcpyHostToDevice, s)));
    printf("bad kind: %s\n", cudaGetErrorName(cudaMemcpyAsync(
                                 d, h, 16, (cudaMemcpyKind)9, s)));
    printf("host as device: %s\n", cudaGetErrorName(cudaMemcpyAsync(
                                       h, h + 16, 16, cudaMemcpyHostToDevice, s)));
    printf("memset host: %s\n",
           cudaGetErrorName(cudaMemsetAsync(h, 0, 16, s)));
    printf("memset past the end: %s\n",
           cudaGetErrorName(cudaMemsetAsync(d, 0, 8192, s)));
    printf("memset zero bytes: %s\n",
           cudaGetErrorName(cudaMemsetAsync(d, 0, 0, s)));
    cudaMemLocation loc = {cudaMemLocationTypeDevice, 0};
    printf("prefetch device memory: %s\n",
           cudaGetErrorName(cudaMemPrefetchAsync(d, 4096, loc, 0, s)));
    EXPECT(cudaGetLastError() != cudaSuccess);
    CHECK(cudaStreamSynchronize(s));

    int hs[256], back[256] = {0};
    for (int i = 0; i < 256; i++)
        hs[i] = i * i;
    CHECK(cudaMemcpyToSymbolAsync(sym, hs, sizeof(hs), 0,
                                  cudaMemcpyHostToDevice, s));
    CHECK(cudaMemcpyFromSymbolAsync(back, sym, 128 * sizeof(int),
                                    128 * sizeof(int), cudaMemcpyDefault, s));
    CHECK(cudaStreamSynchronize(s));
    printf("symbols on a stream: %s\n", back[0] == 128 * 128 && back[127] == 255 * 255
                                             ? "ok" : "WRONG");
    printf("symbol past its end: %s\n",
           cudaGetErrorName(cudaMemcpyToSymbolAsync(sym, hs, sizeof(hs), 4,
                                                    cudaMemcpyHostToDevice, s)));
    EXPECT(cudaGetLastError() != cudaSuccess);

    size_t free_bytes = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total));
    printf("memory info: %s\n",
           free_bytes > 0 && free_bytes <= total ? "ok" : "WRONG");
    CHECK(cudaMemGetInfo(NULL, &total));
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    printf("done\n");
    return 0;
}
