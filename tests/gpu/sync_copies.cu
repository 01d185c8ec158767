// Synchronous copies of page-locked memory on the legacy stream: each
// returns with its bytes in place, also behind a kernel that holds the
// stream for 20 ms (through gvs, a copy posted and waited for by a word
// the GPU writes, past the time the caller polls for it), and a copy to
// the device has read the program's buffer when it returns.
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
    printf("done\n");
    return 0;
}
