// cudart.mock_misc: the ops of api/80-misc.api through our libcudart.so.13
// and a gvsd whose cudart plugin runs on the host-memory mock
// (mock_misc.c, mock_cudart.c, mock_mem3d.c): pointer attributes, the
// profiler, hints, batches, legacy array copies, pools by location, IPC,
// the library API with launches of its kernels, device queries, range
// attributes, valid devices, the driver's logs, async notifications and
// log callbacks run on the client.
#include <atomic>
#include <cuda_profiler_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <unistd.h>

#include "mock_check.h"

static void pointers_and_hints()
{
    int *d, *m, *h;
    int local = 0;
    cudaPointerAttributes a;
    OK(cudaMalloc(&d, 64));
    OK(cudaMallocManaged(&m, 64));
    OK(cudaMallocHost(&h, 64));
    OK(cudaPointerGetAttributes(&a, d + 3));
    CHECK(a.type == cudaMemoryTypeDevice && a.device == 0 &&
          a.devicePointer == d + 3);
    OK(cudaPointerGetAttributes(&a, h));
    CHECK(a.type == cudaMemoryTypeHost && a.hostPointer == h);
    OK(cudaPointerGetAttributes(&a, &local));
    CHECK(a.type == cudaMemoryTypeUnregistered);

    OK(cudaProfilerStart());
    OK(cudaProfilerStop());
    OK(cudaCtxResetPersistingL2Cache());
    // A thread has no current context until a call of a device makes the
    // primary context current: the reset finds none before, as natively.
    std::thread([] {
        CHECK(cudaCtxResetPersistingL2Cache() == cudaErrorDeviceUninitialized);
        OK(cudaSetDevice(0));
        OK(cudaCtxResetPersistingL2Cache());
    }).join();
    std::thread([] {
        size_t stack;
        OK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
        OK(cudaCtxResetPersistingL2Cache());
    }).join();
    (void)cudaGetLastError();
    OK(cudaDeviceFlushGPUDirectRDMAWrites(
        cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
        cudaFlushGPUDirectRDMAWritesToOwner));
    cudaMemLocation dev0 = {cudaMemLocationTypeDevice, 0};
    OK(cudaMemAdvise(m, 64, cudaMemAdviseSetReadMostly, dev0));
    CHECK(cudaMemAdvise(m, 64, (cudaMemoryAdvise)99, dev0) ==
          cudaErrorInvalidValue);
    // The worker's own memory is never named as device memory.
    CHECK(cudaMemAdvise(&local, 4, cudaMemAdviseSetReadMostly, dev0) ==
          cudaErrorInvalidValue);
    OK(cudaStreamAttachMemAsync(0, m, 0, cudaMemAttachGlobal));

    // Range attributes come back into the program's buffers.
    int rm = 7, loc[3] = {1, 1, 1};
    OK(cudaMemRangeGetAttribute(&rm, 4, cudaMemRangeAttributeReadMostly, m,
                                64));
    CHECK(rm == 0);
    void *data[2] = {&rm, loc};
    size_t sizes[2] = {4, sizeof(loc)};
    cudaMemRangeAttribute attrs[2] = {cudaMemRangeAttributePreferredLocation,
                                      cudaMemRangeAttributeAccessedBy};
    rm = 5;
    OK(cudaMemRangeGetAttributes(data, sizes, attrs, 2, m, 64));
    CHECK(rm == 0 && loc[0] == -1 && loc[2] == -1);
    CHECK(cudaMemRangeGetAttribute(&rm, 3, cudaMemRangeAttributeReadMostly,
                                   m, 64) == cudaErrorInvalidValue);
    CHECK(cudaMemRangeGetAttributes(NULL, sizes, attrs, 2, m, 64) ==
          cudaErrorInvalidValue);
    CHECK(cudaMemRangeGetAttribute(&rm, 4, cudaMemRangeAttributeReadMostly,
                                   &local, 4) == cudaErrorInvalidValue);

    void *ptrs[1] = {m};
    size_t lens[1] = {64};
    OK(cudaMemDiscardBatchAsync(ptrs, lens, 1, 0, 0));
    size_t idx = 0;
    OK(cudaMemDiscardAndPrefetchBatchAsync(ptrs, lens, 1, &dev0, &idx, 1, 0,
                                           0));
    OK(cudaFree(d));
    OK(cudaFree(m));
    OK(cudaFreeHost(h));
}

