/*
 * cuda.mock_managed: managed memory through the driver frontend, gvsd and
 * the mock driver (mock_driver.c, whose kernels run on the host): the
 * host writes an allocation, a kernel adds to it, and after a
 * synchronization the host reads the kernel's result beside its own
 * later writes; a copy out of managed memory sees the host's writes; a
 * freed allocation's addresses are the program's again; a library's
 * __managed__ variables, two in one page, written on either side.  Hints and range
 * attributes reach the driver.  Page-locked host memory: its flags, its
 * registrations and their errors, its pointer attributes.  An IPC handle
 * of device memory, opened as another process would.  Prints "ok".
 */
#include <cuda.h>
#include <cudaProfiler.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "driver_check.h"

#define N 4096

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fadd;
    CUdeviceptr m;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, "//gvs-mock module\n"));
    CHECK(cuModuleGetFunction(&fadd, mod, "add"));

    EXPECT(cuMemAllocManaged(&m, 16, 7) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAllocManaged(&m, N * sizeof(uint32_t), CU_MEM_ATTACH_GLOBAL));
    uint32_t *h = (uint32_t *)(uintptr_t)m;
    for (uint32_t i = 0; i < N; i++)
        EXPECT(h[i] == 0);
    for (uint32_t i = 0; i < N; i++)
        h[i] = i;

    /* The host's writes reach the device before the kernel. */
    uint32_t n = N, delta = 5;
    void *args[] = {&m, &n, &delta};
    CHECK(cuLaunchKernel(fadd, N / 256, 1, 1, 256, 1, 1, 0, NULL, args,
                         NULL));
    CHECK(cuCtxSynchronize());
    for (uint32_t i = 0; i < N; i++)
        EXPECT(h[i] == i + 5);

    /* Written by the host just before, then copied out. */
    h[10] = 123456;
    uint32_t out[2];
    CHECK(cuMemcpyDtoH(out, m + 10 * sizeof(uint32_t), sizeof(out)));
    EXPECT(out[0] == 123456 && out[1] == 16);

    /* A memset, seen after a stream synchronization. */
    CHECK(cuMemsetD32(m, 9, 8));
    CHECK(cuStreamSynchronize(NULL));
    EXPECT(h[0] == 9 && h[7] == 9 && h[8] == 13 && h[10] == 123456);

    /* Known as device memory by the frontend (unified copies). */
    CUdeviceptr base;
    size_t size;
    CHECK(cuMemGetAddressRange(&base, &size, m + 100));
    EXPECT(base == m && size == N * sizeof(uint32_t));

    /* Hints and range attributes are the driver's. */
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CHECK(cuMemAdvise(m, N, CU_MEM_ADVISE_SET_READ_MOSTLY, loc));
    EXPECT(cuMemAdvise(m, N, (CUmem_advise)99, loc) ==
           CUDA_ERROR_INVALID_VALUE);
    int attrs[2] = {7, 7};
    CHECK(cuMemRangeGetAttribute(attrs, sizeof(attrs),
                                 CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, N));
    EXPECT(attrs[0] == 0 && attrs[1] == 0);
    CUdeviceptr plain;
    CHECK(cuMemAlloc(&plain, 64));
    int stack = 0;
    EXPECT(cuMemRangeGetAttribute(attrs, sizeof(int),
                                  CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                                  (CUdeviceptr)(uintptr_t)&stack,
                                  sizeof(stack)) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFree(plain));

    /* Freed: the shadow is gone, its pages the program's to map. */
    CHECK(cuMemFree(m));
    void *page = (void *)((uintptr_t)h / 4096 * 4096);
    void *again = mmap(page, 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
                       0);
    EXPECT(again == page);
    munmap(again, 4096);

    /* __managed__ variables sharing a page: one shadow, found twice. */
    CUlibrary lib;
    CUdeviceptr vc, vp, again_c;
    size_t vcs, vps;
    CHECK(cuLibraryLoadData(&lib, "//gvs-mock library\n", NULL, NULL, 0,
                            NULL, NULL, 0));
    CHECK(cuLibraryGetManaged(&vc, &vcs, lib, "mcounter"));
    CHECK(cuLibraryGetManaged(&vp, &vps, lib, "mpair"));
    CHECK(cuLibraryGetManaged(&again_c, NULL, lib, "mcounter"));
    EXPECT(vcs == 16 && vps == 8 && again_c == vc);
    EXPECT(cuLibraryGetManaged(&vc, &vcs, lib, "nope") ==
           CUDA_ERROR_NOT_FOUND);
    int *counter = (int *)(uintptr_t)vc, *pair = (int *)(uintptr_t)vp;
    EXPECT(counter[0] == 42 && pair[0] == 0);
    pair[1] = 5;
    CHECK(cuMemsetD32(vc + 4, 3, 1));
    CHECK(cuCtxSynchronize());
    EXPECT(counter[1] == 3 && pair[1] == 5);
    CHECK(cuMemcpyDtoH(out, vp, sizeof(out)));
    EXPECT(out[0] == 0 && out[1] == 5);
    CHECK(cuLibraryUnload(lib));

    /* Page-locked host memory, the client's own. */
    void *hp = NULL;
    unsigned int flags = 0;
    EXPECT(cuMemHostAlloc(&hp, 64, 0x10) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemHostAlloc(&hp, 8192, CU_MEMHOSTALLOC_DEVICEMAP |
                                        CU_MEMHOSTALLOC_PORTABLE));
    CHECK(cuMemHostGetFlags(&flags, (char *)hp + 100));
    EXPECT(flags == (CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    unsigned int type = 0;
    CUdeviceptr hbase = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                (CUdeviceptr)(uintptr_t)hp + 8));
    CHECK(cuPointerGetAttribute(&hbase, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                (CUdeviceptr)(uintptr_t)hp + 8));
    EXPECT(type == CU_MEMORYTYPE_HOST && hbase == (CUdeviceptr)(uintptr_t)hp);
    EXPECT(cuMemFreeHost((char *)hp + 8) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFreeHost(hp));
    static char buf[3 * 4096];
    EXPECT(cuMemHostUnregister(buf) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT(cuMemHostRegister(buf, 4096, CU_MEMHOSTREGISTER_IOMEMORY) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemHostRegister(buf, 8192, CU_MEMHOSTREGISTER_PORTABLE));
    EXPECT(cuMemHostRegister(buf + 4096, 4096, 0) ==
           CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK(cuMemHostGetFlags(&flags, buf + 10));
    EXPECT(flags ==
           (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
    CUdeviceptr dp;
    EXPECT(cuMemHostGetDevicePointer(&dp, buf, 0) == CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(cuMemHostUnregister(buf + 8) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemHostUnregister(buf));

    /* IPC: the mock opens a handle in the same worker. */
    CUdeviceptr d, opened;
    CUipcMemHandle ih;
    CHECK(cuMemAlloc(&d, 256));
    CHECK(cuMemsetD32(d, 77, 64));
    CHECK(cuIpcGetMemHandle(&ih, d));
    CHECK(cuIpcOpenMemHandle(&opened, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    uint32_t word = 0;
    CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)&word, opened + 8, sizeof(word)));
    EXPECT(word == 77);
    CHECK(cuIpcCloseMemHandle(opened));
    EXPECT(cuIpcGetMemHandle(&ih, (CUdeviceptr)(uintptr_t)&word) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFree(d));

    CHECK(cuProfilerStart());
    CHECK(cuProfilerStop());
    CHECK(cuCtxResetPersistingL2Cache());
    CHECK(cuModuleUnload(mod));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("ok\n");
    return 0;
}
