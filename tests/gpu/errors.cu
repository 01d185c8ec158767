// Error semantics: errors CUDA reports at once, last-error bookkeeping,
// sticky-free recovery, error strings, and use after cudaDeviceReset.
#include "check.h"

__global__ void fill(int *p, int v) { p[threadIdx.x] = v; }

int main()
{
    int *d;
    CHECK(cudaMalloc(&d, 256 * sizeof(int)));

    fill<<<1, 2048>>>(d, 1);
    cudaError_t e = cudaGetLastError();
    printf("too many threads: %s\n", cudaGetErrorName(e));
    printf("then: %s\n", cudaGetErrorName(cudaGetLastError()));

    fill<<<1, 64, 1u << 30>>>(d, 1);
    printf("too much shared memory: %s\n", cudaGetErrorName(cudaGetLastError()));

    e = cudaFree((void *)0x1234);
    printf("free bogus pointer: %s\n", cudaGetErrorName(e));
    printf("last: %s\n", cudaGetErrorName(cudaGetLastError()));

    int h[4];
    e = cudaMemcpy(h, d, sizeof(h), (cudaMemcpyKind)42);
    printf("bad copy kind: %s\n", cudaGetErrorName(e));
    cudaGetLastError();

    int *huge = (int *)&e;
    e = cudaMalloc(&huge, (size_t)1 << 60);
    printf("huge malloc: %s, pointer left %s\n", cudaGetErrorName(e),
           huge == nullptr ? "null" : "set");
    cudaGetLastError();

    for (int code : {0, 1, 2, 35, 100, 209, 700, 999, 12345})
        printf("%d: %s / %s\n", code, cudaGetErrorName((cudaError_t)code),
               cudaGetErrorString((cudaError_t)code));

    fill<<<1, 256>>>(d, 5);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaDeviceReset());

    int *d2;
    CHECK(cudaMalloc(&d2, 256 * sizeof(int)));
    fill<<<1, 256>>>(d2, 9);
    CHECK(cudaGetLastError());
    int out[256];
    CHECK(cudaMemcpy(out, d2, sizeof(out), cudaMemcpyDeviceToHost));
    EXPECT(out[0] == 9 && out[255] == 9);
    printf("after reset: %d\n", out[17]);
    CHECK(cudaFree(d2));
    return 0;
}
