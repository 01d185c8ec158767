/*
 * cuda.mock_launch: a driver API program (linked with -lcuda) through
 * gvsd and the mock driver (mock_driver.c), whose module "//gvs-mock"
 * holds two kernels it runs on the host: fill(u32 *p, u32 value, u32 n)
 * and add(u32 *p, u32 n, u32 delta).  Contexts, modules and libraries,
 * memory, 1D, 2D and 3D copies and memsets, launches (kernelParams and
 * extra), streams and events, and the round trips they cost: the first
 * launch of a configuration waits, later ones within it are posted, a
 * bad configuration is reported at once, a posted failure at the next
 * synchronization.  Modules and libraries from files too, and the
 * files the driver refuses.  Prints "ok".
 */
#include <string.h>
#include <unistd.h>

#include "driver_check.h"

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

/* A primary context's state (the mock's is its references and flags):
 * asked once while the context is active, and again after each change;
 * an inactive one every time. */
static void primary_state(void)
{
    unsigned flags = 9;
    int active = 9;
    CUcontext primary;
    struct stats s = now();
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    EXPECT(active == 0);
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    EXPECT(now().round_trips - s.round_trips == 2);
    CHECK(cuDevicePrimaryCtxRetain(&primary, 1));
    s = now();
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    EXPECT(active == 1 && flags == 0 && now().round_trips - s.round_trips == 1);
    CHECK(cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_BLOCKING_SYNC));
    s = now();
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    EXPECT(active == 1 && flags == CU_CTX_SCHED_BLOCKING_SYNC &&
           now().round_trips - s.round_trips == 1);
    EXPECT(cuDevicePrimaryCtxGetState(1, NULL, &active) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuDevicePrimaryCtxGetState(7, &flags, &active) ==
           CUDA_ERROR_INVALID_DEVICE);
    CHECK(cuDevicePrimaryCtxSetFlags(1, 0));
    CHECK(cuDevicePrimaryCtxRelease(1));
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    EXPECT(active == 0);
}

/* Function attributes (the mock's attribute a is 100 + a until set):
 * the backend's answer once; one a program may set, again after a
 * setting of the function's other than its dynamic shared memory (whose
 * value set is kept) or any cache preference; a setting to the value it
 * has costs nothing; bad ones are asked every time. */
