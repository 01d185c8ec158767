// cudart.mock_kernels: kernel attributes, occupancy, launches with a
// configuration and attributes, templated and overloaded kernels, and
// device printf/assert output of an unmodified -cudart shared program,
// through our libcudart.so.13 and a gvsd whose cudart plugin runs on the
// host-memory mock (mock_cudart.c, mock_kernels.c).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <unistd.h>
#include <vector>

// Failures go to stderr: device_output() captures stdout.
#define MOCK_CHECK_OUT stderr
#include "mock_check.h"

template <typename T> __global__ void scale(T *p, T f, int n) {}
template __global__ void scale<float>(float *, float, int);
template __global__ void scale<double>(double *, double, int);
__global__ void over(int *p) {}
__global__ void over(int *p, int v) {}
__global__ void echo_attrs(int *out) {}
__global__ void say(int v) {}
__global__ void complain(int v) {}

static void (*const over1)(int *) = over;
static void (*const over2)(int *, int) = over;

static void layouts()
{
    size_t off, size;
    const size_t f_off[] = {0, 8, 12}, f_size[] = {8, 4, 4};
    const size_t d_off[] = {0, 8, 16}, d_size[] = {8, 8, 4};
    for (int i = 0; i < 3; i++) {
        OK(cudaFuncGetParamInfo((const void *)scale<float>, i, &off, &size));
        CHECK(off == f_off[i] && size == f_size[i]);
        OK(cudaFuncGetParamInfo((const void *)scale<double>, i, &off, &size));
        CHECK(off == d_off[i] && size == d_size[i]);
    }
    CHECK(cudaFuncGetParamInfo((const void *)scale<float>, 3, &off, &size) ==
          cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    OK(cudaFuncGetParamInfo((const void *)over2, 1, &off, &size));
    CHECK(off == 8 && size == 4);
    CHECK(cudaFuncGetParamInfo((const void *)over1, 1, &off, &size) ==
          cudaErrorInvalidValue);

    const char *name = NULL;
    OK(cudaFuncGetName(&name, (const void *)scale<double>));
    CHECK(strcmp(name, "_Z5scaleIdEvPT_S0_i") == 0);
    OK(cudaFuncGetName(&name, (const void *)over2));
    CHECK(strcmp(name, "_Z4overPii") == 0);
    CHECK(cudaFuncGetName(&name, (const void *)layouts) ==
          cudaErrorInvalidResourceHandle);
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);

    float hf[4] = {1, 2, 3, 4};
    double hd[4] = {1, 2, 3, 4};
    int hi[2] = {0, 0};
    float *df;
    double *dd;
    int *di;
    OK(cudaMalloc(&df, sizeof(hf)));
    OK(cudaMalloc(&dd, sizeof(hd)));
    OK(cudaMalloc(&di, sizeof(hi)));
    OK(cudaMemcpy(df, hf, sizeof(hf), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(dd, hd, sizeof(hd), cudaMemcpyHostToDevice));
    scale<<<1, 4>>>(df, 2.5f, 3);
    scale<<<1, 4>>>(dd, 0.5, 4);
    over<<<1, 1>>>(di);
    over<<<1, 1>>>(di + 1, 77);
    OK(cudaGetLastError());
    float f = 3.0f;
    int n = 4;
    void *args[] = {&df, &f, &n};
    OK(cudaLaunchKernel((const void *)scale<float>, 1, 4, args, 0, 0));
    OK(cudaMemcpy(hf, df, sizeof(hf), cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(hd, dd, sizeof(hd), cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(hi, di, sizeof(hi), cudaMemcpyDeviceToHost));
    CHECK(hf[0] == 7.5f && hf[2] == 22.5f && hf[3] == 12.0f);
    CHECK(hd[0] == 0.5 && hd[3] == 2.0);
    CHECK(hi[0] == 1 && hi[1] == 77);
    OK(cudaFree(df));
    OK(cudaFree(dd));
    OK(cudaFree(di));
}

static void attributes()
{
    cudaFuncAttributes a;
    OK(cudaFuncGetAttributes(&a, (const void *)over2));
    CHECK(a.numRegs == 18 && a.maxThreadsPerBlock == 1024 &&
          a.maxDynamicSharedSizeBytes == 49152 && a.binaryVersion == 90);
    OK(cudaFuncSetAttribute((const void *)over2,
                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                            100000));
    OK(cudaFuncGetAttributes(&a, (const void *)over2));
    CHECK(a.maxDynamicSharedSizeBytes == 100000);
    CHECK(cudaFuncSetAttribute((const void *)over2,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               1 << 30) == cudaErrorInvalidValue);
    // As CUDA answers a query about a function that is no kernel.
    CHECK(cudaFuncGetAttributes(&a, (const void *)attributes) ==
          cudaErrorInvalidResourceHandle);
    CHECK(cudaFuncSetAttribute((const void *)attributes,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               0) == cudaErrorInvalidResourceHandle);
    CHECK(cudaFuncGetAttributes(NULL, (const void *)over2) ==
          cudaErrorInvalidValue);
    OK(cudaFuncSetCacheConfig((const void *)over1, cudaFuncCachePreferShared));
    CHECK(cudaFuncSetCacheConfig((const void *)over1, (cudaFuncCache)9) ==
          cudaErrorInvalidValue);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(cudaFuncSetSharedMemConfig((const void *)over1,
                                  cudaSharedMemBankSizeEightByte));
#pragma GCC diagnostic pop

    cudaKernel_t k;
    OK(cudaGetKernel(&k, (const void *)over1));
    OK(cudaKernelSetAttributeForDevice(
        k, cudaFuncAttributePreferredSharedMemoryCarveout, 50, 1));
    CHECK(cudaKernelSetAttributeForDevice(
              k, cudaFuncAttributePreferredSharedMemoryCarveout, 50, 7) ==
          cudaErrorInvalidDevice);
    OK(cudaFuncGetAttributes(&a, (const void *)k));
    CHECK(a.preferredShmemCarveout == 50 && a.numRegs == 17);
    cudaFunction_t fn;
    OK(cudaGetFuncBySymbol(&fn, (const void *)over1));
    OK(cudaFuncGetAttributes(&a, (const void *)fn));
    CHECK(a.preferredShmemCarveout == 50);
    CHECK(cudaGetKernel(&k, (const void *)attributes) ==
          cudaErrorInvalidDeviceFunction);
}

static void occupancy()
{
    int blocks = 0;
    size_t smem = 0;
    OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks,
                                                     (const void *)over1, 256,
                                                     0));
    CHECK(blocks == 8);
    OK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &blocks, (const void *)over1, 1024, 0,
        cudaOccupancyDisableCachingOverride));
    CHECK(blocks == 2);
    OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks,
                                                     (const void *)over2, 256,
                                                     60000));
    CHECK(blocks == 3);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &blocks, (const void *)over2, 2048, 0) == cudaErrorInvalidValue);
    OK(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, (const void *)over2,
                                                 4, 256));
    CHECK(smem == 58368);

    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(8);
    cfg.blockDim = dim3(128);
    int v = 0;
    OK(cudaOccupancyMaxPotentialClusterSize(&v, (const void *)over1, &cfg));
    CHECK(v == 16);
    CHECK(cudaOccupancyMaxActiveClusters(&v, (const void *)over1, &cfg) ==
          cudaErrorInvalidClusterSize);
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    OK(cudaOccupancyMaxActiveClusters(&v, (const void *)over1, &cfg));
    CHECK(v == 1056);
}

