// Page-locked memory the GPU reaches (shm:// only: the client's memory is
// shared with the backend, which pins it).  Kernels read and write it
// through cudaHostGetDevicePointer's pointer and through the host pointer
// itself (unified addressing); stream-ordered copies into it complete
// asynchronously and are seen after the stream's synchronization.
#include "../check.h"
#include <cstring>

__global__ void scale(const int *in, int *out, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * k;
}

static long sum(const int *p, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

int main()
{
    const int n = 1 << 20;
    int *in, *out, *din, *dout;
    CHECK(cudaHostAlloc((void **)&in, n * sizeof(int), cudaHostAllocMapped));
    CHECK(cudaMallocHost((void **)&out, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        in[i] = i % 1000;
    memset(out, 0, n * sizeof(int));
    CHECK(cudaHostGetDevicePointer((void **)&din, in, 0));
    CHECK(cudaHostGetDevicePointer((void **)&dout, out, 0));
    scale<<<(n + 255) / 256, 256>>>(din, dout, n, 3);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("through device pointers: %ld\n", sum(out, n));

    scale<<<(n + 255) / 256, 256>>>(in, out, n, 5);
    CHECK(cudaDeviceSynchronize());
    printf("through host pointers: %ld\n", sum(out, n));

    // Copies on a stream into page-locked memory, seen once it is done.
    int *d;
    cudaStream_t s;
    CHECK(cudaMalloc((void **)&d, n * sizeof(int)));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemcpyAsync(d, in, n * sizeof(int), cudaMemcpyHostToDevice, s));
    scale<<<(n + 255) / 256, 256, 0, s>>>(d, d, n, 7);
    CHECK(cudaMemcpyAsync(out, d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("stream-ordered copies: %ld\n", sum(out, n));

    // Copies of the middle of a region, both ways.
    CHECK(cudaMemcpy(d, in + 10, 1000 * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(out + 20, d, 1000 * sizeof(int), cudaMemcpyDeviceToHost));
    printf("middle: %d %d %ld\n", out[20], out[1019], sum(out + 20, 1000));

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(in));
    CHECK(cudaFreeHost(out));
    printf("ok\n");
    return 0;
}
