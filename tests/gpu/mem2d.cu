// Pitched memory and 2D copies and memsets: strided host buffers, device
// pitches, column offsets, rows wider than a transfer chunk, async copies
// on a stream, and the pitch checks.
#include "check.h"
#include <cstdint>
#include <cstring>
#include <vector>

__global__ void scale2d(float *p, size_t pitch, int w, int h, float a)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float *row = (float *)((char *)p + y * pitch);
        row[x] = row[x] * a + (float)y;
    }
}

static uint32_t digest(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

// Host rows of w bytes at a pitch of hp, with the gap bytes marked: a
// copy into such a buffer must leave them alone.
static void round_trip(size_t w, size_t h, size_t hp, const char *label)
{
    std::vector<uint8_t> src(hp * h), dst(hp * h, 0xee);
    for (size_t i = 0; i < src.size(); i++)
        src[i] = (uint8_t)(i * 7 + w);
    void *d;
    size_t pitch;
    CHECK(cudaMallocPitch(&d, &pitch, w, h));
    EXPECT(pitch >= w);
    CHECK(cudaMemcpy2D(d, pitch, src.data(), hp, w, h, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy2D(dst.data(), hp, d, pitch, w, h, cudaMemcpyDefault));
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < hp; x++)
            EXPECT(dst[y * hp + x] == (x < w ? src[y * hp + x] : 0xee));
    CHECK(cudaFree(d));
    printf("%-10s %8zu x %5zu host pitch %8zu ok %08x\n", label, w, h, hp,
           digest(dst.data(), dst.size()));
}

int main()
{
    round_trip(1, 1, 1, "tiny");
    round_trip(333, 77, 400, "odd");
    round_trip(3000, 5000, 3001, "chunked");
    round_trip((9u << 20) + 3, 3, (9u << 20) + 64, "wide rows");

    // A kernel over pitched floats between 2D copies.
    const int w = 1000, h = 300;
    std::vector<float> hs((w + 24) * h), hd(w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            hs[y * (w + 24) + x] = (float)(x % 97) * 0.5f;
    float *dp;
    size_t pitch;
    CHECK(cudaMallocPitch((void **)&dp, &pitch, w * sizeof(float), h));
    printf("pitch aligned: %s\n", pitch % 128 == 0 ? "yes" : "no");
    CHECK(cudaMemcpy2D(dp, pitch, hs.data(), (w + 24) * sizeof(float),
                       w * sizeof(float), h, cudaMemcpyHostToDevice));
    scale2d<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(dp, pitch, w, h,
                                                              3.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2D(hd.data(), w * sizeof(float), dp, pitch,
                       w * sizeof(float), h, cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            EXPECT(hd[y * w + x] == (float)(x % 97) * 1.5f + (float)y);
    printf("kernel on pitched rows ok\n");

    // Memset of a sub-rectangle, 2D device-to-device at column offsets,
    // and async copies on a stream.
    float *dq;
    size_t qpitch;
    CHECK(cudaMallocPitch((void **)&dq, &qpitch, w * sizeof(float), h));
    CHECK(cudaMemset2D(dq, qpitch, 0, w * sizeof(float), h));
    CHECK(cudaMemset2D((char *)dq + qpitch * 10 + 40, qpitch, 0xff, 80, 20));
    CHECK(cudaMemcpy2D((char *)dq + 400, qpitch, (char *)dp + 800, pitch, 400,
                       h / 2, cudaMemcpyDeviceToDevice));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    std::vector<float> out(w * h, -1.0f);
    CHECK(cudaMemcpy2DAsync(out.data(), w * sizeof(float), dq, qpitch,
                            w * sizeof(float), h, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    int ones = 0, copied = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float v = out[y * w + x];
            uint32_t bits;
            memcpy(&bits, &v, 4);
            if (bits == 0xffffffffu)
                ones++;
            else if (x >= 100 && x < 200 && y < h / 2)
                copied += v == hd[y * w + x + 100];
            else
                EXPECT(v == 0.0f);
        }
    printf("memset2d cells %d, copied cells %d\n", ones, copied);
    CHECK(cudaMemcpy2DAsync(dq, qpitch, hs.data(), (w + 24) * sizeof(float),
                            w * sizeof(float), h, cudaMemcpyHostToDevice, s));
    CHECK(cudaMemset2DAsync(dq, qpitch, 0, 4, h, s));
    CHECK(cudaMemcpy2DAsync(out.data(), w * sizeof(float), dq, qpitch,
                            w * sizeof(float), h, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(out[0] == 0.0f && out[1] == hs[1] && out[w * h - 1] == hs[(w + 24) * (h - 1) + w - 1]);
    printf("async 2d ok\n");

    // Pitches narrower than the rows are refused.
    cudaError_t e = cudaMemcpy2D(out.data(), 8, dq, qpitch, 16, 2,
                                 cudaMemcpyDeviceToHost);
    printf("narrow host pitch: %s\n", cudaGetErrorName(e));
    e = cudaMemset2D(dq, 4, 0, 16, 2);
    printf("narrow device pitch: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(dp));
    CHECK(cudaFree(dq));
    printf("done\n");
    return 0;
}