// Every attribute the wire knows, each with values of its own, echoed
// back by the mock kernel echo_attrs.
static void launch_ex()
{
    int *d, *out, h[128];
    cudaEvent_t ev;
    OK(cudaMalloc(&d, 4096));
    OK(cudaMalloc(&out, sizeof(h)));
    OK(cudaEventCreate(&ev));
    std::vector<cudaLaunchAttribute> a(15);
    for (auto &x : a)
        memset(&x, 0, sizeof(x));
    a[0].id = cudaLaunchAttributeAccessPolicyWindow;
    a[0].val.accessPolicyWindow.base_ptr = d;
    a[0].val.accessPolicyWindow.num_bytes = 4096;
    a[0].val.accessPolicyWindow.hitRatio = 0.5f;
    a[0].val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    a[0].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    a[1].id = cudaLaunchAttributeCooperative;
    a[1].val.cooperative = 1;
    a[2].id = cudaLaunchAttributeClusterDimension;
    a[2].val.clusterDim = {2, 1, 1};
    a[3].id = cudaLaunchAttributePriority;
    a[3].val.priority = 3;
    a[4].id = cudaLaunchAttributeMemSyncDomainMap;
    a[4].val.memSyncDomainMap.default_ = 1;
    a[4].val.memSyncDomainMap.remote = 2;
    a[5].id = cudaLaunchAttributeMemSyncDomain;
    a[5].val.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    a[6].id = cudaLaunchAttributePreferredClusterDimension;
    a[6].val.preferredClusterDim = {4, 1, 1};
    a[7].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
    a[7].val.sharedMemCarveout = 25;
    a[8].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a[8].val.programmaticStreamSerializationAllowed = 1;
    a[9].id = cudaLaunchAttributeSynchronizationPolicy;
    a[9].val.syncPolicy = cudaSyncPolicySpin;
    a[10].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
    a[10].val.clusterSchedulingPolicyPreference =
        cudaClusterSchedulingPolicySpread;
    a[11].id = cudaLaunchAttributeNvlinkUtilCentricScheduling;
    a[11].val.nvlinkUtilCentricScheduling = 1;
    a[12].id = cudaLaunchAttributeLaunchCompletionEvent;
    a[12].val.launchCompletionEvent.event = ev;
    a[12].val.launchCompletionEvent.flags = 0;
    a[13].id = cudaLaunchAttributeIgnore;
    a[14].id = cudaLaunchAttributeDeviceUpdatableKernelNode;
    a[14].val.deviceUpdatableKernelNode.deviceUpdatable = 1;

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(4);
    cfg.blockDim = dim3(32);
    cfg.dynamicSmemBytes = 1024;
    cfg.attrs = a.data();
    cfg.numAttrs = (unsigned)a.size();
    OK(cudaLaunchKernelEx(&cfg, over2, d, 5));
    echo_attrs<<<1, 1>>>(out);
    OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
    const int want[] = {
        0, 1024, 15,
        1, (int)(uintptr_t)d, 4096, 50, cudaAccessPropertyPersisting,
        cudaAccessPropertyStreaming,
        2, 1,
        4, 2, 1, 1,
        8, 3,
        9, 1, 2,
        10, cudaLaunchMemSyncDomainRemote,
        11, 4, 1, 1,
        14, 25,
        6, 1,
        3, cudaSyncPolicySpin,
        5, cudaClusterSchedulingPolicySpread,
        16, 1,
        12, 1, 0,
        0, 0,
        13, 1,
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (h[i] != want[i]) {
            fprintf(stderr, "FAIL: echo[%zu] = %d, not %d\n", i, h[i],
                    want[i]);
            exit(1);
        }
    OK(cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 5);

    // CUDA's checks come back as CUDA's codes; ours come first.
    cfg.numAttrs = 3;
    cfg.gridDim = dim3(3);
    CHECK(cudaLaunchKernelEx(&cfg, over2, d, 5) == cudaErrorInvalidClusterSize);
    CHECK(cudaGetLastError() == cudaErrorInvalidClusterSize);
    cfg.gridDim = dim3(4);
    a[0].id = (cudaLaunchAttributeID)99;
    CHECK(cudaLaunchKernelEx(&cfg, over2, d, 5) == cudaErrorInvalidValue);
    a[0].id = cudaLaunchAttributeLaunchCompletionEvent;
    a[0].val.launchCompletionEvent.event = (cudaEvent_t)(uintptr_t)0x5150000;
    CHECK(cudaLaunchKernelEx(&cfg, over2, d, 5) ==
          cudaErrorInvalidResourceHandle);
    cfg.numAttrs = 65;
    CHECK(cudaLaunchKernelExC(&cfg, (const void *)over2, NULL) ==
          cudaErrorInvalidValue);
    cfg.numAttrs = 1;
    cfg.attrs = NULL;
    CHECK(cudaLaunchKernelEx(&cfg, over2, d, 5) == cudaErrorInvalidValue);
    cfg.numAttrs = 0;
    cfg.dynamicSmemBytes = 200000;
    CHECK(cudaLaunchKernelEx(&cfg, over1, d) == cudaErrorInvalidValue);
    CHECK(cudaLaunchKernelExC(NULL, (const void *)over1, NULL) ==
          cudaErrorInvalidValue);
    cfg.dynamicSmemBytes = 0;
    CHECK(cudaLaunchKernelExC(&cfg, (const void *)launch_ex, NULL) ==
          cudaErrorInvalidResourceHandle);

    void *args[] = {&d};
    OK(cudaLaunchCooperativeKernel((const void *)over1, 2, 32, args, 0, 0));
    echo_attrs<<<1, 1>>>(out);
    OK(cudaMemcpy(h, out, 12, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 1 && h[1] == 0 && h[2] == 0);
    CHECK(cudaLaunchCooperativeKernel((const void *)over1, 10000, 1024, args,
                                      0, 0) ==
          cudaErrorCooperativeLaunchTooLarge);

    // A plain launch goes through the driver's cuLaunchKernel (entry 2);
    // one the driver refuses gets the runtime's code.
    over2<<<2, 32, 256>>>(d, 7);
    echo_attrs<<<1, 1>>>(out);
    OK(cudaMemcpy(h, out, 12, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 2 && h[1] == 256 && h[2] == 0);
    OK(cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 7);
    over2<<<1, 2048>>>(d, 8);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    OK(cudaDeviceSynchronize());
    OK(cudaEventDestroy(ev));
    OK(cudaFree(d));
    OK(cudaFree(out));
}

// What the program writes on descriptor fd while f runs.
template <typename F> static std::string captured(int fd, F f)
{
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = dup(fd);
    CHECK(tmp != NULL && saved >= 0 && dup2(fileno(tmp), fd) == fd);
    f();
    fflush(stdout);
    CHECK(dup2(saved, fd) == fd);
    close(saved);
    std::string s;
    char buf[4096];
    rewind(tmp);
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
        s.append(buf, n);
    fclose(tmp);
    return s;
}

static void device_output()
{
    // The output of work before a synchronization is written before it
    // returns, between what the program printed before and after.
    std::string out = captured(1, [] {
        printf("host before\n");
        say<<<1, 1>>>(42);
        cudaDeviceSynchronize();
        printf("host after\n");
    });
    CHECK(out == "host before\nmock device says 42\nhost after\n");
    std::string err = captured(2, [] {
        complain<<<1, 1>>>(7);
        cudaDeviceSynchronize();
    });
    CHECK(err == "mock assertion 7 failed\n");
    // More than one notification's worth, in order.
    out = captured(1, [] {
        for (int i = 0; i < 4000; i++)
            say<<<1, 1>>>(i);
        cudaDeviceSynchronize();
    });
    std::string want;
    for (int i = 0; i < 4000; i++)
        want += "mock device says " + std::to_string(i) + "\n";
    CHECK(out == want);
}

int main()
{
    layouts();
    attributes();
    occupancy();
    launch_ex();
    device_output();
    printf("ok\n");
    return 0;
}
