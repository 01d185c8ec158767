/*
 * cuda.mock_arrays: a driver API program (linked with -lcuda) through
 * gvsd and the mock driver (mock_arrays.c): arrays made, described and
 * destroyed; copies into and out of them in 1D, 2D and 3D, at offsets,
 * between arrays and pitched device memory, in pieces larger than a
 * request, and the round trips they cost; mipmapped arrays' levels;
 * texture and surface objects and their descriptions; handles and
 * values the session never made.  Prints "ok".
 */
#include <string.h>

#include "driver_check.h"

static uint64_t round_trips(void)
{
    return now().round_trips;
}

/* A 2D float array filled from a strided host buffer and read back at
 * an offset; descriptors. */
static void two_d(void)
{
    enum { W = 16, H = 8, HP = 20 };
    static float src[H * HP], back[6 * 10];
    for (int i = 0; i < H * HP; i++)
        src[i] = (float)i;
    CUDA_ARRAY_DESCRIPTOR d = {W, H, CU_AD_FORMAT_FLOAT, 1};
    CUarray a;
    CHECK(cuArrayCreate(&a, &d));
    CUDA_ARRAY3D_DESCRIPTOR d3;
    CHECK(cuArray3DGetDescriptor(&d3, a));
    EXPECT(d3.Width == W && d3.Height == H && d3.Depth == 0 &&
           d3.Format == CU_AD_FORMAT_FLOAT && d3.NumChannels == 1);
    CUDA_ARRAY_DESCRIPTOR d2;
    CHECK(cuArrayGetDescriptor(&d2, a));
    EXPECT(d2.Width == W && d2.Height == H);

    CUDA_MEMCPY2D c = {0};
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = HP * sizeof(float);
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = W * sizeof(float);
    c.Height = H;
    uint64_t before = round_trips();
    CHECK(cuMemcpy2D(&c));
    EXPECT(round_trips() - before == 1);

    memset(back, 0, sizeof(back));
    CUDA_MEMCPY2D b = {0};
    b.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    b.srcArray = a;
    b.srcXInBytes = 3 * sizeof(float);
    b.srcY = 2;
    b.dstMemoryType = CU_MEMORYTYPE_HOST;
    b.dstHost = back;
    b.dstPitch = 10 * sizeof(float);
    b.WidthInBytes = 8 * sizeof(float);
    b.Height = 6;
    CHECK(cuMemcpy2D(&b));
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 10; x++)
            EXPECT(back[y * 10 + x] ==
                   (x < 8 ? src[(y + 2) * HP + x + 3] : 0.0f));
    /* Past the array's end: the driver's answer, from the backend. */
    b.srcY = 4;
    EXPECT(cuMemcpy2D(&b) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuArrayDestroy(a));
    EXPECT(cuArray3DGetDescriptor(&d3, a) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuArrayDestroy(a) == CUDA_ERROR_INVALID_HANDLE);
}

/* A 3D array: a host box in, through pitched device memory (array to
 * device, device to host), and 1D copies of a 1D array. */
