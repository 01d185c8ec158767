// cuRAND's host generators (NVIDIA's runtime inside the library): the
// same seed gives the same numbers as natively, so the sums printed must
// match the native run's exactly.
#include "check.h"
#include <curand.h>
#include <vector>

#define CHECK_RAND(call) CHECK_LIB(call, CURAND_STATUS_SUCCESS, "cuRAND")

static void run(curandRngType_t type, const char *name)
{
    const int n = 1 << 20;
    float *d;
    curandGenerator_t g;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK_RAND(curandCreateGenerator(&g, type));
    CHECK_RAND(curandSetPseudoRandomGeneratorSeed(g, 1234));
    CHECK_RAND(curandGenerateUniform(g, d, n));
    std::vector<float> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (float v : h) {
        EXPECT(v > 0.0f && v <= 1.0f);
        sum += v;
    }
    printf("%s: mean %.4f, sum %.6f\n", name, sum / n, sum);
    CHECK_RAND(curandDestroyGenerator(g));
    CHECK(cudaFree(d));
}

int main()
{
    run(CURAND_RNG_PSEUDO_XORWOW, "xorwow");
    run(CURAND_RNG_PSEUDO_PHILOX4_32_10, "philox");
    run(CURAND_RNG_PSEUDO_MRG32K3A, "mrg32k3a");
    printf("lib_curand ok\n");
    return 0;
}
