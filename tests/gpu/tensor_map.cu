// Tensor maps (CUDA Driver API, "Tensor Map Object Management"): a tiled
// map over a 2D device array, loaded by a kernel with TMA
// (cp.async.bulk.tensor) where the GPU is sm_90 or newer, a tile inside
// the array and one that reaches past its edge (zeros there); the map's
// address replaced; the driver's refusals.  On an older GPU the same
// checksums are computed without TMA, so that the lines still compare.
#include "check.h"
#include "driver_api.h"

#include <cstring>

#define W 64
#define H 64
#define BOX 16

static const char *name(CUresult r)
{
    return driver_error_name(r);
}

// The tile at (x, y), x the innermost coordinate, into out (BOX x BOX).
__global__ void tma_tile(const __grid_constant__ CUtensorMap map, int x, int y,
                         float *out)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) float tile[BOX * BOX];
    __shared__ alignas(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned t = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b),
            "r"((unsigned)sizeof(tile))
            : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"
                     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                     "[%4];" ::"r"(t),
                     "l"(&map), "r"(x), "r"(y), "r"(b)
                     : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n"
                     " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                     " selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(b)
                     : "memory");
    for (int i = threadIdx.x; i < BOX * BOX; i += blockDim.x)
        out[i] = tile[i];
#else
    (void)map, (void)x, (void)y, (void)out;
#endif
}

// The sum of the tile at (x, y) of src (elements past the edge are 0).
static long expected(const float *src, int x, int y)
{
    long s = 0;
    for (int r = 0; r < BOX; r++)
        for (int c = 0; c < BOX; c++)
            if (y + r < H && x + c < W)
                s += (long)src[(y + r) * W + x + c];
    return s;
}

static long tile_sum(bool tma, const CUtensorMap &map, const float *host, int x,
                     int y, float *out)
{
    if (!tma)
        return expected(host, x, y);
    float t[BOX * BOX];
    tma_tile<<<1, 128>>>(map, x, y, out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(t, out, sizeof(t), cudaMemcpyDeviceToHost));
    long s = 0;
    for (int i = 0; i < BOX * BOX; i++)
        s += (long)t[i];
    return s;
}

static CUresult encode(CUtensorMap *m, void *addr, cuuint32_t rank,
                       cuuint64_t stride, cuuint32_t box)
{
    // Room for every rank the refusals name.
    const cuuint64_t dims[6] = {W, H, 1, 1, 1, 1};
    const cuuint64_t strides[5] = {stride, stride * H, stride * H, stride * H,
                                   stride * H};
    const cuuint32_t boxes[6] = {box, box, 1, 1, 1, 1};
    const cuuint32_t es[6] = {1, 1, 1, 1, 1, 1};
    return DRIVER(cuTensorMapEncodeTiled)(
        m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank, addr, dims, strides, boxes,
        es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

int main()
{
    static float a[W * H], b[W * H];
    for (int i = 0; i < W * H; i++) {
        a[i] = (float)i;
        b[i] = (float)(2 * i + 1);
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    if (driver_use_primary(0))
        return 1;
    float *da, *db, *out;
    CHECK(cudaMalloc(&da, sizeof(a)));
    CHECK(cudaMalloc(&db, sizeof(b)));
    CHECK(cudaMalloc(&out, BOX * BOX * sizeof(float)));
    CHECK(cudaMemcpy(da, a, sizeof(a), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, sizeof(b), cudaMemcpyHostToDevice));

    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    bool tma = prop.major >= 9 && built_for_clusters((const void *)tma_tile);

    CUtensorMap m, again;
    CUresult r = encode(&m, da, 2, W * sizeof(float), BOX);
    printf("encode tiled: %s\n", name(r));
    if (r != CUDA_SUCCESS)
        return 1;
    printf("encoding deterministic: %d\n",
           encode(&again, da, 2, W * sizeof(float), BOX) == CUDA_SUCCESS &&
               memcmp(&m, &again, sizeof(m)) == 0);
    printf("tile (16, 32): %ld\n", tile_sum(tma, m, a, 16, 32, out));
    printf("tile past the edge (56, 60): %ld\n",
           tile_sum(tma, m, a, 56, 60, out));
    printf("replace address: %s\n",
           name(DRIVER(cuTensorMapReplaceAddress)(&m, db)));
    printf("replaced tile (16, 32): %ld\n", tile_sum(tma, m, b, 16, 32, out));

    // The driver's refusals.
    printf("misaligned address: %s\n",
           name(encode(&m, (char *)da + 4, 2, W * sizeof(float), BOX)));
    printf("rank 0: %s\n", name(encode(&m, da, 0, W * sizeof(float), BOX)));
    printf("rank 6: %s\n", name(encode(&m, da, 6, W * sizeof(float), BOX)));
    printf("stride not a multiple of 16: %s\n",
           name(encode(&m, da, 2, W * sizeof(float) + 4, BOX)));
    printf("box of 0: %s\n", name(encode(&m, da, 2, W * sizeof(float), 0)));
    printf("box of 512: %s\n", name(encode(&m, da, 2, W * sizeof(float), 512)));
    printf("replace misaligned: %s\n",
           name(DRIVER(cuTensorMapReplaceAddress)(&m, (char *)db + 8)));

    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(out));
    printf("done\n");
    return 0;
}
