// Synchronous copies of page-locked memory on the legacy stream: each
// returns with its bytes in place, also behind a kernel that holds the
// stream for 20 ms (through gvs, a copy answered by a word the worker
// stores, past the time the caller polls for it), and a copy to the
// device has read the program's buffer when it returns.  Then, with no
// kernel launched since a cudaDeviceSynchronize, or since a copy on the
// legacy stream behind the last kernel (through gvs, a copy the GPU's
// write alone answers), copies behind a blocking stream's tens of
// milliseconds of copies: done with it, bytes in place.
//
// Then from pageable memory to the device: CUDA's return once the
// stream's earlier work is done and the bytes are staged, the DMA perhaps
// still to come (through gvs, a copy posted behind a word the stream
// passes first, staging.c): so when one returns, a kernel launched
// before it has ended (an event recorded behind it has happened) and a
// blocking stream's copies before it are done; the program may overwrite
// its buffer at once; and what reads the device after it in stream order
// finds its bytes.
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

__global__ void sum_of(const int *v, int n, long long *out)
{
    long long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *out = s;
}

static void fill(int *h, int n, int x)
{
    for (int i = 0; i < n; i++)
        h[i] = x + i;
}

static void pageable(int khz, char *a, char *b, size_t big, cudaStream_t s)
{
    cudaEvent_t after;
    CHECK(cudaEventCreate(&after));
    const size_t sizes[] = {(size_t)8 << 10, (size_t)40 << 10,
                            (size_t)256 << 10, (size_t)3 << 20};
    for (size_t size : sizes) {
        int n = (int)(size / sizeof(int));
        int *h = (int *)malloc(size), *back = (int *)malloc(size), *d, *x;
        long long *dsum, sum;
        EXPECT(h != NULL && back != NULL);
        CHECK(cudaMalloc(&d, size));
        CHECK(cudaMalloc(&x, size));
        CHECK(cudaMalloc(&dsum, sizeof(long long)));
        slow_fill<<<1, 256>>>(x, n, 0, (long long)khz * 20);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(after, 0));
        fill(h, n, 3);
        CHECK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
        cudaError_t seen = cudaEventQuery(after);
        fill(h, n, -50);
        CHECK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
        printf("pageable %zu bytes behind a slow kernel: kernel %s at the "
               "return, %d wrong\n",
               size, seen == cudaSuccess ? "done" : cudaGetErrorString(seen),
               wrong(back, n, 3));
        for (int i = 0; i < 100; i++)
            CHECK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice, s));
        fill(h, n, 11);
        CHECK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
        cudaError_t q = cudaStreamQuery(s);
        fill(h, n, -60);
        CHECK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
        printf("pageable %zu bytes behind a blocking stream's copies: stream "
               "%s, %d wrong\n",
               size, q == cudaSuccess ? "done" : cudaGetErrorString(q),
               wrong(back, n, 11));
        int bad = 0;
        for (int round = 0; round < 200; round++) {
            fill(h, n, round);
            CHECK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
            fill(h, n, -round);
            if (round % 10 == 9) {
                sum_of<<<1, 1>>>(d, n, dsum);
                CHECK(cudaMemcpy(&sum, dsum, sizeof(sum),
                                 cudaMemcpyDeviceToHost));
                bad += sum != (long long)n * round + (long long)n * (n - 1) / 2;
            }
        }
        CHECK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
        printf("pageable %zu bytes, 200 copies back to back: %d wrong sums, "
               "last %d wrong\n",
               size, bad, wrong(back, n, 199));
        CHECK(cudaFree(dsum));
        CHECK(cudaFree(x));
        CHECK(cudaFree(d));
        free(back);
        free(h);
    }
    CHECK(cudaEventDestroy(after));
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
    pageable(khz, a, b, big, s);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    printf("done\n");
    return 0;
}
