// The driver API alone, C++ with no runtime (CMakeLists.txt): devices;
// two created contexts pushed, popped and set current beside the primary
// one; modules from nvcc's fat binary, cubin
// and PTX files (driver_image/kernels.cu, driver_api.cmake) loaded with
// cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx (JIT options and
// their logs) and cuModuleLoadFatBinary; a global read and written;
// launches with kernelParams, with extra and with cuLaunchKernelEx's
// attributes; streams and events; memsets and copies of each form;
// function attributes; and the errors a driver answers at once.
#include "driver_check.h"

#include <cstring>

static const int N = 1024;

// axpb of module m over in: out[i] = a * in[i] + bias, with bias set
// through the module's global first.  Prints the sum.
static void run_axpb(CUmodule m, const char *how, int bias)
{
    CUfunction f;
    CUdeviceptr g, in, out;
    size_t bytes = 0;
    CHECK(cuModuleGetFunction(&f, m, "axpb"));
    CHECK(cuModuleGetGlobal(&g, &bytes, m, "bias"));
    int old = 0;
    CHECK(cuMemcpyDtoH(&old, g, sizeof(old)));
    CHECK(cuMemcpyHtoD(g, &bias, sizeof(bias)));
    std::vector<int> h(N);
    for (int i = 0; i < N; i++)
        h[i] = i;
    CHECK(cuMemAlloc(&in, N * sizeof(int)));
    CHECK(cuMemAlloc(&out, N * sizeof(int)));
    CHECK(cuMemcpyHtoD(in, h.data(), N * sizeof(int)));
    int a = 2, n = N;
    void *args[] = {&out, &in, &a, &n};
    CHECK(cuLaunchKernel(f, N / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CHECK(cuMemcpyDtoH(h.data(), out, N * sizeof(int)));
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += h[i];
    printf("%s: global %zu bytes, was %d; sum %ld\n", how, bytes, old, sum);
    CHECK(cuMemFree(in));
    CHECK(cuMemFree(out));
}

// The modules of each kind of file, and from memory.
static void modules(CUdevice dev)
{
    CUmodule m;
    CHECK(cuModuleLoad(&m, image_path("driver_api", "fatbin").c_str()));
    run_axpb(m, "fatbin file", 5);
    unsigned count = 0;
    CHECK(cuModuleGetFunctionCount(&count, m));
    printf("fatbin functions: %u\n", count);
    CHECK(cuModuleUnload(m));

    std::string cubin = cubin_path("driver_api", dev);
    if (cubin.empty()) {
        printf("cubin file: none for this GPU\n");
    } else {
        CHECK(cuModuleLoad(&m, cubin.c_str()));
        run_axpb(m, "cubin file", 6);
        CHECK(cuModuleUnload(m));
    }

    CHECK(cuModuleLoad(&m, image_path("driver_api", "ptx").c_str()));
    run_axpb(m, "ptx file", 7);
    CHECK(cuModuleUnload(m));

    std::vector<char> fatbin = read_file(image_path("driver_api", "fatbin"));
    std::vector<char> ptx = read_file(image_path("driver_api", "ptx"));
    EXPECT(!fatbin.empty() && !ptx.empty());
    CHECK(cuModuleLoadData(&m, fatbin.data()));
    run_axpb(m, "fatbin data", 8);
    CHECK(cuModuleUnload(m));
    CHECK(cuModuleLoadFatBinary(&m, fatbin.data()));
    run_axpb(m, "cuModuleLoadFatBinary", 9);
    CHECK(cuModuleUnload(m));

    // PTX with JIT options: the logs and the sizes the driver writes.
    char info[4096], error[4096];
    CUjit_option opt[] = {CU_JIT_INFO_LOG_BUFFER,
                          CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_ERROR_LOG_BUFFER,
                          CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_WALL_TIME};
    void *val[] = {info, (void *)(uintptr_t)sizeof(info), error,
                   (void *)(uintptr_t)sizeof(error), (void *)(uintptr_t)3,
                   NULL};
    info[0] = error[0] = '\0';
    CHECK(cuModuleLoadDataEx(&m, ptx.data(), 6, opt, val));
    float ms;
    memcpy(&ms, &val[5], sizeof(ms));
    printf("ptx data with options: error log empty: %d, its size %zu, wall "
           "time >= 0: %d\n",
           error[0] == '\0', (size_t)(uintptr_t)val[3], ms >= 0);
    run_axpb(m, "ptx data", 10);
    CHECK(cuModuleUnload(m));

    // PTX that does not compile: the error comes with its log.
    const char *bad = ".version 8.0\n.target sm_75\n.address_size 64\n"
                      ".visible .entry broken() { bogus; }\n";
    val[1] = (void *)(uintptr_t)sizeof(info);
    val[3] = (void *)(uintptr_t)sizeof(error);
    error[0] = '\0';
    CUresult r = cuModuleLoadDataEx(&m, bad, 6, opt, val);
    size_t wrote = (size_t)(uintptr_t)val[3];
    printf("bad ptx: %s, error log written: %d, its size: %d\n", drv_name(r),
           error[0] != '\0', wrote == strlen(error) + 1);
}

// Parameters packed by the program for extra, at the offsets the driver
// gives.
static void extra_launch(CUmodule m)
{
    struct Pair {
        char c;
        double d;
        int k;
    };
    CUfunction f;
    CUdeviceptr out;
    CHECK(cuModuleGetFunction(&f, m, "mixed"));
    size_t off[5], size[5];
    for (int i = 0; i < 5; i++)
        CHECK(cuFuncGetParamInfo(f, i, &off[i], &size[i]));
    printf("mixed: offsets %zu %zu %zu %zu %zu, sizes %zu %zu %zu %zu %zu\n",
           off[0], off[1], off[2], off[3], off[4], size[0], size[1], size[2],
           size[3], size[4]);
    size_t poff = 0, psize = 0;
    printf("mixed: a sixth parameter: %s\n",
           drv_name(cuFuncGetParamInfo(f, 5, &poff, &psize)));
    CHECK(cuMemAlloc(&out, 6 * sizeof(long long)));
    CHECK(cuMemsetD8(out, 0, 6 * sizeof(long long)));
    alignas(8) unsigned char buf[64] = {0};
    char c = 'g';
    double d = 2.5;
    short s = -7;
    Pair p = {'q', 10.5, 99};
    memcpy(buf + off[0], &out, sizeof(out));
    memcpy(buf + off[1], &c, sizeof(c));
    memcpy(buf + off[2], &d, sizeof(d));
    memcpy(buf + off[3], &s, sizeof(s));
    memcpy(buf + off[4], &p, sizeof(p));
    size_t len = off[4] + size[4];
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
                     CU_LAUNCH_PARAM_BUFFER_SIZE, &len, CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra));
    long long h[6];
    CHECK(cuMemcpyDtoH(h, out, sizeof(h)));
    printf("extra: %lld %lld %lld %lld %lld %lld\n", h[0], h[1], h[2], h[3],
           h[4], h[5]);
    // The size first, then the pointer: the same launch.
    void *swapped[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &len,
                       CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
                       CU_LAUNCH_PARAM_END};
    CHECK(cuMemsetD8(out, 0, 6 * sizeof(long long)));
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, swapped));
    CHECK(cuMemcpyDtoH(h, out, sizeof(h)));
    printf("extra, size first: %lld %lld\n", h[0], h[5]);
    void *params[] = {&out, &c, &d, &s, &p};
    printf("kernelParams and extra both: %s\n",
           drv_name(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params,
                                   extra)));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemFree(out));
}

