// cudart.mock_e2e: an unmodified -cudart shared program against our
// libcudart.so.13 and a gvsd whose cudart plugin runs on mock_cudart.c.
// Checks results, content and round-trip counts of the first slice.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_check.h"

struct S {
    char a;
    double b;
    int c[3];
};

__device__ int dv[4];
__constant__ float cv[8];
__global__ void fill(int *p, int n, double d, char c) {}
__global__ void take_struct(S s, int *out) {}
__global__ void add_dv(int *p) {}
__global__ void empty() {}
__global__ void aheads_seen(unsigned long long *) {}

static const size_t CHUNK = (size_t)8 << 20;

static void copy_round(size_t size)
{
    unsigned char *h = (unsigned char *)malloc(size), *back = (unsigned char *)malloc(size);
    void *d;
    CHECK(h != NULL && back != NULL);
    for (size_t i = 0; i < size; i++)
        h[i] = (unsigned char)(i * 131 + size);
    memset(back, 0, size);
    OK(cudaMalloc(&d, size));
    struct stats s0 = now();
    OK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
    struct stats s1 = now();
    CHECK(s1.round_trips - s0.round_trips == 1);
    CHECK(s1.posts - s0.posts == pieces(size) - 1);
    OK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
    struct stats s2 = now();
    CHECK_EQ(s2.round_trips - s1.round_trips, pieces(size));
    CHECK(memcmp(h, back, size) == 0);
    memset(back, 0, size);
    OK(cudaMemcpy(back, d, size, cudaMemcpyDefault));
    CHECK(memcmp(h, back, size) == 0);
    OK(cudaFree(d));
    free(h);
    free(back);
}

// A copy from the device in pieces: while one piece's reply is sent, the
// worker reads the next into its other staging half (synchronous copies
// otherwise never copy asynchronously into page-locked memory), the
// last one cut at the allocation's end, and the bytes arrive in order.
static void reads_ahead()
{
    const size_t size = ((size_t)8 << 20) + ((size_t)512 << 10);
    unsigned char *h = (unsigned char *)malloc(size);
    unsigned char *back = (unsigned char *)calloc(size, 1);
    unsigned long long *word;
    void *d;
    CHECK(h != NULL && back != NULL);
    for (size_t i = 0; i < size; i++)
        h[i] = (unsigned char)(i * 7 + i / 4093);
    OK(cudaMalloc(&d, size));
    OK(cudaMalloc(&word, sizeof(*word)));
    OK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
    unsigned long long a0 = mock_counter(aheads_seen, word);
    OK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
    unsigned long long read = mock_counter(aheads_seen, word) - a0;
    CHECK(memcmp(h, back, size) == 0);
    printf("pieces read ahead: %llu of 8\n", read);
    CHECK(read >= 1 && read <= 8);
    OK(cudaFree(word));
    OK(cudaFree(d));
    free(h);
    free(back);
}

