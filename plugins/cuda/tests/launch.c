/*
 * cuda.mock_launch: a driver API program (linked with -lcuda) through
 * gvsd and the mock driver (mock_driver.c), whose module "//gvs-mock"
 * holds two kernels it runs on the host: fill(u32 *p, u32 value, u32 n)
 * and add(u32 *p, u32 n, u32 delta).  Contexts, modules and libraries,
 * memory, 1D and 2D copies and memsets, launches (kernelParams and
 * extra), streams and events, and the round trips they cost: the first
 * launch of a configuration waits, later ones within it are posted, a
 * bad configuration is reported at once, a posted failure at the next
 * synchronization.  Prints "ok".
 */
#include "driver_check.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The client library's counters (include/gvs/client.h), looked up: the
 * program links nothing of gvs.  more[] is room for later fields. */
struct stats {
    uint64_t round_trips, posts, bytes_sent, bytes_received, more[8];
};
static void (*get_stats)(struct stats *);

static struct stats now(void)
{
    struct stats s;
    get_stats(&s);
    return s;
}

#define N 1024

static void fill(CUfunction f, CUdeviceptr p, uint32_t value, uint32_t n,
                 unsigned grid, CUstream s)
{
    void *args[] = {&p, &value, &n};
    CHECK(cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void expect_all(CUdeviceptr p, uint32_t n, uint32_t value)
{
    static uint32_t host[N];
    CHECK(cuMemcpyDtoH(host, p, n * sizeof(uint32_t)));
    for (uint32_t i = 0; i < n; i++)
        EXPECT(host[i] == value);
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx, cur;
    CUmodule mod;
    CUlibrary lib;
    CUkernel kadd;
    CUfunction ffill, fadd;
    CUdeviceptr p;
    *(void **)&get_stats = dlsym(RTLD_DEFAULT, "gvs_client_get_stats");
    EXPECT(get_stats != NULL);

    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 1));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuCtxGetCurrent(&cur));
    EXPECT(cur == ctx);
    CUdevice got;
    CHECK(cuCtxGetDevice(&got));
    EXPECT(got == 1);

    /* A module: its kernels found by name, no round trip after the load. */
    EXPECT(cuModuleLoadData(&mod, "not an image") == CUDA_ERROR_INVALID_IMAGE);
    CHECK(cuModuleLoadData(&mod, "//gvs-mock module\n"));
    struct stats s0 = now();
    CHECK(cuModuleGetFunction(&ffill, mod, "fill"));
    EXPECT(cuModuleGetFunction(&fadd, mod, "nope") == CUDA_ERROR_NOT_FOUND);
    CHECK(cuModuleGetFunction(&fadd, mod, "add"));
    size_t off, size;
    CHECK(cuFuncGetParamInfo(ffill, 1, &off, &size));
    EXPECT(off == 8 && size == 4);
    EXPECT(cuFuncGetParamInfo(ffill, 3, &off, &size) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips == s0.round_trips);

    /* Launches: the first waits; the same configuration is then posted,
     * each launch one request and no wait. */
    CHECK(cuMemAlloc(&p, N * sizeof(uint32_t)));
    fill(ffill, p, 7, N, 4, NULL);
    expect_all(p, N, 7);
    s0 = now();
    for (uint32_t i = 0; i < 100; i++) {
        uint32_t n = N, delta = 1;
        void *args[] = {&p, &n, &delta};
        CHECK(cuLaunchKernel(fadd, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    }
    struct stats s1 = now();
    /* add's first launch waits: a configuration is a kernel's own. */
    EXPECT(s1.round_trips - s0.round_trips == 1);
    EXPECT(s1.posts - s0.posts == 99);
    CHECK(cuCtxSynchronize());
    EXPECT(now().round_trips - s1.round_trips == 1);
    expect_all(p, N, 107);

    /* A configuration no device takes is reported at once. */
    uint32_t n = N, value = 1;
    void *args[] = {&p, &value, &n};
    EXPECT(cuLaunchKernel(ffill, 1, 1, 1, 2048, 1, 1, 0, NULL, args, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
    /* A posted launch's failure comes with the next synchronization: an
     * accepted configuration, then one that writes past the allocation. */
    n = N + 1;
    CHECK(cuLaunchKernel(ffill, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    EXPECT(cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS);
    /* Reported once: the mock's contexts, unlike the driver's, live on. */
    CHECK(cuCtxSynchronize());

    /* extra: the parameter block as the program packed it. */
    struct {
        uint64_t p;
        uint32_t value, n;
    } block = {p, 42, N};
    size_t bsize = sizeof(block);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &block,
                     CU_LAUNCH_PARAM_BUFFER_SIZE, &bsize, CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(ffill, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
    expect_all(p, N, 42);

    /* A library: kernels as CUkernel, launched as such. */
    CHECK(cuLibraryLoadData(&lib, "//gvs-mock library\n", NULL, NULL, 0,
                            NULL, NULL, 0));
    CHECK(cuLibraryGetKernel(&kadd, lib, "add"));
    unsigned count = 0;
    CHECK(cuLibraryGetKernelCount(&count, lib));
    EXPECT(count == 2);
    {
        uint32_t m = N, delta = 8;
        void *kargs[] = {&p, &m, &delta};
        CHECK(cuLaunchKernel((CUfunction)kadd, 4, 1, 1, 256, 1, 1, 0, NULL,
                             kargs, NULL));
    }
    expect_all(p, N, 50);

    /* Streams and events. */
    CUstream st;
    CUevent ev;
    CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&ev, CU_EVENT_DEFAULT));
    fill(ffill, p, 3, N, 4, st);
    CHECK(cuEventRecord(ev, st));
    CHECK(cuEventSynchronize(ev));
    CHECK(cuStreamSynchronize(st));
    expect_all(p, N, 3);
    CHECK(cuEventDestroy(ev));
    CHECK(cuStreamDestroy(st));
    EXPECT(cuStreamSynchronize(st) == CUDA_ERROR_INVALID_HANDLE);

    /* Copies: 1D in pieces larger than a request, 2D with pitches on
     * both sides, unified; memsets 1D and 2D. */
    size_t big = (size_t)20 << 20;
    uint8_t *h = malloc(big), *back = malloc(big);
    CUdeviceptr d;
    EXPECT(h != NULL && back != NULL);
    for (size_t i = 0; i < big; i++)
        h[i] = (uint8_t)(i * 7 + 3);
    CHECK(cuMemAlloc(&d, big));
    CHECK(cuMemcpyHtoD(d, h, big));
    CHECK(cuMemcpyDtoH(back, d, big));
    EXPECT(memcmp(h, back, big) == 0);
    CUDA_MEMCPY2D c2 = {0};
    c2.srcMemoryType = CU_MEMORYTYPE_HOST;
    c2.srcHost = h;
    c2.srcPitch = 300;
    c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c2.dstDevice = d;
    c2.dstPitch = 512;
    c2.WidthInBytes = 200;
    c2.Height = 50;
    CHECK(cuMemsetD8(d, 0, 512 * 50));
    CHECK(cuMemcpy2D(&c2));
    CHECK(cuMemcpyDtoH(back, d, 512 * 50));
    for (size_t r = 0; r < 50; r++) {
        EXPECT(memcmp(back + r * 512, h + r * 300, 200) == 0);
        EXPECT(back[r * 512 + 200] == 0);
    }
    CHECK(cuMemsetD2D32(d, 512, 0xabcdef01u, 16, 4));
    CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)back, d, 64));
    EXPECT(((uint32_t *)back)[15] == 0xabcdef01u);
    unsigned type = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 8));
    EXPECT(type == CU_MEMORYTYPE_DEVICE);

    CHECK(cuMemFree(d));
    CHECK(cuMemFree(p));
    CHECK(cuLibraryUnload(lib));
    CHECK(cuModuleUnload(mod));
    EXPECT(cuModuleGetFunction(&ffill, mod, "fill") == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuCtxDestroy(ctx));
    EXPECT(cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == NULL);
    free(h);
    free(back);
    printf("ok\n");
    return 0;
}
