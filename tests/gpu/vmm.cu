// The CUDA virtual memory API (CUDA Programming Guide, "Virtual Memory
// Management"), as NVIDIA's runtime and PyTorch's expandable segments use
// it: reserve a range of addresses, create physical chunks, map one, set
// access, write it with a kernel, grow the mapping with a second chunk
// right after the first, and use the whole range with kernels, copies
// and memsets of both APIs; what an address of it says (its range, its
// pointer attributes, its handle); a chunk exported as a file descriptor
// and imported again in the same process; the driver's answers to a
// misaligned map and to unmapping what is not mapped.  No address is
// printed, only offsets and checksums.
//
// The driver is opened with dlopen once the runtime works, as frameworks
// open it, so that on a machine without a GPU this program fails as every
// other one does (at its first runtime call), natively and through gvs.
#include "check.h"

#include <cuda.h>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

// The driver functions used, under the names cuda.h gives them (a name
// cuda.h maps to a versioned export is looked up under that export).
#define DRIVER_FUNCS(X)                                                      \
    X(cuInit)                                                                \
    X(cuGetErrorName)                                                        \
    X(cuCtxGetDevice)                                                        \
    X(cuDeviceGetAttribute)                                                  \
    X(cuMemGetAllocationGranularity)                                         \
    X(cuMemAddressReserve)                                                   \
    X(cuMemAddressFree)                                                      \
    X(cuMemCreate)                                                           \
    X(cuMemRelease)                                                          \
    X(cuMemMap)                                                              \
    X(cuMemUnmap)                                                            \
    X(cuMemSetAccess)                                                        \
    X(cuMemGetAccess)                                                        \
    X(cuMemGetAllocationPropertiesFromHandle)                                \
    X(cuMemRetainAllocationHandle)                                           \
    X(cuMemExportToShareableHandle)                                          \
    X(cuMemImportFromShareableHandle)                                        \
    X(cuMemcpyDtoH)                                                          \
    X(cuMemsetD32)                                                           \
    X(cuMemGetAddressRange)                                                  \
    X(cuPointerGetAttribute)

#define TYPE(f) typedef decltype(&f) f##_t;
DRIVER_FUNCS(TYPE)
#define FIELD(f) f##_t f;
static struct {
    DRIVER_FUNCS(FIELD)
} drv;
#define STR(x) #x
#define EXPORT_NAME(x) STR(x)

static void load_driver()
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    EXPECT(h != NULL);
#define LOAD(f)                                                              \
    drv.f = (f##_t)dlsym(h, EXPORT_NAME(f));                                 \
    EXPECT(drv.f != NULL);
    DRIVER_FUNCS(LOAD)
}

static const char *name(CUresult r)
{
    const char *n = "?";
    drv.cuGetErrorName(r, &n);
    return n;
}

