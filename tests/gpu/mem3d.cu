// 3D pitched memory: cudaMalloc3D, cudaMemset3D(Async), cudaMemcpy3D(Async)
// of sub-boxes at offsets between host volumes and device volumes, and a
// kernel over the volume.
#include "check.h"
#include <cstdint>
#include <vector>

__global__ void add_index(cudaPitchedPtr p, int w, int h, int d)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    int z = blockIdx.z;
    if (x < w && y < h && z < d) {
        int *row = (int *)((char *)p.ptr + (z * p.ysize + y) * p.pitch);
        row[x] += x + 100 * y + 10000 * z;
    }
}

int main()
{
    const int W = 70, H = 33, D = 9;
    cudaExtent ext = make_cudaExtent(W * sizeof(int), H, D);
    cudaPitchedPtr vol, vol2;
    CHECK(cudaMalloc3D(&vol, ext));
    CHECK(cudaMalloc3D(&vol2, ext));
    printf("pitch >= row: %s, xsize %zu ysize %zu\n",
           vol.pitch >= W * sizeof(int) ? "yes" : "no", vol.xsize, vol.ysize);
    CHECK(cudaMemset3D(vol, 0, ext));

    // A host box (with its own pitch and slice height) into the middle.
    const int bw = 20, bh = 10, bd = 4, hp = 25, hh = 12;
    std::vector<int> box(hp * hh * bd, -1);
    for (int z = 0; z < bd; z++)
        for (int y = 0; y < bh; y++)
            for (int x = 0; x < bw; x++)
                box[(z * hh + y) * hp + x] = 1 + x + y * 31 + z * 1000;
    cudaMemcpy3DParms p = {0};
    p.srcPtr = make_cudaPitchedPtr(box.data(), hp * sizeof(int), bw, hh);
    p.dstPtr = vol;
    p.dstPos = make_cudaPos(5 * sizeof(int), 7, 3);
    p.extent = make_cudaExtent(bw * sizeof(int), bh, bd);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));

    add_index<<<dim3((W + 63) / 64, H, D), 64>>>(vol, W, H, D);
    CHECK(cudaGetLastError());

    // Device to device, asynchronously, then the whole volume back.
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaMemcpy3DParms q = {0};
    q.srcPtr = vol;
    q.dstPtr = vol2;
    q.extent = ext;
    q.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaMemcpy3DAsync(&q, s));
    CHECK(cudaMemset3DAsync(make_cudaPitchedPtr(vol.ptr, vol.pitch, W, H), 0,
                            make_cudaExtent(W * sizeof(int), H, 1), s));
    std::vector<int> all(W * H * D, 7);
    cudaMemcpy3DParms r = {0};
    r.srcPtr = vol2;
    r.dstPtr = make_cudaPitchedPtr(all.data(), W * sizeof(int), W, H);
    r.extent = ext;
    r.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3DAsync(&r, s));
    CHECK(cudaStreamSynchronize(s));
    long long sum = 0;
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int in = z >= 3 && z < 3 + bd && y >= 7 && y < 7 + bh &&
                         x >= 5 && x < 5 + bw;
                int want = x + 100 * y + 10000 * z +
                           (in ? box[((z - 3) * hh + y - 7) * hp + x - 5] : 0);
                EXPECT(all[(z * H + y) * W + x] == want);
                sum += want;
            }
    printf("volume ok, sum %lld\n", sum);

    // The first slice of vol was cleared after the copy.
    r.srcPtr = vol;
    r.extent = make_cudaExtent(W * sizeof(int), H, 2);
    CHECK(cudaMemcpy3D(&r));
    EXPECT(all[0] == 0 && all[W * H - 1] == 0 && all[W * H] == 10000);
    printf("async memset3d ok\n");

    // A sub-box back to a strided host box.
    std::vector<int> back(hp * hh * bd, -1);
    cudaMemcpy3DParms t = {0};
    t.srcPtr = vol2;
    t.srcPos = make_cudaPos(5 * sizeof(int), 7, 3);
    t.dstPtr = make_cudaPitchedPtr(back.data(), hp * sizeof(int), bw, hh);
    t.extent = make_cudaExtent(bw * sizeof(int), bh, bd);
    t.kind = cudaMemcpyDefault;
    CHECK(cudaMemcpy3D(&t));
    int gaps = 0;
    for (int z = 0; z < bd; z++)
        for (int y = 0; y < hh; y++)
            for (int x = 0; x < hp; x++) {
                int v = back[(z * hh + y) * hp + x];
                if (x >= bw || y >= bh)
                    gaps += v == -1;
                else
                    EXPECT(v == box[(z * hh + y) * hp + x] + (x + 5) +
                                    100 * (y + 7) + 10000 * (z + 3));
            }
    printf("sub-box ok, untouched gap cells %d\n", gaps);

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(vol.ptr));
    CHECK(cudaFree(vol2.ptr));
    printf("done\n");
    return 0;
}