static void batches_and_arrays()
{
    int src[64], back[64];
    for (int i = 0; i < 64; i++)
        src[i] = i * 3;
    int *d1, *d2;
    OK(cudaMalloc(&d1, sizeof(src)));
    OK(cudaMalloc(&d2, sizeof(src)));
    void *dsts[2] = {d1, d2};
    const void *srcs[2] = {src, src + 32};
    size_t sizes[2] = {128, 128};
    cudaMemcpyAttributes at = {};
    at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t ai = 0;
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    // The legacy stream carries no batch.
    CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &ai, 1, 0) ==
          cudaErrorInvalidValue);
    OK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &ai, 1, s));
    OK(cudaStreamSynchronize(s));
    OK(cudaStreamDestroy(s));
    OK(cudaMemcpy(back, d1, 128, cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(back + 32, d2, 128, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, src, sizeof(src)) == 0);

    cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    cudaArray_t arr, arr2, plane;
    OK(cudaMallocArray(&arr, &desc, 16, 4));
    OK(cudaMallocArray(&arr2, &desc, 16, 4));
    OK(cudaMemcpyToArray(arr, 0, 0, src, sizeof(src), cudaMemcpyHostToDevice));
    OK(cudaMemcpyArrayToArray(arr2, 0, 0, arr, 0, 0, sizeof(src),
                              cudaMemcpyDeviceToDevice));
    memset(back, 0, sizeof(back));
    OK(cudaMemcpyFromArray(back, arr2, 0, 0, sizeof(src),
                           cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, src, sizeof(src)) == 0);

    // The mock's arrays are single-plane; the plane goes with its array.
    cudaArray_t again;
    OK(cudaArrayGetPlane(&plane, arr, 0));
    OK(cudaArrayGetPlane(&again, arr, 0));
    CHECK(plane == again && plane != arr);
    CHECK(cudaArrayGetPlane(&again, arr, 1) == cudaErrorInvalidValue);
    CHECK(cudaFreeArray(plane) == cudaErrorInvalidValue);
    cudaArrayMemoryRequirements r;
    OK(cudaArrayGetMemoryRequirements(&r, arr, 0));
    CHECK(r.size == sizeof(src) && r.alignment == 65536);
    CHECK(cudaArrayGetMemoryRequirements(&r, arr, 5) ==
          cudaErrorInvalidDevice);
    cudaArraySparseProperties sp;
    CHECK(cudaArrayGetSparseProperties(&sp, arr) == cudaErrorInvalidValue);
    OK(cudaFreeArray(arr));
    CHECK(cudaArrayGetMemoryRequirements(&r, plane, 0) ==
          cudaErrorInvalidResourceHandle);
    OK(cudaFreeArray(arr2));

    cudaMipmappedArray_t mm;
    cudaArray_t sparse;
    OK(cudaMallocMipmappedArray(&mm, &desc, make_cudaExtent(8, 8, 0), 2,
                                cudaArraySparse));
    OK(cudaMipmappedArrayGetMemoryRequirements(&r, mm, 1));
    CHECK(r.size == (64 + 16) * 4);
    OK(cudaMipmappedArrayGetSparseProperties(&sp, mm));
    CHECK(sp.tileExtent.width == 64 && sp.miptailFirstLevel == 2);
    OK(cudaMalloc3DArray(&sparse, &desc, make_cudaExtent(4, 4, 0),
                         cudaArraySparse));
    OK(cudaArrayGetSparseProperties(&sp, sparse));
    CHECK(sp.tileExtent.height == 64 && sp.miptailFirstLevel == 1);
    OK(cudaFreeArray(sparse));
    OK(cudaFreeMipmappedArray(mm));
    CHECK(cudaMipmappedArrayGetSparseProperties(&sp, mm) ==
          cudaErrorInvalidResourceHandle);
    OK(cudaFree(d1));
    OK(cudaFree(d2));
}

