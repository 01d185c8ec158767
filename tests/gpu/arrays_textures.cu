// CUDA arrays, texture and surface objects: a 2D float array filled with
// cudaMemcpy2DToArray and read through a texture (point and linear
// filtering), a surface written by a kernel and read back with
// cudaMemcpy2DFromArray, a 3D array through cudaMemcpy3D, a linear-memory
// texture, array-to-array copies, and the descriptions given back.
#include "check.h"
#include <cstdint>
#include <vector>

__global__ void sample2d(cudaTextureObject_t t, float *out, int w, int h,
                         float dx)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2D<float>(t, x + 0.5f + dx, y + 0.5f);
}

__global__ void write_surface(cudaSurfaceObject_t s, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < w && y < h)
        surf2Dwrite(x * 1000 + y, s, x * (int)sizeof(int), y);
}

__global__ void sample3d(cudaTextureObject_t t, float *out, int n)
{
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    out[(z * n + y) * n + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}

__global__ void fetch1d(cudaTextureObject_t t, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<int>(t, i) * 3;
}

static double sum(const std::vector<float> &v)
{
    double s = 0;
    for (float f : v)
        s += f;
    return s;
}

int main()
{
    const int w = 64, h = 32;
    cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    printf("float desc %d %d %d %d kind %d\n", fdesc.x, fdesc.y, fdesc.z,
           fdesc.w, (int)fdesc.f);
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &fdesc, w, h));
    std::vector<float> src((w + 3) * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w + 3; x++)
            src[y * (w + 3) + x] = (float)(x + 100 * y);
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, src.data(), (w + 3) * sizeof(float),
                              w * sizeof(float), h, cudaMemcpyHostToDevice));
    cudaChannelFormatDesc d2;
    cudaExtent ext;
    unsigned flags;
    CHECK(cudaArrayGetInfo(&d2, &ext, &flags, arr));
    printf("array info: %d bits, %zu x %zu x %zu, flags %u\n", d2.x, ext.width,
           ext.height, ext.depth, flags);

    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
    float *out;
    CHECK(cudaMalloc(&out, w * h * sizeof(float)));
    std::vector<float> got(w * h);
    sample2d<<<dim3(1, h), w>>>(tex, out, w, h, 0.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float),
                     cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            EXPECT(got[y * w + x] == (float)(x + 100 * y));
    printf("point-filtered texture ok\n");
    cudaResourceDesc rd2;
    CHECK(cudaGetTextureObjectResourceDesc(&rd2, tex));
    printf("resource desc gives the array back: %s\n",
           rd2.resType == cudaResourceTypeArray && rd2.res.array.array == arr
               ? "yes" : "no");
    CHECK(cudaDestroyTextureObject(tex));

    td.filterMode = cudaFilterModeLinear;
    CHECK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
    sample2d<<<dim3(1, h), w>>>(tex, out, w, h, 0.25f);
    CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float),
                     cudaMemcpyDeviceToHost));
    printf("linear-filtered sample sum %.3f, [0][10] %.4f\n", sum(got), got[10]);
    CHECK(cudaDestroyTextureObject(tex));

    // A surface written by a kernel, read back with an offset.
    cudaChannelFormatDesc idesc = cudaCreateChannelDesc<int>();
    cudaArray_t sarr, sarr2;
    CHECK(cudaMallocArray(&sarr, &idesc, w, h, cudaArraySurfaceLoadStore));
    CHECK(cudaMallocArray(&sarr2, &idesc, w, h));
    rd.res.array.array = sarr;
    cudaSurfaceObject_t surf;
    CHECK(cudaCreateSurfaceObject(&surf, &rd));
    write_surface<<<dim3(1, h), w>>>(surf, w, h);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2DArrayToArray(sarr2, 0, 0, sarr, 0, 0, w * sizeof(int), h));
    std::vector<int> back(10 * 5, -1);
    CHECK(cudaMemcpy2DFromArray(back.data(), 10 * sizeof(int), sarr2,
                                3 * sizeof(int), 2, 8 * sizeof(int), 5,
                                cudaMemcpyDeviceToHost));
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 10; x++)
            EXPECT(back[y * 10 + x] == (x < 8 ? (x + 3) * 1000 + y + 2 : -1));
    printf("surface write ok\n");
    CHECK(cudaDestroySurfaceObject(surf));

    // A 3D array through cudaMemcpy3D (extent in elements) and tex3D.
    const int n = 8;
    cudaArray_t vol;
    CHECK(cudaMalloc3DArray(&vol, &fdesc, make_cudaExtent(n, n, n)));
    std::vector<float> cube(n * n * n);
    for (int i = 0; i < n * n * n; i++)
        cube[i] = (float)(i % 17) - 3.0f;
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(cube.data(), n * sizeof(float), n, n);
    p.dstArray = vol;
    p.extent = make_cudaExtent(n, n, n);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    rd.res.array.array = vol;
    td.filterMode = cudaFilterModePoint;
    td.addressMode[2] = cudaAddressModeClamp;
    CHECK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
    float *out3;
    CHECK(cudaMalloc(&out3, n * n * n * sizeof(float)));
    sample3d<<<dim3(n, n), n>>>(tex, out3, n);
    std::vector<float> got3(n * n * n);
    CHECK(cudaMemcpy(got3.data(), out3, got3.size() * sizeof(float),
                     cudaMemcpyDeviceToHost));
    for (int i = 0; i < n * n * n; i++)
        EXPECT(got3[i] == cube[i]);
    // A sub-box back out of the array, at an offset in elements.
    std::vector<float> sub(2 * 3 * 4, 0.0f);
    cudaMemcpy3DParms q = {};
    q.srcArray = vol;
    q.srcPos = make_cudaPos(1, 2, 3);
    q.dstPtr = make_cudaPitchedPtr(sub.data(), 4 * sizeof(float), 4, 3);
    q.extent = make_cudaExtent(4, 3, 2);
    q.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&q));
    EXPECT(sub[0] == cube[(3 * n + 2) * n + 1]);
    EXPECT(sub[23] == cube[(4 * n + 4) * n + 4]);
    printf("3D array texture ok\n");
    CHECK(cudaDestroyTextureObject(tex));

    // A texture over linear device memory.
    int *lin, *lout;
    const int m = 1000;
    CHECK(cudaMalloc(&lin, m * sizeof(int)));
    CHECK(cudaMalloc(&lout, m * sizeof(int)));
    std::vector<int> li(m);
    for (int i = 0; i < m; i++)
        li[i] = i * 7 - 50;
    CHECK(cudaMemcpy(lin, li.data(), m * sizeof(int), cudaMemcpyHostToDevice));
    cudaResourceDesc lr = {};
    lr.resType = cudaResourceTypeLinear;
    lr.res.linear.devPtr = lin;
    lr.res.linear.desc = idesc;
    lr.res.linear.sizeInBytes = m * sizeof(int);
    cudaTextureDesc ltd = {};
    ltd.readMode = cudaReadModeElementType;
    CHECK(cudaCreateTextureObject(&tex, &lr, &ltd, NULL));
    fetch1d<<<(m + 127) / 128, 128>>>(tex, lout, m);
    CHECK(cudaMemcpy(li.data(), lout, m * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < m; i++)
        EXPECT(li[i] == (i * 7 - 50) * 3);
    printf("linear texture ok\n");
    CHECK(cudaDestroyTextureObject(tex));

    CHECK(cudaFree(lin));
    CHECK(cudaFree(lout));
    CHECK(cudaFree(out));
    CHECK(cudaFree(out3));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFreeArray(sarr));
    CHECK(cudaFreeArray(sarr2));
    CHECK(cudaFreeArray(vol));
    printf("done\n");
    return 0;
}
