// Kernels compiled at run time with NVRTC, on the client (it needs no
// driver), and run through the driver alone, C++ with no runtime
// (CMakeLists.txt): a template kernel instantiated by name expressions
// and found by its lowered names, compiled to a CUBIN for this GPU (--gpu-architecture=sm_XY) and to PTX (compute_XY); the
// CUBIN loaded with cuModuleLoadData and cuLibraryLoadData, the PTX with
// cuModuleLoadDataEx and JIT options; launched with kernelParams.
#include "driver_check.h"

#include <cstring>
#include <nvrtc.h>

#define CHECK_NVRTC(call) CHECK_LIB(call, NVRTC_SUCCESS, "NVRTC")

static const char *source = R"(
template <typename T, int M>
__global__ void scale(T *p, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * factor + T(M);
}

extern "C" __global__ void iota(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = i;
}
)";

static const char *const names[] = {"scale<float, 2>", "scale<int, 5>"};

// A compilation of source for arch (sm_XY or compute_XY): the code (the
// CUBIN or the PTX), and the lowered name of each name expression.
struct compiled {
    std::vector<char> code;
    std::string lowered[2];
};

static compiled compile(const std::string &arch, bool cubin)
{
    nvrtcProgram prog;
    compiled out;
    CHECK_NVRTC(nvrtcCreateProgram(&prog, source, "kernels.cu", 0, NULL,
                                   NULL));
    for (const char *n : names)
        CHECK_NVRTC(nvrtcAddNameExpression(prog, n));
    std::string opt = "--gpu-architecture=" + arch;
    const char *opts[] = {opt.c_str()};
    nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    if (r != NVRTC_SUCCESS) {
        size_t len = 0;
        nvrtcGetProgramLogSize(prog, &len);
        std::string log(len, '\0');
        nvrtcGetProgramLog(prog, &log[0]);
        printf("FAIL nvrtcCompileProgram %s: %s\n%s\n", arch.c_str(),
               nvrtcGetErrorString(r), log.c_str());
        exit(1);
    }
    for (int i = 0; i < 2; i++) {
        const char *lowered;
        CHECK_NVRTC(nvrtcGetLoweredName(prog, names[i], &lowered));
        out.lowered[i] = lowered;
    }
    size_t size = 0;
    if (cubin) {
        CHECK_NVRTC(nvrtcGetCUBINSize(prog, &size));
        out.code.resize(size);
        CHECK_NVRTC(nvrtcGetCUBIN(prog, out.code.data()));
    } else {
        CHECK_NVRTC(nvrtcGetPTXSize(prog, &size));
        out.code.resize(size);
        CHECK_NVRTC(nvrtcGetPTX(prog, out.code.data()));
    }
    CHECK_NVRTC(nvrtcDestroyProgram(&prog));
    return out;
}