// cuLaunchKernelEx with attributes, dynamic shared memory, streams and
// events, and the errors a launch gets at once.
static void launches(CUmodule m, CUdevice dev)
{
    CUfunction f;
    CUdeviceptr in, out;
    const int blocks = 8, threads = 128;
    CHECK(cuModuleGetFunction(&f, m, "block_sum"));
    CHECK(cuMemAlloc(&in, blocks * threads * sizeof(int)));
    CHECK(cuMemAlloc(&out, blocks * sizeof(int)));
    CHECK(cuMemsetD32(in, 2, blocks * threads));
    // The memset may still run when it returns, and a non-blocking
    // stream does not wait for the legacy one (seen natively: a block
    // summed a half-set input).
    CHECK(cuCtxSynchronize());
    CUstream st;
    CUevent start, stop;
    CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    float ms = 0;
    printf("elapsed time before a record: %s\n",
           drv_name(cuEventElapsedTime(&ms, start, stop)));
    CHECK(cuEventRecord(start, st));
    CUlaunchAttribute attrs[2];
    memset(attrs, 0, sizeof(attrs));
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attrs[0].value.priority = 0;
    int coop = 0;
    CHECK(cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                               dev));
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[1].value.cooperative = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = blocks;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = threads * sizeof(int);
    cfg.hStream = st;
    cfg.attrs = attrs;
    cfg.numAttrs = coop ? 2 : 1;
    void *args[] = {&out, &in};
    CHECK(cuLaunchKernelEx(&cfg, f, args, NULL));
    CHECK(cuEventRecord(stop, st));
    CHECK(cuStreamWaitEvent(NULL, stop, 0));
    CHECK(cuEventSynchronize(stop));
    CHECK(cuEventElapsedTime(&ms, start, stop));
    printf("events: elapsed >= 0: %d, query: %s\n", ms >= 0,
           drv_name(cuEventQuery(stop)));
    int *pinned;
    CHECK(cuMemAllocHost((void **)&pinned, blocks * sizeof(int)));
    CHECK(cuMemcpyDtoHAsync(pinned, out, blocks * sizeof(int), st));
    CHECK(cuStreamSynchronize(st));
    printf("launch with attributes (%d): block sums %d .. %d, stream: %s\n",
           cfg.numAttrs, pinned[0], pinned[blocks - 1],
           drv_name(cuStreamQuery(st)));
    // A synchronous copy into page-locked memory on the legacy stream,
    // behind a launch there: it returns with the launch's sums.
    memset(pinned, 0, blocks * sizeof(int));
    CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1,
                         threads * sizeof(int), NULL, args, NULL));
    CHECK(cuMemcpyDtoH(pinned, out, blocks * sizeof(int)));
    printf("legacy stream, synchronous copy: block sums %d .. %d\n",
           pinned[0], pinned[blocks - 1]);

    int v = 0;
    CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    printf("block_sum: max threads per block > 0: %d\n", v > 0);
    CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    printf("block_sum: static shared bytes %d\n", v);
    CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    printf("block_sum: registers > 0: %d\n", v > 0);

    // Errors a driver answers at once.
    int maxShared = 0;
    CHECK(cuDeviceGetAttribute(
        &maxShared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        dev));
    printf("grid of 0: %s\n",
           drv_name(cuLaunchKernel(f, 0, 1, 1, threads, 1, 1, 0, st, args,
                                   NULL)));
    printf("block of 2048: %s\n",
           drv_name(cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, st, args,
                                   NULL)));
    printf("too much shared memory: %s\n",
           drv_name(cuLaunchKernel(f, 1, 1, 1, threads, 1, 1,
                                   (unsigned)maxShared + 4096, st, args,
                                   NULL)));
    printf("a function that is none: %s\n",
           drv_name(cuLaunchKernel(NULL, 1, 1, 1, threads, 1, 1, 0, st, args,
                                   NULL)));
    CUfunction none;
    printf("a name the module lacks: %s\n",
           drv_name(cuModuleGetFunction(&none, m, "nope")));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemFreeHost(pinned));
    CHECK(cuEventDestroy(start));
    CHECK(cuEventDestroy(stop));
    CHECK(cuStreamDestroy(st));
    CHECK(cuMemFree(in));
    CHECK(cuMemFree(out));
}

