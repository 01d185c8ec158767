// NVIDIA's libraries through gvs: a cuBLAS SGEMM loop (4096^3, compute
// bound: the remoting should cost nothing) and cuFFT plan and execute
// times.  Each library carries NVIDIA's static runtime, so through gvs it
// reaches the GPU by the driver frontend whichever runtime the program
// itself was built with.
#include <cublas_v2.h>
#include <cufft.h>

#include <vector>

#include "bench.h"

#define CKB(call)                                                            \
    do {                                                                     \
        int s_ = (int)(call);                                                \
        if (s_ != 0) {                                                       \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__,    \
                    #call, s_);                                              \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static void sgemm()
{
    const int n = 4096, iters = 20;
    const size_t bytes = (size_t)n * n * sizeof(float);
    std::vector<float> h((size_t)n * n, 1.0f);
    float *a, *b, *c;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&c, bytes));
    CK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice));
    cublasHandle_t handle;
    CKB(cublasCreate(&handle));
    const float one = 1.0f, zero = 0.0f;
    // The first call loads the kernels and picks the algorithm.
    CKB(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b,
                    n, &zero, c, n));
    CK(cudaDeviceSynchronize());
    double t0 = now_s();
    for (int i = 0; i < iters; i++)
        CKB(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n,
                        b, n, &zero, c, n));
    CK(cudaDeviceSynchronize());
    double t = (now_s() - t0) / iters;
    float check = 0;
    CK(cudaMemcpy(&check, c, sizeof(check), cudaMemcpyDeviceToHost));
    if (check != (float)n) {
        fprintf(stderr, "sgemm: c[0] = %g, not %d\n", check, n);
        exit(1);
    }
    report("sgemm_4096_tflops", 2.0 * n * n * n / t / 1e12, "TFLOP/s");
    CKB(cublasDestroy(handle));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
}

static void fft()
{
    const int n = 1 << 20, iters = 100;
    cufftComplex *d;
    CK(cudaMalloc(&d, n * sizeof(cufftComplex)));
    CK(cudaMemset(d, 0, n * sizeof(cufftComplex)));
    cufftHandle warm, plan;
    // The first plan loads cuFFT's kernels: timed apart.
    double t0 = now_s();
    CKB(cufftPlan1d(&warm, n, CUFFT_C2C, 1));
    report("cufft_first_plan", now_s() - t0, "s");
    t0 = now_s();
    CKB(cufftPlan1d(&plan, n, CUFFT_C2C, 1));
    report("cufft_plan_1M", now_s() - t0, "s");
    CKB(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
    CK(cudaDeviceSynchronize());
    t0 = now_s();
    for (int i = 0; i < iters; i++)
        CKB(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
    CK(cudaDeviceSynchronize());
    report("cufft_exec_1M", (now_s() - t0) / iters * 1e6, "us");
    CKB(cufftDestroy(plan));
    CKB(cufftDestroy(warm));
    CK(cudaFree(d));
}

int main()
{
    sgemm();
    fft();
    return 0;
}