static void pools_and_ipc()
{
    cudaMemPool_t def, cur;
    cudaMemLocation dev0 = {cudaMemLocationTypeDevice, 0};
    OK(cudaMemGetDefaultMemPool(&def, &dev0, cudaMemAllocationTypePinned));
    OK(cudaMemGetMemPool(&cur, &dev0, cudaMemAllocationTypePinned));
    CHECK(def == cur);
    OK(cudaMemSetMemPool(&dev0, cudaMemAllocationTypePinned, def));

    int *d;
    OK(cudaMalloc(&d, 64));
    cudaIpcMemHandle_t mh;
    void *opened;
    OK(cudaIpcGetMemHandle(&mh, d));
    // The mock's handles name the exporting worker's memory: none opens.
    CHECK(cudaIpcOpenMemHandle(&opened, mh, cudaIpcMemLazyEnablePeerAccess) ==
          cudaErrorInvalidResourceHandle);
    cudaEvent_t ev, opened_ev;
    OK(cudaEventCreateWithFlags(&ev,
                                cudaEventDisableTiming | cudaEventInterprocess));
    cudaIpcEventHandle_t eh;
    OK(cudaIpcGetEventHandle(&eh, ev));
    CHECK(cudaIpcGetEventHandle(NULL, ev) == cudaErrorInvalidValue);
    CHECK(cudaIpcGetEventHandle(&eh, (cudaEvent_t)(uintptr_t)0x777) ==
          cudaErrorInvalidResourceHandle);
    CHECK(cudaIpcOpenEventHandle(&opened_ev, eh) ==
          cudaErrorInvalidResourceHandle);
    CHECK(cudaIpcOpenEventHandle(NULL, eh) == cudaErrorInvalidValue);
    OK(cudaEventDestroy(ev));
    OK(cudaFree(d));
}

// The mock loads any image as a library of mock_e2e.cu's kernels.
static const char ptx[] = "// a library image the mock accepts\n";

