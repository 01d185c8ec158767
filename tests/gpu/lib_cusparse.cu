// cuSPARSE (NVIDIA's runtime inside the library): SpMV of the 1D
// Laplacian, whose product with a ramp is known exactly.
#include "check.h"
#include <cusparse.h>
#include <vector>

#define CHECK_SPARSE(call) CHECK_LIB(call, CUSPARSE_STATUS_SUCCESS, "cuSPARSE")

int main()
{
    const int n = 4096;
    std::vector<int> rows(n + 1), cols;
    std::vector<float> vals, x(n), y(n);
    for (int i = 0; i < n; i++) {
        rows[i] = (int)cols.size();
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) {
                cols.push_back(j);
                vals.push_back(i == j ? 2.0f : -1.0f);
            }
        x[i] = (float)i;
    }
    rows[n] = (int)cols.size();
    int nnz = (int)cols.size();
    int *drows, *dcols;
    float *dvals, *dx, *dy;
    CHECK(cudaMalloc(&drows, (n + 1) * sizeof(int)));
    CHECK(cudaMalloc(&dcols, nnz * sizeof(int)));
    CHECK(cudaMalloc(&dvals, nnz * sizeof(float)));
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMemcpy(drows, rows.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dcols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dvals, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cusparseHandle_t h;
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t X, Y;
    CHECK_SPARSE(cusparseCreate(&h));
    CHECK_SPARSE(cusparseCreateCsr(&A, n, n, nnz, drows, dcols, dvals,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CHECK_SPARSE(cusparseCreateDnVec(&X, n, dx, CUDA_R_32F));
    CHECK_SPARSE(cusparseCreateDnVec(&Y, n, dy, CUDA_R_32F));
    const float one = 1.0f, zero = 0.0f;
    size_t size = 0;
    void *buf;
    CHECK_SPARSE(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                         &one, A, X, &zero, Y, CUDA_R_32F,
                                         CUSPARSE_SPMV_ALG_DEFAULT, &size));
    CHECK(cudaMalloc(&buf, size + 1));
    CHECK_SPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X,
                              &zero, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                              buf));
    CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    // (L x)_i = 2i - (i-1) - (i+1) = 0 inside; -1 and n at the ends.
    EXPECT(y[0] == -1.0f && y[n - 1] == (float)n);
    for (int i = 1; i < n - 1; i++)
        EXPECT(y[i] == 0.0f);
    printf("spmv n=%d nnz=%d ok\n", n, nnz);
    cusparseDestroySpMat(A);
    cusparseDestroyDnVec(X);
    cusparseDestroyDnVec(Y);
    CHECK_SPARSE(cusparseDestroy(h));
    printf("lib_cusparse ok\n");
    return 0;
}
