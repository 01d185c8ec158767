// Managed memory touched by the host only between synchronizations:
// cudaMallocManaged buffers written by the host and by kernels in turn
// (device, stream and event synchronization), memsets and copies on
// managed memory, and a __managed__ variable.
#include "check.h"
#include <cstdint>
#include <vector>

__managed__ int counter = 5;
__managed__ float table[256];

__global__ void step(int *p, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * 2 + k;
    if (i == 0)
        atomicAdd(&counter, 1);
}

__global__ void sum_table(float *out)
{
    float s = 0;
    for (int i = 0; i < 256; i++)
        s += table[i];
    *out = s;
}

int main()
{
    const int n = 1 << 20;
    int *m;
    CHECK(cudaMallocManaged(&m, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        m[i] = i % 1000;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    long long check = 0;
    for (int round = 0; round < 3; round++) {
        step<<<(n + 255) / 256, 256>>>(m, n, round);
        if (round == 0) {
            CHECK(cudaDeviceSynchronize());
        } else if (round == 1) {
            step<<<(n + 255) / 256, 256, 0, s>>>(m, n, 10);
            CHECK(cudaStreamSynchronize(s));
        } else {
            CHECK(cudaEventRecord(ev, 0));
            CHECK(cudaEventSynchronize(ev));
        }
        long long sum = 0;
        for (int i = 0; i < n; i++)
            sum += m[i];
        printf("round %d: sum %lld, m[999] %d, counter %d\n", round, sum,
               m[999], counter);
        check += sum;
        // The host's turn: every eighth element changes.
        for (int i = 0; i < n; i += 8)
            m[i] = -m[i];
    }

    // A memset and a copy on managed memory, then the host reads it.
    CHECK(cudaMemset(m, 0, 4096 * sizeof(int)));
    int *d;
    CHECK(cudaMalloc(&d, 1000 * sizeof(int)));
    std::vector<int> h(1000);
    for (int i = 0; i < 1000; i++)
        h[i] = 7 * i;
    CHECK(cudaMemcpy(d, h.data(), 1000 * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(m + 5000, d, 1000 * sizeof(int), cudaMemcpyDefault));
    CHECK(cudaDeviceSynchronize());
    printf("after memset and copy: m[0] %d m[4095] %d m[4096] %d m[5999] %d\n",
           m[0], m[4095], m[4096], m[5999]);
    // Managed memory as a copy's source, written by the host just before.
    m[5000] = 123456;
    CHECK(cudaMemcpy(h.data(), m + 5000, 4 * sizeof(int), cudaMemcpyDefault));
    printf("copied from managed: %d %d\n", h[0], h[1]);

    // A __managed__ array written by the host and read by a kernel.
    for (int i = 0; i < 256; i++)
        table[i] = 0.5f * i;
    float *out;
    CHECK(cudaMallocManaged(&out, sizeof(float)));
    sum_table<<<1, 1>>>(out);
    CHECK(cudaDeviceSynchronize());
    printf("table sum %.1f, counter %d\n", *out, counter);
    counter = 100;
    step<<<1, 1>>>(m, 1, 0);
    CHECK(cudaDeviceSynchronize());
    printf("counter after host write and a kernel: %d\n", counter);

    CHECK(cudaFree(out));
    CHECK(cudaFree(d));
    CHECK(cudaFree(m));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    printf("total %lld\ndone\n", check);
    return 0;
}
