// Batched dot products after the CUDA SDK sample of the same name: 256
// vector pairs of 4096 floats, one block per pair with a shared-memory
// reduction; times upload, 100 launches and the download.
#include "bench.h"
#include <cmath>
#include <vector>

#define VECTORS 256
#define ELEMENTS 4096
#define THREADS 256

__global__ void scalar_prod(float *out, const float *a, const float *b)
{
    __shared__ float acc[THREADS];
    for (int v = blockIdx.x; v < VECTORS; v += gridDim.x) {
        const float *x = a + (size_t)v * ELEMENTS, *y = b + (size_t)v * ELEMENTS;
        float sum = 0;
        for (int i = threadIdx.x; i < ELEMENTS; i += blockDim.x)
            sum += x[i] * y[i];
        acc[threadIdx.x] = sum;
        for (int stride = THREADS / 2; stride > 0; stride /= 2) {
            __syncthreads();
            if (threadIdx.x < stride)
                acc[threadIdx.x] += acc[threadIdx.x + stride];
        }
        if (threadIdx.x == 0)
            out[v] = acc[0];
        __syncthreads();
    }
}

int main()
{
    const size_t n = (size_t)VECTORS * ELEMENTS;
    std::vector<float> a(n), b(n), out(VECTORS);
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)(i % 7) * 0.5f;
        b[i] = (float)(i % 5) * 0.25f;
    }
    CK(cudaFree(0));
    double t = now_s();
    float *da, *db, *dout;
    CK(cudaMalloc(&da, n * sizeof(float)));
    CK(cudaMalloc(&db, n * sizeof(float)));
    CK(cudaMalloc(&dout, VECTORS * sizeof(float)));
    CK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    for (int i = 0; i < 100; i++)
        scalar_prod<<<128, THREADS>>>(dout, da, db);
    CK(cudaMemcpy(out.data(), dout, VECTORS * sizeof(float), cudaMemcpyDeviceToHost));
    double elapsed = now_s() - t;
    for (int v = 0; v < VECTORS; v++) {
        double ref = 0;
        for (int i = 0; i < ELEMENTS; i++)
            ref += (double)a[(size_t)v * ELEMENTS + i] * b[(size_t)v * ELEMENTS + i];
        if (std::fabs(ref - out[v]) > 1e-3 * std::fabs(ref) + 1e-3) {
            fprintf(stderr, "vector %d: %f, expected %f\n", v, out[v], ref);
            return 1;
        }
    }
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dout));
    report("scalarProd", elapsed, "s");
    return 0;
}
