/*
 * cuda.mock_vmm: the virtual memory API through the driver frontend,
 * gvsd and the mock driver (mock_vmm.c), as NVIDIA's runtime and
 * PyTorch's expandable segments use it: reserve a range, create chunks,
 * map one, set access, write it with a kernel and copies, grow the
 * mapping by a second chunk, copy across both; a mapped range is device
 * memory to unified copies, address ranges and pointer attributes; the
 * handle behind an address retained; an allocation exported as a
 * descriptor of the process's own, duplicated and imported again, its
 * bytes seen through a second mapping; what the driver refuses; the
 * chunks counted against the quota until their last handle and mapping
 * go; each call one round trip, and what the client knows none.  Prints
 * "ok".
 */
#include <cuda.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver_check.h"

#define N 256u

static CUmemAllocationProp prop_of(CUdevice dev)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

static void fill(CUfunction f, CUdeviceptr p, uint32_t value, uint32_t n)
{
    void *args[] = {&p, &value, &n};
    CHECK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction ffill;
    stats_init();
    EXPECT(cuMemAddressFree(0, 0) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, "//gvs-mock module\n"));
    CHECK(cuModuleGetFunction(&ffill, mod, "fill"));

    /* Granularity, one round trip a query. */
    CUmemAllocationProp prop = prop_of(dev);
    size_t g = 0;
    struct stats s0 = now();
    CHECK(cuMemGetAllocationGranularity(&g, &prop,
                                        CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    EXPECT(g == (size_t)2 << 20);
    EXPECT(now().round_trips - s0.round_trips == 1);

    /* Reserve three granules, make two chunks, map the first. */
    CUdeviceptr va;
    CUmemGenericAllocationHandle a, b;
    CHECK(cuMemAddressReserve(&va, 3 * g, 0, 0, 0));
    CHECK(cuMemCreate(&a, g, &prop, 0));
    CHECK(cuMemCreate(&b, g, &prop, 0));
    EXPECT(a != b);
    /* Chunks count against the session's quota (6 MiB: run_mock_e2e's
     * gvsd here): two more granules would pass it. */
    size_t free_bytes, total;
    CHECK(cuMemGetInfo(&free_bytes, &total));
    EXPECT(total == 3 * g && free_bytes == g);
    CUmemGenericAllocationHandle big;
    EXPECT(cuMemCreate(&big, 2 * g, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY);
    s0 = now();
    CHECK(cuMemMap(va, g, 0, a, 0));
    CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, dev},
                              CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK(cuMemSetAccess(va, g, &access, 1));
    EXPECT(now().round_trips - s0.round_trips == 2);

    /* A kernel writes through the mapped pointer; copies read it back. */
    uint32_t out[N], in[N];
    fill(ffill, va, 7, N);
    CHECK(cuMemcpyDtoH(out, va, sizeof(out)));
    for (uint32_t i = 0; i < N; i++)
        EXPECT(out[i] == 7);

    /* Grow: the second chunk right after the first. */
    CHECK(cuMemMap(va + g, g, 0, b, 0));
    CHECK(cuMemSetAccess(va, 2 * g, &access, 1));
    fill(ffill, va + g, 9, 4 * N);
    for (uint32_t i = 0; i < N; i++)
        in[i] = 1000 + i;
    /* Across the boundary of the two chunks, both ways. */
    CUdeviceptr seam = va + g - sizeof(in) / 2;
    CHECK(cuMemcpyHtoD(seam, in, sizeof(in)));
    memset(out, 0, sizeof(out));
    /* A mapped range is device memory to a unified copy, known here: the
     * backend is asked about the host side only (memory the client does
     * not know), then copies. */
    s0 = now();
    CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)out, seam, sizeof(out)));
    EXPECT(now().round_trips - s0.round_trips == 2);
    EXPECT(memcmp(in, out, sizeof(in)) == 0);
    CHECK(cuMemcpyDtoH(out, va + g + sizeof(in), sizeof(out)));
    for (uint32_t i = 0; i < N; i++)
        EXPECT(out[i] == 9);

    /* The range of an address is its mapping's, answered here. */
    CUdeviceptr base;
    size_t size;
    s0 = now();
    CHECK(cuMemGetAddressRange(&base, &size, va + g + 5));
    EXPECT(base == va + g && size == g);
    EXPECT(now().round_trips == s0.round_trips);
    unsigned int type = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                va + 12));
    EXPECT(type == CU_MEMORYTYPE_DEVICE);
    unsigned long long flags = 0;
    CHECK(cuMemGetAccess(&flags, &access.location, va + g));
    EXPECT(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    /* The handle behind an address is the one that mapped it. */
    CUmemGenericAllocationHandle h;
    CHECK(cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)(va + g + 64)));
    EXPECT(h == b);
    CHECK(cuMemRelease(h));
    CUmemAllocationProp got;
    CHECK(cuMemGetAllocationPropertiesFromHandle(&got, b));
    EXPECT(got.type == CU_MEM_ALLOCATION_TYPE_PINNED &&
           got.location.id == dev &&
           got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);

    /* Shared within the process: b's descriptor, duplicated, imported and
     * mapped a second time shows b's bytes. */
    int fd = -1;
    CHECK(cuMemExportToShareableHandle(&fd, b,
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                       0));
    EXPECT(fd >= 0);
    int fd2 = dup(fd);
    close(fd);
    CUmemGenericAllocationHandle imp;
    CHECK(cuMemImportFromShareableHandle(
        &imp, (void *)(uintptr_t)fd2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd2);
    CHECK(cuMemMap(va + 2 * g, g, 0, imp, 0));
    CHECK(cuMemSetAccess(va + 2 * g, g, &access, 1));
    CHECK(cuMemcpyDtoH(out, va + 2 * g + sizeof(in), sizeof(out)));
    for (uint32_t i = 0; i < N; i++)
        EXPECT(out[i] == 9);
    CHECK(cuMemRelease(imp));
    /* a's handle type was asked for; a foreign descriptor is no handle. */
    int other = memfd_create("not-a-handle", 0);
    EXPECT(cuMemImportFromShareableHandle(
               &imp, (void *)(uintptr_t)other,
               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) ==
           CUDA_ERROR_UNKNOWN);
    close(other);
    EXPECT(cuMemExportToShareableHandle(&fd, a, CU_MEM_HANDLE_TYPE_FABRIC,
                                        0) == CUDA_ERROR_NOT_SUPPORTED);

    /* What the driver refuses, and what never reaches it. */
    EXPECT(cuMemMap(va, g / 2, 0, a, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemMap(va + 3 * g, g, 0, a, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemMap(va, g, 0, (CUmemGenericAllocationHandle)12345, 0) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemUnmap(va + 3 * g, g) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemSetAccess(va + 3 * g, g, &access, 1) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemGetAllocationPropertiesFromHandle(&got, 77) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)(va + 4 * g)) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemAddressFree(va + g, g) == CUDA_ERROR_INVALID_VALUE);

    /* Released handles, then unmapped: the memory goes. */
    CHECK(cuMemRelease(a));
    CHECK(cuMemRelease(b));
    EXPECT(cuMemRelease(b) == CUDA_ERROR_INVALID_VALUE);
    /* A released handle's memory is still mapped: its handle comes back. */
    CHECK(cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)va));
    EXPECT(h == a);
    CHECK(cuMemRelease(h));
    /* Released, still mapped: still counted. */
    CHECK(cuMemGetInfo(&free_bytes, &total));
    EXPECT(free_bytes == g);
    CHECK(cuMemUnmap(va, 3 * g));
    CHECK(cuMemGetInfo(&free_bytes, &total));
    EXPECT(free_bytes == total);
    s0 = now();
    EXPECT(cuMemGetAddressRange(&base, &size, va + g) == CUDA_ERROR_NOT_FOUND);
    EXPECT(now().round_trips == s0.round_trips);
    EXPECT(cuMemUnmap(va, g) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAddressFree(va, 3 * g));
    EXPECT(cuMemAddressFree(va, 3 * g) == CUDA_ERROR_INVALID_VALUE);

    CHECK(cuModuleUnload(mod));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("ok\n");
    return 0;
}
