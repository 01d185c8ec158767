// JIT linking through the driver alone, C++ with no runtime
// (CMakeLists.txt): driver_link/kernel.cu uses a function and a
// variable of driver_link/helpers.cu, both relocatable device code
// (driver_jit_link.cmake).  The kernel's PTX is added from memory
// (cuLinkAddData), the helpers from the build's PTX file and from its
// cubin for this GPU (cuLinkAddFile); the linked image is loaded and
// launched.  The logs and output options the driver writes, a link with
// a symbol missing and one of PTX that does not compile.
#include "driver_check.h"

#include <cstring>

static const int N = 512;

// The options of every link: the logs, verbose, the wall time, the
// optimization level.
struct link_options {
    char info[16384], error[16384];
    CUjit_option opt[6] = {CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_LOG_VERBOSE,
                           CU_JIT_WALL_TIME};
    void *val[6];

    link_options()
    {
        info[0] = error[0] = '\0';
        val[0] = info;
        val[1] = (void *)(uintptr_t)sizeof(info);
        val[2] = error;
        val[3] = (void *)(uintptr_t)sizeof(error);
        val[4] = (void *)(uintptr_t)1;
        val[5] = NULL;
    }

    // What the driver wrote, in words that do not depend on its version.
    void print(const char *how) const
    {
        float ms;
        memcpy(&ms, &val[5], sizeof(ms));
        printf("%s: info log written: %d (size %d), error log written: %d "
               "(size %d), wall time >= 0: %d\n",
               how, info[0] != '\0',
               (size_t)(uintptr_t)val[1] == strlen(info) + 1,
               error[0] != '\0',
               (size_t)(uintptr_t)val[3] == strlen(error) + 1, ms >= 0);
    }
};

// The linked image loaded and apply launched: p[i] = 3 * i + 7.
static void run(void *cubin, size_t size, const char *how)
{
    CUmodule m;
    CUfunction f;
    CUdeviceptr p;
    CHECK(cuModuleLoadData(&m, cubin));
    CHECK(cuModuleGetFunction(&f, m, "apply"));
    std::vector<int> h(N);
    for (int i = 0; i < N; i++)
        h[i] = i;
    CHECK(cuMemAlloc(&p, N * sizeof(int)));
    CHECK(cuMemcpyHtoD(p, h.data(), N * sizeof(int)));
    int n = N;
    void *args[] = {&p, &n};
    CHECK(cuLaunchKernel(f, N / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CHECK(cuMemcpyDtoH(h.data(), p, N * sizeof(int)));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= h[i] == 3 * i + 7;
    printf("%s: image > 0 bytes: %d, results right: %d\n", how, size > 0,
           ok);
    CHECK(cuMemFree(p));
    CHECK(cuModuleUnload(m));
}

// The kernel's PTX linked with the helpers of file (type).
static void link_with(std::vector<char> &kernel, CUjitInputType type,
                      const std::string &file, const char *how)
{
    link_options o;
    CUlinkState s;
    void *cubin;
    size_t size = 0;
    CHECK(cuLinkCreate(6, o.opt, o.val, &s));
    CHECK(cuLinkAddData(s, CU_JIT_INPUT_PTX, kernel.data(), kernel.size(),
                        "kernel.ptx", 0, NULL, NULL));
    CHECK(cuLinkAddFile(s, type, file.c_str(), 0, NULL, NULL));
    CHECK(cuLinkComplete(s, &cubin, &size));
    o.print(how);
    run(cubin, size, how);
    CHECK(cuLinkDestroy(s));
}

int main()
{
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));

    std::vector<char> kernel =
        read_file(image_path("driver_link_kernel", "ptx"));
    EXPECT(!kernel.empty());
    link_with(kernel, CU_JIT_INPUT_PTX,
              image_path("driver_link_helpers", "ptx"), "PTX + PTX file");
    std::string cubin = cubin_path("driver_link_helpers", dev);
    if (cubin.empty())
        printf("PTX + cubin file: no cubin for this GPU\n");
    else
        link_with(kernel, CU_JIT_INPUT_CUBIN, cubin, "PTX + cubin file");

    // The helpers missing: the link fails at completion, with its log.
    {
        link_options o;
        CUlinkState s;
        void *out;
        size_t size;
        CHECK(cuLinkCreate(6, o.opt, o.val, &s));
        CHECK(cuLinkAddData(s, CU_JIT_INPUT_PTX, kernel.data(),
                            kernel.size(), "kernel.ptx", 0, NULL, NULL));
        printf("a symbol missing: %s\n",
               drv_name(cuLinkComplete(s, &out, &size)));
        o.print("a symbol missing");
        CHECK(cuLinkDestroy(s));
    }
    // PTX that does not compile: the input is refused, with its log.
    {
        static const char bad[] = ".version 8.0\n.target sm_75\n"
                                  ".address_size 64\n"
                                  ".visible .entry broken() { bogus; }\n";
        link_options o;
        CUlinkState s;
        CHECK(cuLinkCreate(6, o.opt, o.val, &s));
        printf("bad PTX: %s\n",
               drv_name(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)bad,
                                      sizeof(bad), "bad.ptx", 0, NULL,
                                      NULL)));
        o.print("bad PTX");
        CHECK(cuLinkDestroy(s));
    }
    printf("a missing file: %s\n", [&] {
        CUlinkState s;
        CHECK(cuLinkCreate(0, NULL, NULL, &s));
        CUresult r = cuLinkAddFile(s, CU_JIT_INPUT_PTX,
                                   "/nonexistent/gvs.ptx", 0, NULL, NULL);
        CHECK(cuLinkDestroy(s));
        return drv_name(r);
    }());
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("done\n");
    return 0;
}