static void three_d(void)
{
    enum { W = 8, H = 4, D = 3 };
    static uint32_t src[W * H * D], back[W * H * D];
    for (int i = 0; i < W * H * D; i++)
        src[i] = 0x1000u + (uint32_t)i;
    CUDA_ARRAY3D_DESCRIPTOR d = {W, H, D, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0};
    CUarray a;
    CHECK(cuArray3DCreate(&a, &d));
    CUDA_MEMCPY3D in = {0};
    in.srcMemoryType = CU_MEMORYTYPE_HOST;
    in.srcHost = src;
    in.srcPitch = W * 4;
    in.srcHeight = H;
    in.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    in.dstArray = a;
    in.WidthInBytes = W * 4;
    in.Height = H;
    in.Depth = D;
    CHECK(cuMemcpy3D(&in));

    CUdeviceptr dev;
    size_t pitch = 64;
    CHECK(cuMemAlloc(&dev, pitch * H * D));
    CUDA_MEMCPY3D out = {0};
    out.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    out.srcArray = a;
    out.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    out.dstDevice = dev;
    out.dstPitch = pitch;
    out.dstHeight = H;
    out.WidthInBytes = W * 4;
    out.Height = H;
    out.Depth = D;
    uint64_t before = round_trips();
    CHECK(cuMemcpy3DAsync(&out, NULL));
    EXPECT(round_trips() - before == 1);
    CUDA_MEMCPY3D host = {0};
    host.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    host.srcDevice = dev;
    host.srcPitch = pitch;
    host.srcHeight = H;
    host.dstMemoryType = CU_MEMORYTYPE_HOST;
    host.dstHost = back;
    host.dstPitch = W * 4;
    host.dstHeight = H;
    host.WidthInBytes = W * 4;
    host.Height = H;
    host.Depth = D;
    CHECK(cuMemcpy3D(&host));
    EXPECT(memcmp(src, back, sizeof(src)) == 0);
    /* Device memory the session does not have is refused. */
    out.dstDevice = 4096;
    EXPECT(cuMemcpy3D(&out) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFree(dev));
    CHECK(cuArrayDestroy(a));

    /* 1D: host to array at an offset, array to array, back. */
    CUDA_ARRAY_DESCRIPTOR l = {256, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1};
    CUarray x, y;
    CHECK(cuArrayCreate(&x, &l));
    CHECK(cuArrayCreate(&y, &l));
    uint8_t bytes[256], got[256];
    for (int i = 0; i < 256; i++)
        bytes[i] = (uint8_t)(255 - i);
    CHECK(cuMemcpyHtoA(x, 16, bytes, 200));
    CHECK(cuMemcpyAtoA(y, 0, x, 16, 200));
    memset(got, 0, sizeof(got));
    CHECK(cuMemcpyAtoHAsync(got, y, 0, 200, NULL));
    EXPECT(memcmp(got, bytes, 200) == 0);
    EXPECT(cuMemcpyHtoA(x, 100, bytes, 200) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuArrayDestroy(x));
    CHECK(cuArrayDestroy(y));
}

/* An array of more than a request, in pieces of whole rows. */
static void pieces(void)
{
    enum { W = 1024, H = 3000 };
    size_t n = (size_t)W * H * 4;
    uint32_t *src = malloc(n), *back = malloc(n);
    EXPECT(src != NULL && back != NULL);
    for (size_t i = 0; i < (size_t)W * H; i++)
        src[i] = (uint32_t)(i * 2654435761u);
    CUDA_ARRAY_DESCRIPTOR d = {W, H, CU_AD_FORMAT_SIGNED_INT32, 1};
    CUarray a;
    CHECK(cuArrayCreate(&a, &d));
    CUDA_MEMCPY2D c = {0};
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = W * 4;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = W * 4;
    c.Height = H;
    CHECK(cuMemcpy2D(&c));
    CUDA_MEMCPY2D b = {0};
    b.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    b.srcArray = a;
    b.dstMemoryType = CU_MEMORYTYPE_HOST;
    b.dstHost = back;
    b.dstPitch = W * 4;
    b.WidthInBytes = W * 4;
    b.Height = H;
    CHECK(cuMemcpy2DAsync(&b, NULL));
    EXPECT(memcmp(src, back, n) == 0);
    CHECK(cuArrayDestroy(a));
    free(src);
    free(back);
}

