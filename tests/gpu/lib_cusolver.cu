// cuSOLVER (NVIDIA's runtime inside the library): a dense LU solve of a
// diagonally dominant system, checked by its residual on the host.
#include "check.h"
#include <cmath>
#include <cusolverDn.h>
#include <vector>

#define CHECK_SOLVER(call) CHECK_LIB(call, CUSOLVER_STATUS_SUCCESS, "cuSOLVER")

int main()
{
    const int n = 256;
    std::vector<double> a(n * n), b(n, 1.0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i + j * n] = i == j ? n : 1.0 / (1 + i + j);
    double *da, *db, *work;
    int *piv, *info, lwork = 0, hinfo = -1;
    CHECK(cudaMalloc(&da, n * n * sizeof(double)));
    CHECK(cudaMalloc(&db, n * sizeof(double)));
    CHECK(cudaMalloc(&piv, n * sizeof(int)));
    CHECK(cudaMalloc(&info, sizeof(int)));
    CHECK(cudaMemcpy(da, a.data(), n * n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    cusolverDnHandle_t h;
    CHECK_SOLVER(cusolverDnCreate(&h));
    CHECK_SOLVER(cusolverDnDgetrf_bufferSize(h, n, n, da, n, &lwork));
    CHECK(cudaMalloc(&work, lwork * sizeof(double)));
    CHECK_SOLVER(cusolverDnDgetrf(h, n, n, da, n, work, piv, info));
    CHECK(cudaMemcpy(&hinfo, info, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(hinfo == 0);
    CHECK_SOLVER(cusolverDnDgetrs(h, CUBLAS_OP_N, n, 1, da, n, piv, db, n, info));
    std::vector<double> x(n);
    CHECK(cudaMemcpy(x.data(), db, n * sizeof(double), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double r = -b[i];
        for (int j = 0; j < n; j++)
            r += a[i + j * n] * x[j];
        worst = fmax(worst, fabs(r));
    }
    EXPECT(worst < 1e-10);
    printf("getrf/getrs n=%d: residual below 1e-10\n", n);
    CHECK_SOLVER(cusolverDnDestroy(h));
    printf("lib_cusolver ok\n");
    return 0;
}
