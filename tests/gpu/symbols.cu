// Device symbols: __device__ and __constant__ variables reached through
// cudaMemcpyToSymbol/FromSymbol, cudaGetSymbolAddress and GetSymbolSize.
#include "check.h"

__device__ int counter[8];
__constant__ float coeff[16];
__device__ double scalar_value;

__global__ void use_symbols(float *out)
{
    int i = threadIdx.x;
    out[i] = coeff[i] * (float)counter[i % 8] + (float)scalar_value;
    if (i < 8)
        counter[i] += 100;
}

int main()
{
    int init[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float c[16];
    for (int i = 0; i < 16; i++)
        c[i] = 0.5f * (float)i;
    double s = 3.0;
    CHECK(cudaMemcpyToSymbol(counter, init, sizeof(init)));
    CHECK(cudaMemcpyToSymbol(coeff, c, sizeof(c)));
    CHECK(cudaMemcpyToSymbol(scalar_value, &s, sizeof(s)));
    int two = 42;
    CHECK(cudaMemcpyToSymbol(counter, &two, sizeof(int), 2 * sizeof(int)));

    size_t size = 0;
    CHECK(cudaGetSymbolSize(&size, coeff));
    printf("coeff size %zu\n", size);
    CHECK(cudaGetSymbolSize(&size, counter));
    printf("counter size %zu\n", size);

    float *out;
    CHECK(cudaMalloc(&out, 16 * sizeof(float)));
    use_symbols<<<1, 16>>>(out);
    CHECK(cudaGetLastError());
    float h[16];
    CHECK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++)
        printf("out[%d] = %.2f\n", i, h[i]);

    int after[8];
    CHECK(cudaMemcpyFromSymbol(after, counter, sizeof(after)));
    for (int i = 0; i < 8; i++)
        printf("counter[%d] = %d\n", i, after[i]);
    int third = 0;
    CHECK(cudaMemcpyFromSymbol(&third, counter, sizeof(int), 3 * sizeof(int)));
    printf("counter[3] via offset = %d\n", third);

    void *addr = nullptr;
    CHECK(cudaGetSymbolAddress(&addr, counter));
    int via_addr[8];
    CHECK(cudaMemcpy(via_addr, addr, sizeof(via_addr), cudaMemcpyDeviceToHost));
    EXPECT(via_addr[5] == after[5]);
    printf("symbol address ok\n");
    CHECK(cudaFree(out));
    return 0;
}