/* Levels: one handle each, owned by the mipmapped array. */
static void mipmaps(void)
{
    CUDA_ARRAY3D_DESCRIPTOR d = {64, 32, 0, CU_AD_FORMAT_FLOAT, 4, 0};
    CUmipmappedArray m;
    CUarray l1, again, l0;
    CHECK(cuMipmappedArrayCreate(&m, &d, 3));
    CHECK(cuMipmappedArrayGetLevel(&l1, m, 1));
    CHECK(cuMipmappedArrayGetLevel(&again, m, 1));
    CHECK(cuMipmappedArrayGetLevel(&l0, m, 0));
    EXPECT(l1 == again && l1 != l0);
    CUDA_ARRAY3D_DESCRIPTOR ld;
    CHECK(cuArray3DGetDescriptor(&ld, l1));
    EXPECT(ld.Width == 32 && ld.Height == 16 && ld.NumChannels == 4);
    EXPECT(cuMipmappedArrayGetLevel(&l1, m, 3) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuArrayDestroy(l0) == CUDA_ERROR_INVALID_HANDLE);
    CUDA_ARRAY_MEMORY_REQUIREMENTS r;
    CHECK(cuMipmappedArrayGetMemoryRequirements(&r, m, 0));
    EXPECT(r.size >= 64 * 32 * 16 && r.alignment == 512);
    CUDA_ARRAY_SPARSE_PROPERTIES sp;
    EXPECT(cuMipmappedArrayGetSparseProperties(&sp, m) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMipmappedArrayDestroy(m));
    EXPECT(cuArray3DGetDescriptor(&ld, l0) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuMipmappedArrayDestroy(m) == CUDA_ERROR_INVALID_HANDLE);
    CUarray plane;
    EXPECT(cuArrayGetPlane(&plane, (CUarray)(uintptr_t)0x10000, 0) ==
           CUDA_ERROR_INVALID_HANDLE);
}

/* Texture and surface objects: the driver's values, their descriptions
 * as created (the array the program's handle). */
static void objects(void)
{
    CUDA_ARRAY_DESCRIPTOR d = {32, 32, CU_AD_FORMAT_FLOAT, 1};
    CUarray a;
    CHECK(cuArrayCreate(&a, &d));
    CUDA_RESOURCE_DESC res;
    memset(&res, 0, sizeof(res));
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = a;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_LINEAR;
    CUtexObject t;
    CHECK(cuTexObjectCreate(&t, &res, &td, NULL));
    CUDA_RESOURCE_DESC back;
    CHECK(cuTexObjectGetResourceDesc(&back, t));
    EXPECT(back.resType == CU_RESOURCE_TYPE_ARRAY &&
           back.res.array.hArray == a);
    CUDA_TEXTURE_DESC tback;
    CHECK(cuTexObjectGetTextureDesc(&tback, t));
    EXPECT(tback.filterMode == CU_TR_FILTER_MODE_LINEAR);
    CUsurfObject s;
    CHECK(cuSurfObjectCreate(&s, &res));
    CHECK(cuSurfObjectGetResourceDesc(&back, s));
    EXPECT(back.res.array.hArray == a);
    /* A surface's value is no texture's. */
    EXPECT(cuTexObjectDestroy(s) == CUDA_ERROR_INVALID_VALUE ||
           s == t);
    CHECK(cuSurfObjectDestroy(s));
    CHECK(cuTexObjectDestroy(t));
    EXPECT(cuTexObjectDestroy(t) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuTexObjectGetResourceDesc(&back, t) == CUDA_ERROR_INVALID_VALUE);
    /* Linear memory a texture reads must be device memory. */
    memset(&res, 0, sizeof(res));
    res.resType = CU_RESOURCE_TYPE_LINEAR;
    res.res.linear.devPtr = 4096;
    res.res.linear.format = CU_AD_FORMAT_FLOAT;
    res.res.linear.numChannels = 1;
    res.res.linear.sizeInBytes = 1024;
    EXPECT(cuTexObjectCreate(&t, &res, &td, NULL) == CUDA_ERROR_INVALID_VALUE);
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = (CUarray)(uintptr_t)0x10000;
    EXPECT(cuTexObjectCreate(&t, &res, &td, NULL) ==
           CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuArrayDestroy(a));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    stats_init();
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    two_d();
    three_d();
    pieces();
    mipmaps();
    objects();
    CHECK(cuCtxDestroy(ctx));
    printf("ok\n");
    return 0;
}