static void library_kernels(cudaLibrary_t lib)
{
    unsigned n = 0;
    OK(cudaLibraryGetKernelCount(&n, lib));
    CHECK(n == 4);
    cudaKernel_t all[5] = {}, fill, empty;
    OK(cudaLibraryEnumerateKernels(all, 5, lib));
    CHECK(all[3] != NULL && all[4] == NULL);
    OK(cudaLibraryGetKernel(&fill, lib, "_Z4fillPiidc"));
    OK(cudaLibraryGetKernel(&empty, lib, "_Z5emptyv"));
    CHECK(fill == all[0] && empty == all[3]);
    CHECK(cudaLibraryGetKernel(&fill, lib, "nope") == cudaErrorSymbolNotFound);
    CHECK(cudaLibraryGetKernel(&fill, lib, NULL) == cudaErrorInvalidValue);
    OK(cudaLibraryGetKernel(&fill, lib, "_Z4fillPiidc"));

    int *d, back[8];
    int count = 8;
    double add = 10.0;
    char c = 1;
    OK(cudaMalloc(&d, sizeof(back)));
    void *args[] = {&d, &count, &add, &c};
    OK(cudaLaunchKernel((const void *)fill, dim3(1), dim3(8), args, 0, 0));
    OK(cudaMemcpy(back, d, sizeof(back), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 8; i++)
        CHECK(back[i] == i + 11);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(4);
    add = 20.0;
    OK(cudaLaunchKernelExC(&cfg, (const void *)fill, args));
    OK(cudaMemcpy(back, d, sizeof(back), cudaMemcpyDeviceToHost));
    CHECK(back[3] == 24 && back[4] == 15);
    cudaFuncAttributes fa;
    OK(cudaFuncGetAttributes(&fa, (const void *)fill));
    OK(cudaFree(d));

    int *g;
    size_t bytes = 0;
    int vals[4] = {4, 3, 2, 1}, got[4];
    OK(cudaLibraryGetGlobal((void **)&g, &bytes, lib, "dv"));
    CHECK(bytes == 16);
    OK(cudaMemcpy(g, vals, 16, cudaMemcpyDefault));
    OK(cudaMemcpy(got, g, 16, cudaMemcpyDefault));
    CHECK(memcmp(got, vals, 16) == 0);
    CHECK(cudaLibraryGetGlobal((void **)&g, &bytes, lib, "nope") ==
          cudaErrorSymbolNotFound);
    void *uf = NULL;
    OK(cudaLibraryGetUnifiedFunction(&uf, lib, "uf"));
    CHECK(uf == (void *)(uintptr_t)0x7e57f000u);
}

static void libraries()
{
    cudaLibrary_t lib, big, file;
    OK(cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    library_kernels(lib);
    CHECK(cudaLibraryLoadData(NULL, ptx, NULL, NULL, 0, NULL, NULL, 0) ==
          cudaErrorInvalidValue);
    cudaJitOption jo[2] = {cudaJitMaxRegisters, cudaJitInfoLogBuffer};
    void *jv[2] = {(void *)(uintptr_t)32, NULL};
    cudaLibrary_t with;
    OK(cudaLibraryLoadData(&with, ptx, jo, jv, 1, NULL, NULL, 0));
    OK(cudaLibraryUnload(with));
    // A log buffer is the client's memory: not forwarded.
    CHECK(cudaLibraryLoadData(&with, ptx, jo, jv, 2, NULL, NULL, 0) ==
          cudaErrorNotSupported);
    cudaLibraryOption lo = cudaLibraryBinaryIsPreserved;
    void *lv = NULL;
    OK(cudaLibraryLoadData(&with, ptx, NULL, NULL, 0, &lo, &lv, 1));
    OK(cudaLibraryUnload(with));

    // An image larger than one frame goes ahead in pieces.
    size_t len = ((size_t)9 << 20) + 5;
    char *text = (char *)malloc(len);
    memset(text, ' ', len - 1);
    memcpy(text, "//", 2);
    text[len - 1] = 0;
    OK(cudaLibraryLoadData(&big, text, NULL, NULL, 0, NULL, NULL, 0));
    library_kernels(big);
    OK(cudaLibraryUnload(big));
    free(text);

    char path[] = "/tmp/gvs_mock_libXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, ptx, sizeof(ptx)) == (ssize_t)sizeof(ptx));
    close(fd);
    OK(cudaLibraryLoadFromFile(&file, path, NULL, NULL, 0, NULL, NULL, 0));
    unlink(path);
    library_kernels(file);
    OK(cudaLibraryUnload(file));
    CHECK(cudaLibraryLoadFromFile(&file, path, NULL, NULL, 0, NULL, NULL, 0) ==
          cudaErrorFileNotFound);

    cudaKernel_t k;
    OK(cudaLibraryGetKernel(&k, lib, "_Z5emptyv"));
    OK(cudaLibraryUnload(lib));
    unsigned n;
    CHECK(cudaLibraryUnload(lib) == cudaErrorInvalidResourceHandle);
    CHECK(cudaLibraryGetKernelCount(&n, lib) ==
          cudaErrorInvalidResourceHandle);
    CHECK(cudaLaunchKernel((const void *)k, dim3(1), dim3(1), NULL, 0, 0) ==
          cudaErrorInvalidResourceHandle);
    (void)cudaGetLastError();
}

static void device_queries()
{
    cudaAtomicOperation ops[2] = {cudaAtomicOperationIntegerAdd,
                                  cudaAtomicOperationFloatAdd};
    unsigned caps[2] = {9, 9};
    OK(cudaDeviceGetHostAtomicCapabilities(caps, ops, 2, 0));
    CHECK(caps[0] == (cudaAtomicCapabilitySigned |
                      cudaAtomicCapabilityUnsigned) &&
          caps[1] == 0);
    OK(cudaDeviceGetP2PAtomicCapabilities(caps, ops, 2, 0, 1));
    CHECK(caps[1] == (cudaAtomicCapabilitySigned |
                      cudaAtomicCapabilityUnsigned |
                      cudaAtomicCapabilityReduction));
    CHECK(cudaDeviceGetP2PAtomicCapabilities(caps, ops, 2, 0, 0) ==
          cudaErrorInvalidDevice);
    CHECK(cudaDeviceGetHostAtomicCapabilities(NULL, ops, 2, 0) ==
          cudaErrorInvalidValue);
    size_t w = 0;
    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
    OK(cudaDeviceGetTexture1DLinearMaxWidth(&w, &f4, 0));
    CHECK(w == ((size_t)1 << 28) / 16);
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&w, &f4, 7) ==
          cudaErrorInvalidDevice);

    // Validated; a thread that chooses no device stays on device 0.
    int list[2] = {1, 0}, bad[1] = {5}, dev = -1;
    OK(cudaSetValidDevices(list, 2));
    std::thread([&] { OK(cudaGetDevice(&dev)); }).join();
    CHECK(dev == 0);
    CHECK(cudaSetValidDevices(bad, 1) == cudaErrorInvalidDevice);
    CHECK(cudaSetValidDevices(NULL, 1) == cudaErrorInvalidValue);
    OK(cudaSetValidDevices(NULL, 0));
    std::thread([&] { OK(cudaGetDevice(&dev)); }).join();
    CHECK(dev == 0);

    cudaLogIterator it = 0;
    char buf[256];
    size_t size = sizeof(buf);
    OK(cudaLogsCurrent(&it, 0));
    CHECK(it == 2);
    OK(cudaLogsDumpToMemory(NULL, buf, &size, 0));
    CHECK(strcmp(buf, "[mock] first log line\n[mock] second log line\n") ==
          0 && size == strlen(buf));
    size = 30;
    OK(cudaLogsDumpToMemory(NULL, buf, &size, 0));
    CHECK(strcmp(buf, "[mock] first log line\n") == 0 && size == 22);
    char path[] = "/tmp/gvs_mock_logXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    OK(cudaLogsDumpToFile(NULL, path, 0));
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    buf[got] = 0;
    fclose(f);
    unlink(path);
    CHECK(strcmp(buf, "[mock] first log line\n[mock] second log line\n") ==
          0);
    CHECK(cudaLogsCurrent(&it, 1) == cudaErrorInvalidValue);
}