#define CU(call)                                                             \
    do {                                                                     \
        CUresult r_ = (call);                                                \
        if (r_ != CUDA_SUCCESS) {                                            \
            printf("FAIL %s: %s (%d)\n", #call, name(r_), (int)r_);          \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

__global__ void fill(unsigned *p, unsigned base, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = base + (unsigned)i;
}

// The sum of n words, and whether word i is base + i for every i.
static unsigned long long sum(const unsigned *h, size_t n, unsigned base,
                              int *ok)
{
    unsigned long long s = 0;
    *ok = 1;
    for (size_t i = 0; i < n; i++) {
        s += h[i];
        if (h[i] != base + (unsigned)i)
            *ok = 0;
    }
    return s;
}

int main()
{
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    load_driver();
    CU(drv.cuInit(0));
    CUdevice dev;
    CU(drv.cuCtxGetDevice(&dev));
    int vmm = 0, fd_ok = 0;
    CU(drv.cuDeviceGetAttribute(
        &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
    CU(drv.cuDeviceGetAttribute(
        &fd_ok, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
        dev));
    printf("virtual memory: %d, fd handles: %d\n", vmm != 0, fd_ok != 0);
    if (!vmm)
        return 0;

    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    if (fd_ok)
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t g = 0, rec = 0;
    CU(drv.cuMemGetAllocationGranularity(&g, &prop,
                                         CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CU(drv.cuMemGetAllocationGranularity(&rec, &prop,
                                         CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    printf("granularity: %zu, recommended a multiple: %d\n", g,
           rec % g == 0);

    // Four granules of addresses, two chunks of memory; the first mapped.
    CUdeviceptr va;
    CUmemGenericAllocationHandle a, b;
    CU(drv.cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
    CU(drv.cuMemCreate(&a, g, &prop, 0));
    CU(drv.cuMemCreate(&b, g, &prop, 0));
    CU(drv.cuMemMap(va, g, 0, a, 0));
    CUmemAccessDesc rw = {};
    rw.location = prop.location;
    rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(drv.cuMemSetAccess(va, g, &rw, 1));

    // A kernel writes through the mapped pointer; the driver's copy reads.
    size_t n = g / sizeof(unsigned);
    unsigned *host = (unsigned *)malloc(2 * g);
    EXPECT(host != NULL);
    fill<<<64, 256>>>((unsigned *)va, 1, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CU(drv.cuMemcpyDtoH(host, va, g));
    int ok;
    unsigned long long s = sum(host, n, 1, &ok);
    printf("first chunk: ok %d, sum %llu\n", ok, s);

    // Grow: the second chunk right after the first, access on both.
    CU(drv.cuMemMap(va + g, g, 0, b, 0));
    CU(drv.cuMemSetAccess(va, 2 * g, &rw, 1));
    fill<<<128, 256>>>((unsigned *)va, 7, 2 * n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host, (void *)va, 2 * g, cudaMemcpyDeviceToHost));
    s = sum(host, 2 * n, 7, &ok);
    printf("grown to two chunks: ok %d, sum %llu\n", ok, s);

    // Memsets of both APIs across the seam, read back by each API.
    CU(drv.cuMemsetD32(va + g - 4096, 0xabcdu, 2048));
    CHECK(cudaMemset((void *)(va + g + 4096), 0x11, 4096));
    CHECK(cudaDeviceSynchronize());
    CU(drv.cuMemcpyDtoH(host, va + g - 4096, 3 * 4096));
    int seam = 1;
    for (int i = 0; i < 2048; i++)
        seam &= host[i] == 0xabcdu;
    for (int i = 2048; i < 3072; i++)
        seam &= host[i] == 0x11111111u;
    printf("memsets across the seam: %d\n", seam);
    // A mapped address is device memory to a copy of the default kind.
    CHECK(cudaMemcpy(host, (void *)(va + g + 4096), 4096, cudaMemcpyDefault));
    printf("default-kind copy: %d\n", host[0] == 0x11111111u &&
                                           host[1023] == 0x11111111u);

    // What an address of the second chunk says.
    CUdeviceptr base;
    size_t size;
    CU(drv.cuMemGetAddressRange(&base, &size, va + g + 100));
    printf("address range: offset %llu, %llu granules\n",
           (unsigned long long)(base - va), (unsigned long long)(size / g));
    unsigned int type = 0;
    int ordinal = -1;
    CU(drv.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 va + g + 100));
    CU(drv.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 va + 100));
    cudaPointerAttributes pa;
    CHECK(cudaPointerGetAttributes(&pa, (void *)(va + g + 100)));
    printf("pointer: driver type %u, ordinal %d, runtime type %d\n", type,
           ordinal, (int)pa.type);
    unsigned long long flags = 0;
    CU(drv.cuMemGetAccess(&flags, &prop.location, va + g));
    printf("access: %llu\n", flags);

    // The handle behind an address is the one that mapped it.
    CUmemGenericAllocationHandle h;
    CU(drv.cuMemRetainAllocationHandle(&h, (void *)(va + g + 4096)));
    printf("retained handle is the second chunk's: %d\n", h == b);
    CU(drv.cuMemRelease(h));
    CUmemAllocationProp got = {};
    CU(drv.cuMemGetAllocationPropertiesFromHandle(&got, b));
    printf("properties: type %d, location %d/%d, handle types %d\n",
           (int)got.type, (int)got.location.type, got.location.id,
           (int)got.requestedHandleTypes);

    // Shared within the process: the second chunk exported, its
    // descriptor duplicated, imported and mapped again, shows its bytes.
    if (fd_ok) {
        int fd = -1;
        CU(drv.cuMemExportToShareableHandle(
            &fd, b, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        int fd2 = dup(fd);
        close(fd);
        CUmemGenericAllocationHandle imp;
        CU(drv.cuMemImportFromShareableHandle(
            &imp, (void *)(uintptr_t)fd2,
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
        close(fd2);
        CU(drv.cuMemMap(va + 2 * g, g, 0, imp, 0));
        CU(drv.cuMemSetAccess(va + 2 * g, g, &rw, 1));
        CU(drv.cuMemcpyDtoH(host, va + 2 * g + 3 * 4096, 4096));
        CU(drv.cuMemcpyDtoH(host + 1024, va + g + 3 * 4096, 4096));
        printf("imported chunk shows the same bytes: %d\n",
               memcmp(host, host + 1024, 4096) == 0);
        CU(drv.cuMemUnmap(va + 2 * g, g));
        CU(drv.cuMemRelease(imp));
        // A descriptor of anything else is no handle.
        int other = memfd_create("not-a-handle", 0);
        printf("importing another descriptor: %s\n",
               name(drv.cuMemImportFromShareableHandle(
                   &imp, (void *)(uintptr_t)other,
                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)));
        close(other);
    }

    // The driver's answers to a misaligned map and to unmapping what is
    // not mapped.
    printf("misaligned map: %s\n",
           name(drv.cuMemMap(va + 3 * g, g / 2, 0, a, 0)));
    printf("unmap of an unmapped range: %s\n",
           name(drv.cuMemUnmap(va + 3 * g, g)));

    // Released while mapped, the memory stays until it is unmapped.
    CU(drv.cuMemRelease(a));
    CU(drv.cuMemRelease(b));
    CU(drv.cuMemcpyDtoH(host, va, 4096));
    printf("mapped after release: %d\n", host[0] == 7);
    CU(drv.cuMemUnmap(va, g));
    CU(drv.cuMemUnmap(va + g, g));
    CU(drv.cuMemAddressFree(va, 4 * g));
    free(host);
    printf("done\n");
    return 0;
}