int main()
{
    stats_init();
    // Registration ran before main and sent nothing.
    CHECK(now().round_trips == 0 && now().posts == 0);

    int n = 0, v = 0;
    OK(cudaGetDeviceCount(&n));
    CHECK(n == 2);
    uint64_t rt = now().round_trips;
    OK(cudaGetDeviceCount(&n));
    CHECK(now().round_trips == rt);

    cudaDeviceProp prop;
    OK(cudaGetDeviceProperties(&prop, 1));
    CHECK(strcmp(prop.name, "gvs mock 1") == 0 && prop.major == 9);
    OK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0));
    CHECK(v == 1024);
    // Asked once, then answered locally; a failure is asked every time.
    rt = now().round_trips;
    OK(cudaGetDeviceProperties(&prop, 1));
    OK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0));
    CHECK(now().round_trips == rt && v == 1024 && prop.major == 9);
    CHECK(cudaGetDeviceProperties(&prop, 7) == cudaErrorInvalidDevice);
    CHECK(cudaGetDeviceProperties(&prop, 7) == cudaErrorInvalidDevice);
    CHECK(now().round_trips == rt + 2);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);

    // The device is per thread: the backend keeps one per lane, moved by
    // a SET_DEVICE posted only when the thread's device changes.
    CHECK(cudaSetDevice(2) == cudaErrorInvalidDevice);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    struct stats s0 = now();
    OK(cudaSetDevice(1));
    OK(cudaGetDevice(&v));
    CHECK(v == 1);
    CHECK(now().round_trips == s0.round_trips && now().posts == s0.posts + 1);
    OK(cudaSetDevice(1));
    CHECK(now().posts == s0.posts + 1);
    OK(cudaDeviceSynchronize());
    OK(cudaDriverGetVersion(&v));
    CHECK(v == 13001);
    CHECK(now().posts == s0.posts + 1);
    OK(cudaSetDevice(0));
    OK(cudaDeviceSynchronize());
    OK(cudaDeviceSynchronize());
    OK(cudaDriverGetVersion(&v));
    CHECK(v == 13000);
    CHECK(now().posts == s0.posts + 2);

    // Bulk copies at and around the chunk boundaries.
    size_t sizes[] = {1, 7, 4096, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 1,
                      (size_t)256 << 20};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        copy_round(sizes[i]);

    int *d, *d2, h[256];
    OK(cudaMalloc(&d, sizeof(h)));
    OK(cudaMalloc(&d2, sizeof(h)));
    OK(cudaMemset(d, 0x01, sizeof(h)));
    OK(cudaMemcpy(d2, d, sizeof(h), cudaMemcpyDefault));
    OK(cudaMemcpy(h, d2, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 0x01010101 && h[255] == 0x01010101);
    int hh[4] = {1, 2, 3, 4}, hc[4];
    OK(cudaMemcpy(hc, hh, sizeof(hh), cudaMemcpyDefault));
    CHECK(hc[3] == 4);
    CHECK(cudaMemcpy(h, d, 4, (cudaMemcpyKind)7) == cudaErrorInvalidMemcpyDirection);
    CHECK(cudaMemcpy(h, hh, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    // The backend's check of a device range: the end of an allocation is
    // in it, a byte past it is not (the mock's allocations have gaps).
    OK(cudaMemcpy(d + 252, hh, sizeof(hh), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d + 253, hh, sizeof(hh), cudaMemcpyHostToDevice) ==
          cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);

    // Kernels: the first launch uploads the module (one round trip) and
    // waits for the backend to accept its configuration (one more); a
    // launch within an accepted configuration is posted, no round trip.
    s0 = now();
    fill<<<2, 64>>>(d, 100, 1.0, 2);
    OK(cudaGetLastError());
    CHECK(now().round_trips == s0.round_trips + 2);
    fill<<<2, 64>>>(d, 100, 1.0, 2);
    OK(cudaGetLastError());
    fill<<<3, 32>>>(d, 100, 1.0, 2);
    OK(cudaGetLastError());
    CHECK(now().round_trips == s0.round_trips + 2);
    CHECK(now().posts == s0.posts + 2);

    // A posted launch that fails (its stream is gone) leaves no error
    // behind at once; the lane's next synchronizing call answers it, once.
    cudaStream_t gone;
    OK(cudaStreamCreate(&gone));
    fill<<<2, 64, 0, gone>>>(d, 100, 1.0, 2);
    OK(cudaStreamDestroy(gone));
    s0 = now();
    fill<<<2, 64, 0, gone>>>(d, 100, 1.0, 2);
    OK(cudaGetLastError());
    CHECK(now().round_trips == s0.round_trips && now().posts == s0.posts + 1);
    CHECK(cudaDeviceSynchronize() == cudaErrorInvalidResourceHandle);
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 3 && h[99] == 102 && h[100] == 0x01010101);

    S s = {5, 2.0, {1, 2, 3}};
    take_struct<<<1, 1>>>(s, d2);
    OK(cudaGetLastError());
    OK(cudaMemcpy(h, d2, 4, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 13);

    void *args[] = {&d2};
    OK(cudaLaunchKernel((const void *)add_dv, dim3(1), dim3(1), args, 0, 0));
    OK(cudaLaunchKernel((const void *)empty, dim3(1), dim3(1), NULL, 0, 0));
    // What CUDA 13 answers for a function that is no kernel.
    CHECK(cudaLaunchKernel((const void *)main, dim3(1), dim3(1), NULL, 0, 0) ==
          cudaErrorInvalidResourceHandle);
    fill<<<1, 2048>>>(d, 1, 0.0, 0);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(strcmp(cudaGetErrorString(cudaErrorInvalidConfiguration),
                 "invalid configuration argument") == 0);

    // Symbols.
    int hv[4] = {10, 20, 30, 40}, got[4];
    float hf[8] = {0, 100.0f};
    OK(cudaMemcpyToSymbol(dv, hv, sizeof(hv)));
    OK(cudaMemcpyToSymbol(cv, hf, sizeof(hf)));
    OK(cudaMemcpyFromSymbol(got, dv, 8, 8));
    CHECK(got[0] == 30 && got[1] == 40);
    CHECK(cudaMemcpyToSymbol(dv, hv, 16, 4) == cudaErrorInvalidValue);
    CHECK(cudaMemcpyToSymbol(hv, hv, 4) == cudaErrorInvalidSymbol);
    CHECK(cudaGetLastError() == cudaErrorInvalidSymbol);
    size_t size = 0;
    void *addr = NULL;
    OK(cudaGetSymbolSize(&size, dv));
    CHECK(size == 16);
    OK(cudaGetSymbolAddress(&addr, dv));
    OK(cudaMemcpy(got, addr, 16, cudaMemcpyDefault));
    CHECK(got[3] == 40);
    OK(cudaMemcpy(h, d2, 4, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 13);
    add_dv<<<1, 1>>>(d2);
    OK(cudaMemcpy(h, d2, 4, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 13 + 10 + 100);

    OK(cudaFree(d));
    OK(cudaFree(d2));
    OK(cudaFree(NULL));
    OK(cudaRuntimeGetVersion(&v));
    CHECK(v == 13000);
    OK(cudaDeviceReset());
    CHECK(cudaGetLastError() == cudaSuccess);
    // The reset freed the page-locked memory made in the device's
    // context, the worker's staging too: copies after it make their own.
    copy_round(3 * CHUNK + 1);
    reads_ahead();
    printf("ok\n");
    return 0;
}
