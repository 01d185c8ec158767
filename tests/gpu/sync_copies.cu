// Synchronous copies of page-locked memory on the legacy stream: each
// returns with its bytes in place, also behind a kernel that holds the
// stream for 20 ms (through gvs, a copy answered by a word the worker
// stores, past the time the caller polls for it), and a copy to the
// device has read the program's buffer when it returns.  Then, with no
// kernel launched since a cudaDeviceSynchronize, or since a copy on the
// legacy stream behind the last kernel (through gvs, a copy the GPU's
// write alone answers), copies behind a blocking stream's tens of
// milliseconds of copies: done with it, bytes in place.
#include "check.h"

__global__ void slow_fill(int *v, int n, int x, long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        v[i] = x + i;
}

static int wrong(const int *v, int n, int x)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += v[i] != x + i;
    return bad;
}

int main()
{
    int khz;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    const size_t sizes[] = {(size_t)64 << 10, (size_t)1 << 20,
                            (size_t)16 << 20};
    for (size_t size : sizes) {
        int n = (int)(size / sizeof(int));
        int *h, *d;
        CHECK(cudaMallocHost(&h, size));
        CHECK(cudaMalloc(&d, size));
        slow_fill<<<1, 256>>>(d, n, 7, (long long)khz * 20);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(h, d, size, cudaMemcpyDeviceToHost));
        printf("%zu bytes from a slow kernel: %d wrong\n", size,
               wrong(h, n, 7));
        slow_fill<<<1, 256>>>(d, n, 9, (long long)khz * 20);
        for (int i = 0; i < n; i++)
            h[i] = 100 + i;
        CHECK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
        for (int i = 0; i < n; i++)
            h[i] = -1;
        CHECK(cudaMemcpy(h, d, size, cudaMemcpyDeviceToHost));
        printf("%zu bytes after a slow kernel: %d wrong\n", size,
               wrong(h, n, 100));
        int bad = 0;
        for (int round = 0; round < 200; round++) {
            for (int i = 0; i < n; i += 997)
                h[i] = round + i;
            CHECK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
            for (int i = 0; i < n; i += 997)
                h[i] = 0;
            CHECK(cudaMemcpy(h, d, size, cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i += 997)
                bad += h[i] != round + i;
        }
        printf("%zu bytes, 200 rounds both ways: %d wrong\n", size, bad);
        CHECK(cudaFree(d));
        CHECK(cudaFreeHost(h));
    }
    const size_t big = (size_t)256 << 20, small = (size_t)64 << 10;
    const int n = (int)(small / sizeof(int));
    char *a, *b;
    int *h, *d;
    cudaStream_t s;
    CHECK(cudaMalloc(&a, big));
    CHECK(cudaMalloc(&b, big));
    CHECK(cudaMallocHost(&h, small));
    CHECK(cudaMalloc(&d, small));
    CHECK(cudaStreamCreate(&s));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++)
            h[i] = 50 * round + i;
        CHECK(cudaMemcpy(d, h, small, cudaMemcpyHostToDevice));
        if (round == 1) {
            slow_fill<<<1, 256>>>(d, n, 50 * round, (long long)khz * 5);
            CHECK(cudaMemcpy(h, d, small, cudaMemcpyDeviceToHost));
        } else {
            CHECK(cudaDeviceSynchronize());
        }
        for (int i = 0; i < 100; i++)
            CHECK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice, s));
        for (int i = 0; i < n; i++)
            h[i] = -1;
        CHECK(cudaMemcpy(h, d, small, cudaMemcpyDeviceToHost));
        cudaError_t q = cudaStreamQuery(s);
        printf("behind a blocking stream's copies: %d wrong, stream %s\n",
               wrong(h, n, 50 * round),
               q == cudaSuccess ? "done" : cudaGetErrorString(q));
        for (int i = 0; i < 100; i++)
            CHECK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice, s));
        for (int i = 0; i < n; i++)
            h[i] = 7 * round + i;
        CHECK(cudaMemcpy(d, h, small, cudaMemcpyHostToDevice));
        q = cudaStreamQuery(s);
        for (int i = 0; i < n; i++)
            h[i] = -1;
        CHECK(cudaMemcpy(h, d, small, cudaMemcpyDeviceToHost));
        printf("to the device behind them: %d wrong, stream %s\n",
               wrong(h, n, 7 * round),
               q == cudaSuccess ? "done" : cudaGetErrorString(q));
    }
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    printf("done\n");
    return 0;
}
