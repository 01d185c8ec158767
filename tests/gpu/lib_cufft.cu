// cuFFT (NVIDIA's runtime inside the library, so the driver frontend):
// 1D and 2D complex transforms and a real-to-complex one of pure tones,
// whose spectra are known exactly up to rounding.
#include "check.h"
#include <cmath>
#include <cufft.h>
#include <vector>

#define CHECK_FFT(call) CHECK_LIB(call, CUFFT_SUCCESS, "cuFFT")

// The largest bin's index and its magnitude, rounded.
static void peak(const std::vector<cufftComplex> &v, size_t n, const char *what)
{
    size_t best = 0;
    for (size_t i = 0; i < n; i++)
        if (hypotf(v[i].x, v[i].y) > hypotf(v[best].x, v[best].y))
            best = i;
    printf("%s: peak at %zu, magnitude %.0f\n", what, best,
           hypotf(v[best].x, v[best].y));
}

int main()
{
    const int n = 4096, nx = 64, ny = 128;
    std::vector<cufftComplex> h(n);
    for (int i = 0; i < n; i++) {
        h[i].x = cosf(2.0f * (float)M_PI * 5 * i / n);
        h[i].y = 0;
    }
    cufftComplex *d;
    CHECK(cudaMalloc(&d, n * sizeof(cufftComplex)));
    CHECK(cudaMemcpy(d, h.data(), n * sizeof(cufftComplex), cudaMemcpyHostToDevice));
    cufftHandle p1;
    CHECK_FFT(cufftPlan1d(&p1, n, CUFFT_C2C, 1));
    CHECK_FFT(cufftExecC2C(p1, d, d, CUFFT_FORWARD));
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
    peak(h, n / 2, "1D C2C");

    std::vector<cufftComplex> g(nx * ny);
    for (int x = 0; x < nx; x++)
        for (int y = 0; y < ny; y++) {
            float ph = 2.0f * (float)M_PI * (3.0f * x / nx + 7.0f * y / ny);
            g[x * ny + y].x = cosf(ph);
            g[x * ny + y].y = sinf(ph);
        }
    cufftComplex *dg;
    CHECK(cudaMalloc(&dg, g.size() * sizeof(cufftComplex)));
    CHECK(cudaMemcpy(dg, g.data(), g.size() * sizeof(cufftComplex), cudaMemcpyHostToDevice));
    cufftHandle p2;
    CHECK_FFT(cufftPlan2d(&p2, nx, ny, CUFFT_C2C));
    CHECK_FFT(cufftExecC2C(p2, dg, dg, CUFFT_FORWARD));
    CHECK(cudaMemcpy(g.data(), dg, g.size() * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
    peak(g, g.size(), "2D C2C");

    std::vector<float> r(n);
    for (int i = 0; i < n; i++)
        r[i] = sinf(2.0f * (float)M_PI * 11 * i / n);
    float *dr;
    cufftComplex *dout;
    CHECK(cudaMalloc(&dr, n * sizeof(float)));
    CHECK(cudaMalloc(&dout, (n / 2 + 1) * sizeof(cufftComplex)));
    CHECK(cudaMemcpy(dr, r.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cufftHandle p3;
    CHECK_FFT(cufftPlan1d(&p3, n, CUFFT_R2C, 1));
    CHECK_FFT(cufftExecR2C(p3, dr, dout));
    std::vector<cufftComplex> o(n / 2 + 1);
    CHECK(cudaMemcpy(o.data(), dout, o.size() * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
    peak(o, o.size(), "1D R2C");
    CHECK_FFT(cufftDestroy(p1));
    CHECK_FFT(cufftDestroy(p2));
    CHECK_FFT(cufftDestroy(p3));
    printf("lib_cufft ok\n");
    return 0;
}
