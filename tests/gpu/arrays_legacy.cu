// The deprecated 1D array copies (cudaMemcpyToArray, FromArray,
// ArrayToArray and their Async forms), which cut at the array's rows,
// and the array queries: planes, memory requirements and sparse
// properties (CUDA Runtime API, "Memory Management").
#include "check.h"

#include <cstring>

int main()
{
    const int W = 64, H = 8;
    static float src[W * H], back[W * H];
    for (int i = 0; i < W * H; i++)
        src[i] = (float)i * 0.5f;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t a, b;
    CHECK(cudaMallocArray(&a, &desc, W, H));
    CHECK(cudaMallocArray(&b, &desc, W, H));

    // Offsets inside a row: the copy continues on the following rows.
    size_t row = W * sizeof(float);
    CHECK(cudaMemcpyToArray(a, 0, 0, src, sizeof(src), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyArrayToArray(b, 8, 1, a, 0, 0, row * 2,
                                 cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpyFromArray(back, b, 8, 1, row * 2,
                              cudaMemcpyDeviceToHost));
    printf("array to array: %d\n", memcmp(back, src, row * 2) == 0);

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    memset(back, 0, sizeof(back));
    CHECK(cudaMemcpyToArrayAsync(b, 4, 2, src + 100, row * 3 - 16,
                                 cudaMemcpyHostToDevice, s));
    CHECK(cudaMemcpyFromArrayAsync(back, b, 4, 2, row * 3 - 16,
                                   cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("async round trip: %d\n",
           memcmp(back, src + 100, row * 3 - 16) == 0);
    printf("past the end: %s\n",
           cudaGetErrorName(cudaMemcpyToArray(a, 0, H - 1, src, row * 2,
                                              cudaMemcpyHostToDevice)));
    (void)cudaGetLastError();

    // A plain float array has one plane and no sparse properties.
    cudaArray_t plane;
    printf("plane 0 of a plain array: %s\n",
           cudaGetErrorName(cudaArrayGetPlane(&plane, a, 0)));
    (void)cudaGetLastError();
    cudaArraySparseProperties sp;
    printf("sparse properties of a plain array: %s\n",
           cudaGetErrorName(cudaArrayGetSparseProperties(&sp, a)));
    (void)cudaGetLastError();

    // Deferred mapping arrays report their memory requirements.
    cudaArray_t deferred;
    cudaError_t e = cudaMallocArray(&deferred, &desc, W, H,
                                    cudaArrayDeferredMapping);
    printf("deferred mapping array: %s\n", cudaGetErrorName(e));
    if (e == cudaSuccess) {
        cudaArrayMemoryRequirements r;
        CHECK(cudaArrayGetMemoryRequirements(&r, deferred, 0));
        printf("requirements: size >= data %d, alignment power of two %d\n",
               r.size >= sizeof(src),
               r.alignment != 0 && (r.alignment & (r.alignment - 1)) == 0);
        CHECK(cudaFreeArray(deferred));
    }
    (void)cudaGetLastError();
    cudaMipmappedArray_t mm;
    e = cudaMallocMipmappedArray(&mm, &desc, make_cudaExtent(W, H, 0), 3,
                                 cudaArrayDeferredMapping);
    printf("deferred mapping mipmapped array: %s\n", cudaGetErrorName(e));
    if (e == cudaSuccess) {
        cudaArrayMemoryRequirements r;
        CHECK(cudaMipmappedArrayGetMemoryRequirements(&r, mm, 0));
        printf("mipmapped requirements: size >= data %d\n",
               r.size >= sizeof(src));
        printf("mipmapped sparse properties: %s\n",
               cudaGetErrorName(
                   cudaMipmappedArrayGetSparseProperties(&sp, mm)));
        CHECK(cudaFreeMipmappedArray(mm));
    }
    (void)cudaGetLastError();
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeArray(a));
    CHECK(cudaFreeArray(b));
    printf("done\n");
    return 0;
}
