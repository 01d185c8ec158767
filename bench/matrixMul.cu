// Tiled single-precision matrix multiply after the CUDA SDK sample of the
// same name (block size 32, C = A x B with A 320x320 and B 640x320 in its
// terms), 300 launches; times upload, launches and the download.
#include "bench.h"
#include <cmath>
#include <vector>

#define TILE 32

__global__ void matrix_mul(float *c, const float *a, const float *b, int wa,
                           int wb)
{
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    float sum = 0;
    for (int k = 0; k < wa; k += TILE) {
        as[ty][tx] = a[(by * TILE + ty) * wa + k + tx];
        bs[ty][tx] = b[(k + ty) * wb + bx * TILE + tx];
        __syncthreads();
        for (int j = 0; j < TILE; j++)
            sum += as[ty][j] * bs[j][tx];
        __syncthreads();
    }
    c[(by * TILE + ty) * wb + bx * TILE + tx] = sum;
}

int main()
{
    const int ha = 10 * TILE, wa = 10 * TILE, wb = 20 * TILE, iters = 300;
    std::vector<float> a(ha * wa, 1.0f), b(wa * wb, 0.01f), c(ha * wb);
    CK(cudaFree(0));
    double t = now_s();
    float *da, *db, *dc;
    CK(cudaMalloc(&da, a.size() * sizeof(float)));
    CK(cudaMalloc(&db, b.size() * sizeof(float)));
    CK(cudaMalloc(&dc, c.size() * sizeof(float)));
    CK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    dim3 grid(wb / TILE, ha / TILE), block(TILE, TILE);
    for (int i = 0; i < iters; i++)
        matrix_mul<<<grid, block>>>(dc, da, db, wa, wb);
    CK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double elapsed = now_s() - t;
    for (size_t i = 0; i < c.size(); i++)
        if (std::fabs(c[i] - wa * 0.01f) > 1e-3f) {
            fprintf(stderr, "c[%zu] = %f\n", i, c[i]);
            return 1;
        }
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
    report("matrixMul", elapsed, "s");
    return 0;
}