// iota, then both instances of scale, on n elements: the sum of each
// result.
static void run(CUfunction iota, CUfunction sf, CUfunction si,
                const char *how)
{
    const int n = 1000;
    CUdeviceptr pf, pi;
    CHECK(cuMemAlloc(&pf, n * sizeof(float)));
    CHECK(cuMemAlloc(&pi, n * sizeof(int)));
    int count = n;
    void *a1[] = {&pi, &count};
    CHECK(cuLaunchKernel(iota, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, a1,
                         NULL));
    std::vector<float> hf(n);
    for (int i = 0; i < n; i++)
        hf[i] = 0.5f * i;
    CHECK(cuMemcpyHtoD(pf, hf.data(), n * sizeof(float)));
    float ff = 4.0f;
    int fi = 3;
    void *a2[] = {&pf, &ff, &count};
    void *a3[] = {&pi, &fi, &count};
    CHECK(cuLaunchKernel(sf, (n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, a2,
                         NULL));
    CHECK(cuLaunchKernel(si, (n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, a3,
                         NULL));
    std::vector<int> hi(n);
    CHECK(cuMemcpyDtoH(hf.data(), pf, n * sizeof(float)));
    CHECK(cuMemcpyDtoH(hi.data(), pi, n * sizeof(int)));
    double sumf = 0;
    long sumi = 0;
    for (int i = 0; i < n; i++) {
        sumf += hf[i];
        sumi += hi[i];
    }
    printf("%s: float sum %.1f, int sum %ld\n", how, sumf, sumi);
    CHECK(cuMemFree(pf));
    CHECK(cuMemFree(pi));
}

static void run_module(CUmodule m, const compiled &c, const char *how)
{
    CUfunction iota, sf, si;
    CHECK(cuModuleGetFunction(&iota, m, "iota"));
    CHECK(cuModuleGetFunction(&sf, m, c.lowered[0].c_str()));
    CHECK(cuModuleGetFunction(&si, m, c.lowered[1].c_str()));
    run(iota, sf, si, how);
}

int main()
{
    int major = 0, minor = 0;
    CHECK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuDeviceGet(&dev, 0));
    // Deprecated, still what NVRTC programs ask.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK(cuDeviceComputeCapability(&major, &minor, dev));
#pragma GCC diagnostic pop
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    std::string xy = std::to_string(major * 10 + minor);

    compiled cubin = compile("sm_" + xy, true);
    compiled ptx = compile("compute_" + xy, false);
    printf("lowered: %s %s\n", cubin.lowered[0].c_str(),
           cubin.lowered[1].c_str());
    printf("the same in both: %d\n", cubin.lowered[0] == ptx.lowered[0] &&
                                         cubin.lowered[1] == ptx.lowered[1]);
    printf("cubin is ELF: %d, ptx is text: %d\n",
           memcmp(cubin.code.data(), "\x7f" "ELF", 4) == 0,
           ptx.code.back() == '\0' && strlen(ptx.code.data()) + 1 ==
                                          ptx.code.size());

    CUmodule m;
    CHECK(cuModuleLoadData(&m, cubin.code.data()));
    run_module(m, cubin, "cubin module");
    CHECK(cuModuleUnload(m));

    char info[8192], error[8192];
    CUjit_option opt[] = {CU_JIT_INFO_LOG_BUFFER,
                          CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_ERROR_LOG_BUFFER,
                          CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_OPTIMIZATION_LEVEL,
                          CU_JIT_GENERATE_LINE_INFO};
    void *val[] = {info, (void *)(uintptr_t)sizeof(info), error,
                   (void *)(uintptr_t)sizeof(error), (void *)(uintptr_t)4,
                   (void *)(uintptr_t)1};
    info[0] = error[0] = '\0';
    CHECK(cuModuleLoadDataEx(&m, ptx.code.data(), 6, opt, val));
    printf("ptx module: error log empty: %d\n", error[0] == '\0');
    run_module(m, ptx, "ptx module");
    CHECK(cuModuleUnload(m));

    CUlibrary lib;
    CHECK(cuLibraryLoadData(&lib, cubin.code.data(), NULL, NULL, 0, NULL,
                            NULL, 0));
    CUkernel kiota, ksf, ksi;
    CHECK(cuLibraryGetKernel(&kiota, lib, "iota"));
    CHECK(cuLibraryGetKernel(&ksf, lib, cubin.lowered[0].c_str()));
    CHECK(cuLibraryGetKernel(&ksi, lib, cubin.lowered[1].c_str()));
    run((CUfunction)kiota, (CUfunction)ksf, (CUfunction)ksi,
        "cubin library");
    CHECK(cuLibraryUnload(lib));

    val[3] = (void *)(uintptr_t)sizeof(error);
    CHECK(cuLibraryLoadData(&lib, ptx.code.data(), opt, val, 6, NULL, NULL,
                            0));
    CHECK(cuLibraryGetKernel(&kiota, lib, "iota"));
    CHECK(cuLibraryGetKernel(&ksf, lib, ptx.lowered[0].c_str()));
    CHECK(cuLibraryGetKernel(&ksi, lib, ptx.lowered[1].c_str()));
    run((CUfunction)kiota, (CUfunction)ksf, (CUfunction)ksi, "ptx library");
    CHECK(cuLibraryUnload(lib));

    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("done\n");
    return 0;
}