// Memsets and copies of each form, checked on the host.
static void copies()
{
    const size_t w = 96, h = 40;
    CUdeviceptr a, b, pitched;
    size_t pitch = 0;
    CHECK(cuMemAlloc(&a, 4096));
    CHECK(cuMemAlloc(&b, 4096));
    CHECK(cuMemsetD8(a, 0x11, 4096));
    CHECK(cuMemsetD16(a + 1024, 0x2233, 512));
    CHECK(cuMemsetD32Async(a + 2048, 0x44556677u, 256, NULL));
    CHECK(cuMemcpyDtoD(b, a, 4096));
    CHECK(cuMemcpyDtoDAsync(b + 3072, a, 1024, NULL));
    std::vector<unsigned char> host(4096);
    CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)host.data(), b, 4096));
    unsigned long sum = 0;
    for (unsigned char x : host)
        sum += x;
    printf("memsets and copies: sum %lu\n", sum);

    CHECK(cuMemAllocPitch(&pitched, &pitch, w, h, 4));
    CHECK(cuMemsetD2D32(pitched, pitch, 0x01010101u, w / 4, h));
    std::vector<unsigned char> src(w * h), back(w * h, 0);
    for (size_t i = 0; i < src.size(); i++)
        src[i] = (unsigned char)(i * 7);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src.data();
    c.srcPitch = w;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = pitched;
    c.dstPitch = pitch;
    c.WidthInBytes = w / 2;
    c.Height = h;
    CHECK(cuMemcpy2D(&c));
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = pitched;
    c.srcPitch = pitch;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = back.data();
    c.dstPitch = w;
    c.WidthInBytes = w;
    c.Height = h;
    CHECK(cuMemcpy2DAsync(&c, NULL));
    CHECK(cuCtxSynchronize());
    sum = 0;
    for (unsigned char x : back)
        sum += x;
    printf("2D: pitch >= width: %d, sum %lu\n", pitch >= w, sum);
    CHECK(cuMemFree(pitched));
    CHECK(cuMemFree(a));
    CHECK(cuMemFree(b));
}