// What the callbacks saw: written on the notify thread, read here once
// the count says it ran.
static cudaAsyncNotificationInfo_t async_info;
static void *async_user;
static cudaAsyncCallbackHandle_t async_handle;
static cudaError_t async_nested = cudaSuccess;
static std::atomic<int> async_calls;
static char log_text[128];
static size_t log_length;
static cudaLogLevel log_level;
static std::atomic<int> log_calls[3];

static void on_async(cudaAsyncNotificationInfo_t *info, void *user,
                     cudaAsyncCallbackHandle_t h)
{
    cudaAsyncCallbackHandle_t nested;
    async_info = *info;
    async_user = user;
    async_handle = h;
    // As natively, a notification's function may not register another.
    async_nested = cudaDeviceRegisterAsyncNotification(0, on_async, NULL,
                                                       &nested);
    async_calls++;
}

static void on_log(void *user, cudaLogLevel level, char *message,
                   size_t length)
{
    snprintf(log_text, sizeof(log_text), "%s", message);
    log_length = length;
    log_level = level;
    log_calls[(intptr_t)user]++;
}

// The notify thread runs callbacks in arrival order: a later one having
// run, so has every earlier one.
static void wait_for(const std::atomic<int> &count, int n)
{
    for (int i = 0; i < 10000 && count.load() < n; i++)
        usleep(1000);
    CHECK(count.load() == n);
}

static void notifications()
{
    int tag = 0;
    cudaAsyncCallbackHandle_t h, none;
    OK(cudaDeviceRegisterAsyncNotification(0, on_async, &tag, &h));
    wait_for(async_calls, 1);
    CHECK(async_info.type == cudaAsyncNotificationTypeOverBudget &&
          async_info.info.overBudget.bytesOverBudget == 1u << 20 &&
          async_user == &tag && async_handle == h &&
          async_nested == cudaErrorNotPermitted);
    CHECK(cudaDeviceRegisterAsyncNotification(0, NULL, &tag, &none) ==
          cudaErrorInvalidValue);
    CHECK(cudaDeviceRegisterAsyncNotification(7, on_async, &tag, &none) ==
          cudaErrorInvalidDevice);
    CHECK(cudaDeviceUnregisterAsyncNotification(1, h) ==
          cudaErrorInvalidValue);
    OK(cudaDeviceUnregisterAsyncNotification(0, h));
    CHECK(cudaDeviceUnregisterAsyncNotification(0, h) ==
          cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);

    // The mock logs each refused cudaLogsCurrent.
    cudaLogsCallbackHandle first, second;
    cudaLogIterator it;
    OK(cudaLogsRegisterCallback(on_log, (void *)0, &first));
    CHECK(cudaLogsCurrent(&it, 1) == cudaErrorInvalidValue);
    wait_for(log_calls[0], 1);
    CHECK(strcmp(log_text, "[mock] cudaLogsCurrent: invalid argument") == 0 &&
          log_length == strlen(log_text) && log_level == cudaLogLevelError);
    OK(cudaLogsUnregisterCallback(first));
    CHECK(cudaLogsUnregisterCallback(first) == cudaErrorInvalidValue);
    CHECK(cudaLogsUnregisterCallback((cudaLogsCallbackHandle)h) ==
          cudaErrorInvalidValue);
    CHECK(cudaLogsRegisterCallback(NULL, NULL, &second) ==
          cudaErrorInvalidValue);
    OK(cudaLogsRegisterCallback(on_log, (void *)1, &second));
    CHECK(cudaLogsCurrent(&it, 1) == cudaErrorInvalidValue);
    wait_for(log_calls[1], 1);
    CHECK(log_calls[0].load() == 1);
    OK(cudaLogsUnregisterCallback(second));
    // The handle is optional; such a callback stays for good.
    OK(cudaLogsRegisterCallback(on_log, (void *)2, NULL));
    CHECK(cudaLogsCurrent(&it, 1) == cudaErrorInvalidValue);
    wait_for(log_calls[2], 1);
    CHECK(log_calls[1].load() == 1);
    (void)cudaGetLastError();
}

int main()
{
    pointers_and_hints();
    batches_and_arrays();
    pools_and_ipc();
    libraries();
    device_queries();
    notifications();
    printf("ok\n");
    return 0;
}