static void func_attributes(CUfunction f)
{
    int regs = 0, again = 0, dyn = 0;
    const CUfunction_attribute shm =
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    struct stats s = now();
    CHECK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    CHECK(cuFuncGetAttribute(&again, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    EXPECT(regs == 104 && again == regs &&
           now().round_trips - s.round_trips == 1);
    CHECK(cuFuncGetAttribute(&dyn, shm, f));
    CHECK(cuFuncGetAttribute(&dyn, shm, f));
    EXPECT(dyn == 108 && now().round_trips - s.round_trips == 2);
    CHECK(cuFuncSetAttribute(f, shm, 108));
    EXPECT(now().round_trips - s.round_trips == 2);
    CHECK(cuFuncSetAttribute(f, shm, 4096));
    CHECK(cuFuncGetAttribute(&dyn, shm, f));
    CHECK(cuFuncGetAttribute(&again, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    CHECK(cuFuncSetAttribute(f, shm, 4096));
    EXPECT(dyn == 4096 && now().round_trips - s.round_trips == 3);
    CHECK(cuFuncSetAttribute(
        f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
    CHECK(cuFuncGetAttribute(&dyn, shm, f));
    EXPECT(dyn == 4096 && now().round_trips - s.round_trips == 5);
    CHECK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
    CHECK(cuFuncGetAttribute(&dyn, shm, f));
    EXPECT(dyn == 4096 && now().round_trips - s.round_trips == 7);
    EXPECT(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 104) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncGetAttribute(&dyn, (CUfunction_attribute)1000, f) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, f) ==
           CUDA_ERROR_INVALID_VALUE);
}

/* A kernel and its functions are one family: cuKernelGetFunction is
 * answered once per context; a setting through one member is seen
 * through the others, and a launch configuration accepted before it
 * waits again; settings of another family's (other) leave this family's
 * kept attributes and posted launches alone, so that two kernels set
 * to their own allowances before each launch cost no round trip. */
static void func_families(CUkernel kadd, CUfunction other, CUdeviceptr p)
{
    const CUfunction_attribute shm =
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    CUfunction fa, fb;
    CUcontext ctx2, prev;
    int v = 0;
    uint32_t n = N, delta = 1;
    void *args[] = {&p, &n, &delta};
    struct stats s = now();
    CHECK(cuKernelGetFunction(&fa, kadd));
    CHECK(cuKernelGetFunction(&fb, kadd));
    EXPECT(fa == fb && now().round_trips - s.round_trips == 1);
    CHECK(cuFuncGetAttribute(&v, shm, fa));
    CHECK(cuKernelGetAttribute(&v, shm, kadd, 1));
    CHECK(cuLaunchKernel(fa, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    EXPECT(now().round_trips - s.round_trips == 4);
    s = now();
    for (int i = 0; i < 3; i++) {
        CHECK(cuFuncSetAttribute(other, shm, 1024));
        CHECK(cuFuncSetAttribute(fa, shm, 2048));
        CHECK(cuLaunchKernel(fa, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    }
    /* The first round's two settings and the launch after them. */
    EXPECT(now().round_trips - s.round_trips == 3);
    /* Two attributes of one kernel set before each launch, each to the
     * value it was set to: no change after the first round, whose
     * settings and launch wait; another value waits again. */
    const CUfunction_attribute carve =
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
    s = now();
    for (int i = 0; i < 3; i++) {
        CHECK(cuFuncSetAttribute(fa, shm, 2048));
        CHECK(cuFuncSetAttribute(fa, carve, 40));
        CHECK(cuLaunchKernel(fa, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    }
    EXPECT(now().round_trips - s.round_trips == 2);
    CHECK(cuFuncSetAttribute(fa, carve, 30));
    CHECK(cuFuncSetAttribute(fa, shm, 2048));
    CHECK(cuLaunchKernel(fa, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    EXPECT(now().round_trips - s.round_trips == 4);
    s = now();
    CHECK(cuKernelSetAttribute(shm, 512, kadd, 1));
    CHECK(cuFuncGetAttribute(&v, shm, fa));
    CHECK(cuLaunchKernel(fa, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    EXPECT(v == 512 && now().round_trips - s.round_trips == 3);
    CHECK(cuCtxCreate(&ctx2, NULL, 0, 1));
    s = now();
    CHECK(cuKernelGetFunction(&fb, kadd));
    CHECK(cuKernelGetFunction(&fb, kadd));
    EXPECT(now().round_trips - s.round_trips == 1);
    CHECK(cuCtxDestroy(ctx2));
    CHECK(cuCtxGetCurrent(&prev));
    s = now();
    CHECK(cuKernelGetFunction(&fb, kadd));
    EXPECT(fb == fa && now().round_trips - s.round_trips == 1);
    CHECK(cuCtxSynchronize());
}

/* Blocks per multiprocessor: the backend's answer once per question,
 * again after a setting of the kernel's (a carveout, by whose percentage
 * the mock scales its answer: 50 set before); the potential block size
 * asks each candidate once; failures every time. */
static void occupancy(CUfunction f)
{
    int n = 0, again = 0, grid = 0, block = 0;
    struct stats s = now();
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, 256, 0,
                                                               0));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&again, f, 256,
                                                               0, 0));
    EXPECT(n == 4 && again == 4 && now().round_trips - s.round_trips == 1);
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 256, 0));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 128, 0));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 128, 0));
    EXPECT(n == 8 && now().round_trips - s.round_trips == 3);
    CHECK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0));
    s = now();
    CHECK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0));
    EXPECT(now().round_trips == s.round_trips);
    CHECK(cuFuncSetAttribute(
        f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 25));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 128, 0));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 128, 0));
    EXPECT(n == 4 && now().round_trips - s.round_trips == 2);
    EXPECT(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 2048, 0) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 2048, 0) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuOccupancyMaxActiveBlocksPerMultiprocessor(
               &n, (CUfunction)(uintptr_t)0x5eed0000, 128, 0) ==
           CUDA_ERROR_INVALID_HANDLE);
    EXPECT(now().round_trips - s.round_trips == 5);
}