// Two created contexts on the primary one's device: the thread's stack
// pushed, popped and set; a module and memory of each context.
static void contexts(CUdevice dev, CUcontext primary)
{
    CUcontext a, b, cur;
    CHECK(cuCtxCreate(&a, NULL, 0, dev));
    CHECK(cuCtxCreate(&b, NULL, 0, dev));
    CHECK(cuCtxGetCurrent(&cur));
    printf("after two creates, current is the second: %d\n", cur == b);
    CHECK(cuCtxPopCurrent(&cur));
    printf("popped the second: %d\n", cur == b);
    CHECK(cuCtxGetCurrent(&cur));
    printf("then the first: %d\n", cur == a);
    CUmodule ma, mb;
    CHECK(cuModuleLoad(&ma, image_path("driver_api", "ptx").c_str()));
    run_axpb(ma, "first context", 11);
    CHECK(cuCtxPushCurrent(b));
    CHECK(cuModuleLoad(&mb, image_path("driver_api", "fatbin").c_str()));
    run_axpb(mb, "second context", 12);
    CHECK(cuCtxSetCurrent(primary));
    CHECK(cuCtxGetCurrent(&cur));
    printf("set replaced the top: %d\n", cur == primary);
    CHECK(cuCtxPopCurrent(&cur));
    CHECK(cuCtxGetCurrent(&cur));
    printf("below it, the first: %d\n", cur == a);
    CHECK(cuCtxPushCurrent(b));
    CHECK(cuModuleUnload(mb));
    CHECK(cuCtxPopCurrent(NULL));
    CHECK(cuModuleUnload(ma));
    CUdevice d = -1;
    CHECK(cuCtxGetDevice(&d));
    unsigned version = 0;
    CHECK(cuCtxGetApiVersion(a, &version));
    printf("device of the first: %d, api version > 0: %d\n", d == dev,
           version > 0);
    CHECK(cuCtxDestroy(b));
    CHECK(cuCtxDestroy(a));
    CHECK(cuCtxGetCurrent(&cur));
    printf("destroyed the current one: the primary is current: %d\n",
           cur == primary);
    CHECK(cuCtxPopCurrent(&cur));
    CHECK(cuCtxGetCurrent(&cur));
    printf("popped the last: current is none: %d\n", cur == NULL);
    printf("pop an empty stack: %s\n", drv_name(cuCtxPopCurrent(&cur)));
}

int main()
{
    CHECK(cuInit(0));
    int count = 0, version = 0;
    CHECK(cuDeviceGetCount(&count));
    CHECK(cuDriverGetVersion(&version));
    printf("devices > 0: %d, driver version >= 13000: %d\n", count > 0,
           version >= 13000);
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    char name[256];
    CHECK(cuDeviceGetName(name, sizeof(name), dev));
    printf("device 0 named: %d\n", name[0] != '\0');

    CUcontext primary;
    CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CHECK(cuCtxSetCurrent(primary));
    modules(dev);
    CUmodule m;
    CHECK(cuModuleLoad(&m, image_path("driver_api", "fatbin").c_str()));
    extra_launch(m);
    launches(m, dev);
    CHECK(cuModuleUnload(m));
    copies();
    contexts(dev, primary);
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("done\n");
    return 0;
}
