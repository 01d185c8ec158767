// cuBLAS, which runs on NVIDIA's runtime inside the library and so
// reaches the GPU through the driver (gvs's libcuda.so.1): SGEMM, batched
// DGEMM and a cuBLASLt matmul, checked against the exact results of
// small-integer inputs.
#include "check.h"
#include <cublasLt.h>
#include <cublas_v2.h>
#include <vector>

#define CHECK_BLAS(call) CHECK_LIB(call, CUBLAS_STATUS_SUCCESS, "cuBLAS")

int main()
{
    const int n = 512, batch = 4;
    cublasHandle_t h;
    CHECK_BLAS(cublasCreate(&h));

    // C = A B with A(i,k) = (i + k) % 7, B(k,j) = (k * j) % 5: exact in
    // float, checked against the host's product.
    std::vector<float> a(n * n), b(n * n), c(n * n);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            a[i + k * n] = (float)((i + k) % 7);
            b[i + k * n] = (float)((i * k) % 5);
        }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, n * n * sizeof(float)));
    CHECK(cudaMalloc(&db, n * n * sizeof(float)));
    CHECK(cudaMalloc(&dc, n * n * sizeof(float)));
    CHECK(cudaMemcpy(da, a.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
    const float one = 1.0f, zero = 0.0f;
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n,
                           db, n, &zero, dc, n));
    CHECK(cudaMemcpy(c.data(), dc, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    double trace = 0;
    for (int j = 0; j < n; j += 37)
        for (int i = 0; i < n; i += 41) {
            double want = 0;
            for (int k = 0; k < n; k++)
                want += (double)a[i + k * n] * b[k + j * n];
            EXPECT(c[i + j * n] == (float)want);
        }
    for (int i = 0; i < n; i++)
        trace += c[i + i * n];
    printf("sgemm %dx%d trace=%.0f\n", n, n, trace);

    // Batched DGEMM of identity-scaled matrices: C_b = (b + 1) I * B_b.
    const int m = 64;
    std::vector<double> ha(batch * m * m, 0.0), hb(batch * m * m), hc(batch * m * m);
    for (int q = 0; q < batch; q++)
        for (int i = 0; i < m; i++) {
            ha[q * m * m + i + i * m] = q + 1;
            for (int j = 0; j < m; j++)
                hb[q * m * m + i + j * m] = i - j;
        }
    double *bufa, *bufb, *bufc;
    CHECK(cudaMalloc(&bufa, ha.size() * sizeof(double)));
    CHECK(cudaMalloc(&bufb, hb.size() * sizeof(double)));
    CHECK(cudaMalloc(&bufc, hc.size() * sizeof(double)));
    CHECK(cudaMemcpy(bufa, ha.data(), ha.size() * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(bufb, hb.data(), hb.size() * sizeof(double), cudaMemcpyHostToDevice));
    const double done = 1.0, dzero = 0.0;
    CHECK_BLAS(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m,
                                         &done, bufa, m, m * m, bufb, m, m * m,
                                         &dzero, bufc, m, m * m, batch));
    CHECK(cudaMemcpy(hc.data(), bufc, hc.size() * sizeof(double), cudaMemcpyDeviceToHost));
    for (int q = 0; q < batch; q++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++)
                EXPECT(hc[q * m * m + i + j * m] == (q + 1) * (double)(i - j));
    printf("dgemm batched %d x %dx%d ok\n", batch, m, m);

    // cuBLASLt: D = A B in float, the same product as the SGEMM's.
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK_BLAS(cublasLtCreate(&lt));
    CHECK_BLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, n, n));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, n, n, n));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, n, n));
    float *dd;
    CHECK(cudaMalloc(&dd, n * n * sizeof(float)));
    CHECK_BLAS(cublasLtMatmul(lt, op, &one, da, la, db, lb, &zero, dd, lc, dd,
                              lc, NULL, NULL, 0, 0));
    std::vector<float> d(n * n);
    CHECK(cudaMemcpy(d.data(), dd, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(d == c);
    printf("cublasLt matmul equals sgemm\n");
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(lt);
    CHECK_BLAS(cublasDestroy(h));
    printf("lib_cublas ok\n");
    return 0;
}
