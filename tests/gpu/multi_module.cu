// Kernels and variables from three modules used together.
#include "check.h"
#include <vector>

void run_module_a(int *d, int n);
void run_module_b(int *d, int n);
void set_module_b_value(int v);

__global__ void negate(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = -v[i];
}

int main()
{
    const int n = 1000;
    std::vector<int> h(n);
    for (int i = 0; i < n; i++)
        h[i] = i;
    int *d;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    CHECK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    run_module_a(d, n);
    run_module_b(d, n);
    set_module_b_value(5);
    run_module_b(d, n);
    negate<<<(n + 255) / 256, 256>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        EXPECT(h[i] == -(i * 2 + 11 + 1000 + 5));
        sum += h[i];
    }
    printf("multi_module sum=%lld\n", sum);
    CHECK(cudaFree(d));
    return 0;
}