/* Launches with attributes: the first with a set of them waits, the
 * same again is posted; a cluster the device refuses fails at once every
 * time; an attribute not known to be a plain value (a synchronization
 * policy) waits every time; a setting of the kernel's makes the next
 * wait again; the grid alone, tiled by the clusters, does not.  Each
 * launch adds 1 (add's delta) to p's N words. */
static void launch_attrs(CUfunction add, CUdeviceptr p)
{
    uint32_t n = N, delta = 1;
    void *args[] = {&p, &n, &delta};
    CUlaunchAttribute a[2];
    memset(a, 0, sizeof(a));
    a[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a[0].value.clusterDim.x = 2;
    a[0].value.clusterDim.y = 1;
    a[0].value.clusterDim.z = 1;
    a[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a[1].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {4, 1, 1, 256, 1, 1, 0, NULL, a, 2};
    struct stats s = now();
    for (int i = 0; i < 10; i++)
        CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    EXPECT(now().round_trips - s.round_trips == 1);
    EXPECT(now().posts - s.posts == 9);
    s = now();
    a[0].value.clusterDim.x = 3;
    EXPECT(cuLaunchKernelEx(&cfg, add, args, NULL) ==
           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT(cuLaunchKernelEx(&cfg, add, args, NULL) ==
           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    a[0].value.clusterDim.x = 2;
    a[1].id = CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY;
    a[1].value.syncPolicy = CU_SYNC_POLICY_AUTO;
    CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    EXPECT(now().round_trips - s.round_trips == 4);
    a[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a[1].value.programmaticStreamSerializationAllowed = 1;
    s = now();
    CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    CHECK(cuFuncSetAttribute(
        add, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 777));
    CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    EXPECT(now().round_trips - s.round_trips == 2);
    /* The grid follows the data: posted while the clusters tile it; one
     * they do not tile waits, and is refused. */
    s = now();
    cfg.gridDimX = 8;
    CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    cfg.gridDimX = 6;
    CHECK(cuLaunchKernelEx(&cfg, add, args, NULL));
    EXPECT(now().round_trips == s.round_trips);
    EXPECT(now().posts - s.posts == 2);
    cfg.gridDimX = 5;
    EXPECT(cuLaunchKernelEx(&cfg, add, args, NULL) ==
           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT(now().round_trips - s.round_trips == 1);
    CHECK(cuCtxSynchronize());
}

/* Whether a stream captures, which PyTorch asks before its allocations:
 * answered here while no capture has begun, for the session's streams
 * and the default ones; a stream the session does not know is the
 * backend's to judge. */
static void is_capturing(CUstream st)
{
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    struct stats s = now();
    CHECK(cuStreamIsCapturing(st, &status));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_NONE);
    status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CHECK(cuStreamIsCapturing(CU_STREAM_LEGACY, &status));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_NONE);
    status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CHECK(cuStreamIsCapturing(CU_STREAM_PER_THREAD, &status));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_NONE &&
           now().round_trips == s.round_trips);
    EXPECT(cuStreamIsCapturing((CUstream)(uintptr_t)0x5eed0000, &status) ==
           CUDA_ERROR_INVALID_HANDLE);
    EXPECT(now().round_trips - s.round_trips == 1);
}

/* The client's files: the mock image from a file, as a module and as a
 * library; a missing file, a directory, an empty file. */
static void from_files(void)
{
    char dir[] = "/tmp/gvs-modfile-XXXXXX", path[64], empty[64];
    CUmodule m;
    CUlibrary l;
    EXPECT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/mock.ptx", dir);
    snprintf(empty, sizeof(empty), "%s/empty", dir);
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL && fputs("//gvs-mock module\n", f) >= 0 && fclose(f) == 0);
    f = fopen(empty, "w");
    EXPECT(f != NULL && fclose(f) == 0);
    CHECK(cuModuleLoad(&m, path));
    CUfunction fn;
    CHECK(cuModuleGetFunction(&fn, m, "fill"));
    CHECK(cuModuleUnload(m));
    CHECK(cuLibraryLoadFromFile(&l, path, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CHECK(cuLibraryGetKernel(&k, l, "add"));
    CHECK(cuLibraryUnload(l));
    EXPECT(cuModuleLoad(&m, "/nonexistent/gvs.ptx") == CUDA_ERROR_FILE_NOT_FOUND);
    EXPECT(cuModuleLoad(&m, dir) == CUDA_ERROR_FILE_NOT_FOUND);
    EXPECT(cuModuleLoad(&m, empty) == CUDA_ERROR_INVALID_IMAGE);
    EXPECT(cuModuleLoad(NULL, path) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLibraryLoadFromFile(&l, "/nonexistent/gvs.ptx", NULL, NULL, 0,
                                 NULL, NULL, 0) == CUDA_ERROR_FILE_NOT_FOUND);
    EXPECT(unlink(path) == 0 && unlink(empty) == 0 && rmdir(dir) == 0);
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
    stats_init();

    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 1));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuCtxGetCurrent(&cur));
    EXPECT(cur == ctx);
    /* Device attributes: the backend's answer once, then the layer's;
     * a bad attribute is asked every time. */
    int sms = 0, again = 0;
    struct stats sa = now();
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               dev));
    CHECK(cuDeviceGetAttribute(&again, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               dev));
    EXPECT(sms == again && now().round_trips - sa.round_trips == 1);
    EXPECT(cuDeviceGetAttribute(&again, (CUdevice_attribute)100000, dev) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuDeviceGetAttribute(&again, (CUdevice_attribute)100000, dev) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips - sa.round_trips == 3);
    /* A device's handle: asked once; a bad ordinal every time. */
    CUdevice got;
    sa = now();
    CHECK(cuDeviceGet(&got, 1));
    EXPECT(got == dev && now().round_trips == sa.round_trips);
    EXPECT(cuDeviceGet(&got, 7) == CUDA_ERROR_INVALID_DEVICE);
    EXPECT(cuDeviceGet(&got, 7) == CUDA_ERROR_INVALID_DEVICE);
    EXPECT(cuDeviceGet(NULL, 1) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips - sa.round_trips == 2);
    CHECK(cuCtxGetDevice(&got));
    EXPECT(got == 1);
    primary_state();
    int version = 0, again_version = 0;
    CHECK(cuDriverGetVersion(&version));
    sa = now();
    CHECK(cuDriverGetVersion(&again_version));
    EXPECT(version == 13000 && again_version == version &&
           now().round_trips == sa.round_trips);

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
    func_attributes(ffill);
    occupancy(fadd);

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
    launch_attrs(fadd, p);
    expect_all(p, N, 124);

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

    from_files();

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
    func_families(kadd, ffill, p);
    expect_all(p, N, 59);

    /* Streams and events. */
    CUstream st;
    CUevent ev;
    CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&ev, CU_EVENT_DEFAULT));
    is_capturing(st);
    fill(ffill, p, 3, N, 4, st);
    /* Records and waits of a known event and stream of one context are
     * posted; what the tables do not prove waits, and its failure comes
     * back at once. */
    struct stats s2 = now();
    CHECK(cuEventRecord(ev, st));
    CHECK(cuEventRecord(ev, NULL));
    CHECK(cuEventRecordWithFlags(ev, st, 0));
    CHECK(cuStreamWaitEvent(st, ev, 0));
    CHECK(cuStreamWaitEvent(NULL, ev, 0));
    EXPECT(now().round_trips == s2.round_trips);
    EXPECT(now().posts - s2.posts >= 5);
    EXPECT(cuEventRecord((CUevent)(uintptr_t)0x777777, st) ==
           CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuStreamWaitEvent((CUstream)(uintptr_t)0x777777, ev, 0) ==
           CUDA_ERROR_INVALID_HANDLE);
    EXPECT(now().round_trips - s2.round_trips == 2);
    CHECK(cuEventSynchronize(ev));
    CHECK(cuStreamSynchronize(st));
    expect_all(p, N, 3);
    CHECK(cuEventDestroy(ev));
    /* Destroyed: no longer posted, the driver's answer at once. */
    s2 = now();
    EXPECT(cuEventRecord(ev, st) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(now().round_trips - s2.round_trips == 1);
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
    /* Memsets inside one allocation are posted; one past its end waits
     * and fails at once. */
    struct stats s3 = now();
    CHECK(cuMemsetD2D32(d, 512, 0xabcdef01u, 16, 4));
    CHECK(cuMemsetD32Async(d + 4096, 7, 16, NULL));
    EXPECT(now().round_trips == s3.round_trips);
    EXPECT(cuMemsetD32(d + big - 8, 1, 4) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips - s3.round_trips == 1);
    CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)back, d, 64));
    EXPECT(((uint32_t *)back)[15] == 0xabcdef01u);
    CHECK(cuMemcpyDtoH(back, d + 4096, 64));
    EXPECT(((uint32_t *)back)[15] == 7);
    /* Copies between device memory inside allocations are posted, the
     * synchronous forms too (the driver does not wait for them); one past
     * an allocation's end waits and fails at once. */
    s3 = now();
    CHECK(cuMemcpyDtoD(d + 8192, d + 4096, 64));
    CHECK(cuMemcpyDtoDAsync(d + 16384, d + 8192, 64, NULL));
    EXPECT(now().round_trips == s3.round_trips);
    EXPECT(now().posts - s3.posts == 2);
    EXPECT(cuMemcpyDtoD(d + big - 8, d, 64) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips - s3.round_trips == 1);
    CHECK(cuMemcpyDtoH(back, d + 16384, 64));
    EXPECT(((uint32_t *)back)[15] == 7);
    /* 3D: a host box with its own pitch and slice height into a device
     * volume at an offset, device to device (slices that follow each
     * other: one request, posted), back to a strided host box
     * asynchronously; the gaps stay as they were. */
    CHECK(cuMemsetD8(d, 0, 128 * 6 * 4 * 2));
    CUDA_MEMCPY3D c3 = {0};
    c3.srcMemoryType = CU_MEMORYTYPE_HOST;
    c3.srcHost = h;
    c3.srcPitch = 100;
    c3.srcHeight = 7;
    c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c3.dstDevice = d;
    c3.dstXInBytes = 8;
    c3.dstY = 1;
    c3.dstZ = 1;
    c3.dstPitch = 128;
    c3.dstHeight = 6;
    c3.WidthInBytes = 60;
    c3.Height = 5;
    c3.Depth = 3;
    CHECK(cuMemcpy3D(&c3));
    CUDA_MEMCPY3D v = {0};
    v.srcMemoryType = v.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    v.srcDevice = d;
    v.dstDevice = d + 128 * 6 * 4;
    v.srcPitch = v.dstPitch = 128;
    v.srcHeight = v.dstHeight = 6;
    v.WidthInBytes = 128;
    v.Height = 6;
    v.Depth = 4;
    struct stats before = now();
    CHECK(cuMemcpy3D(&v));
    EXPECT(now().round_trips == before.round_trips);
    EXPECT(now().posts - before.posts == 1);
    memset(back, 0xee, 64 * 8 * 3);
    CUDA_MEMCPY3D b3 = {0};
    b3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    b3.srcDevice = d + 128 * 6 * 4;
    b3.srcXInBytes = 8;
    b3.srcY = 1;
    b3.srcZ = 1;
    b3.srcPitch = 128;
    b3.srcHeight = 6;
    b3.dstMemoryType = CU_MEMORYTYPE_HOST;
    b3.dstHost = back;
    b3.dstPitch = 64;
    b3.dstHeight = 8;
    b3.WidthInBytes = 60;
    b3.Height = 5;
    b3.Depth = 3;
    CHECK(cuMemcpy3DAsync(&b3, NULL));
    for (size_t z = 0; z < 3; z++)
        for (size_t y = 0; y < 8; y++)
            for (size_t x = 0; x < 64; x++) {
                uint8_t got = back[(z * 8 + y) * 64 + x];
                EXPECT(x < 60 && y < 5 ? got == h[(z * 7 + y) * 100 + x]
                                       : got == 0xee);
            }
    b3.Depth = 2;
    b3.dstHeight = 4;
    EXPECT(cuMemcpy3D(&b3) == CUDA_ERROR_INVALID_VALUE);
    b3.dstHeight = 8;
    b3.dstPitch = 32;
    EXPECT(cuMemcpy3D(&b3) == CUDA_ERROR_INVALID_VALUE);
    b3.dstPitch = 64;
    b3.srcDevice = 64;
    EXPECT(cuMemcpy3D(&b3) == CUDA_ERROR_INVALID_VALUE);
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
