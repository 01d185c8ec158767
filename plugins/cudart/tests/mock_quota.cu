// cudart.mock_quota: the session's GPU memory quota (docs/cudart.md,
// "Memory quota") through our libcudart.so.13 and a gvsd started with
// --memory-quota 1M whose cudart plugin runs on the host-memory mock.
// What the session sees of the device (cudaMemGetInfo, totalGlobalMem),
// allocations up to the quota and past it (cudaErrorMemoryAllocation and
// a null pointer), frees giving room back, every kind of allocation
// counted, threads racing for the last bytes, resets, two devices.
#include <stdint.h>
#include <stdio.h>
#include <thread>
#include <vector>

#include "mock_check.h"

static const size_t KiB = 1024;
static const size_t QUOTA = 1024 * KiB;

// What cudaMemGetInfo says is left on the current device; the total must
// be the quota (the mock's device has 80 GiB).
static size_t left()
{
    size_t f = 0, t = 0;
    OK(cudaMemGetInfo(&f, &t));
    CHECK(t == QUOTA);
    return f;
}

// call, an allocation past the quota, must fail as natively: the error,
// the thread's last error.
#define REFUSED(call)                                                        \
    do {                                                                     \
        CHECK((call) == cudaErrorMemoryAllocation);                          \
        CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);              \
    } while (0)
// The same for call, an allocation of a pointer p, which must be left
// null.
#define REFUSED_PTR(call, p)                                                 \
    do {                                                                     \
        *(void **)&(p) = (void *)0x1234;                                     \
        REFUSED(call);                                                       \
        CHECK((p) == NULL);                                                  \
    } while (0)

static void device_view()
{
    CHECK(left() == QUOTA);
    cudaDeviceProp p;
    OK(cudaGetDeviceProperties(&p, 0));
    CHECK(p.totalGlobalMem == QUOTA);
    OK(cudaGetDeviceProperties(&p, 1));
    CHECK(p.totalGlobalMem == QUOTA);
}

static void linear()
{
    void *a, *b, *c;
    OK(cudaMalloc(&a, 512 * KiB));
    CHECK(left() == 512 * KiB);
    OK(cudaMalloc(&b, 512 * KiB));
    CHECK(left() == 0);
    REFUSED_PTR(cudaMalloc(&c, 1), c);
    OK(cudaFree(a));
    CHECK(left() == 512 * KiB);
    REFUSED_PTR(cudaMalloc(&c, 512 * KiB + 1), c);
    OK(cudaMalloc(&c, 512 * KiB));
    OK(cudaFree(b));
    OK(cudaFree(c));
    CHECK(left() == QUOTA);
    // A second free of the same pointer gives nothing back twice.
    CHECK(cudaFree(c) == cudaErrorInvalidValue);
    (void)cudaGetLastError();
    CHECK(left() == QUOTA);
    OK(cudaFree(NULL));
    REFUSED_PTR(cudaMalloc(&c, QUOTA + 1), c);
    REFUSED_PTR(cudaMalloc(&c, SIZE_MAX), c);
    OK(cudaMalloc(&c, QUOTA));
    OK(cudaFree(c));
    CHECK(left() == QUOTA);
}

static cudaMemAllocNodeParams alloc_node(size_t bytes, cudaMemAccessDesc *acc)
{
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    *acc = {{cudaMemLocationTypeDevice, 0}, cudaMemAccessFlagsProtReadWrite};
    ap.accessDescs = acc;
    ap.accessDescCount = 1;
    ap.bytesize = bytes;
    return ap;
}

static void kinds()
{
    void *pitched, *async, *refused;
    size_t pitch = 0;
    // 100-byte rows padded to 512.
    OK(cudaMallocPitch(&pitched, &pitch, 100, 256));
    CHECK(pitch == 512);
    CHECK(left() == QUOTA - 128 * KiB);
    REFUSED_PTR(cudaMallocPitch(&refused, &pitch, 4096, 256), refused);
    cudaPitchedPtr pp;
    OK(cudaMalloc3D(&pp, make_cudaExtent(512, 64, 2)));
    CHECK(left() == QUOTA - 192 * KiB);
    cudaPitchedPtr no_pp;
    no_pp.ptr = (void *)0x1234;
    REFUSED(cudaMalloc3D(&no_pp, make_cudaExtent(512, 1024, 2)));
    CHECK(no_pp.ptr == NULL);
    int *managed;
    REFUSED_PTR(cudaMallocManaged(&managed, QUOTA), managed);
    OK(cudaMallocManaged(&managed, 256 * KiB));
    CHECK(left() == QUOTA - 448 * KiB);
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    REFUSED_PTR(cudaMallocAsync(&refused, QUOTA, s), refused);
    OK(cudaMallocAsync(&async, 256 * KiB, s));
    CHECK(left() == QUOTA - 704 * KiB);

    cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
    cudaArray_t arr, arr3, no_arr;
    OK(cudaMallocArray(&arr, &d, 128, 128));
    CHECK(left() == QUOTA - 768 * KiB);
    OK(cudaMalloc3DArray(&arr3, &d, make_cudaExtent(64, 64, 4)));
    CHECK(left() == QUOTA - 832 * KiB);
    REFUSED(cudaMallocArray(&no_arr, &d, 256, 256));
    // Levels of 64x64, 32x32 and 16x16 floats, as CUDA (the mock) counts
    // them: more than that (twice the first level) was taken meanwhile.
    cudaMipmappedArray_t mip, no_mip;
    OK(cudaMallocMipmappedArray(&mip, &d, make_cudaExtent(64, 64, 0), 3));
    const size_t mip_bytes = (64 * 64 + 32 * 32 + 16 * 16) * sizeof(float);
    CHECK(left() == QUOTA - 832 * KiB - mip_bytes);
    REFUSED(cudaMallocMipmappedArray(&no_mip, &d,
                                     make_cudaExtent(256, 256, 0), 2));

    // Graph memory counts from the alloc node's making until its graph
    // is destroyed.
    const size_t before_graph = left();
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaMemAccessDesc acc;
    cudaMemAllocNodeParams ap = alloc_node(64 * KiB, &acc);
    cudaGraphNode_t node;
    OK(cudaGraphAddMemAllocNode(&node, g, NULL, 0, &ap));
    CHECK(left() == before_graph - 64 * KiB);
    cudaMemAllocNodeParams big = alloc_node(before_graph, &acc);
    REFUSED(cudaGraphAddMemAllocNode(&node, g, NULL, 0, &big));
    OK(cudaGraphDestroy(g));
    CHECK(left() == before_graph);

    OK(cudaFree(pitched));
    OK(cudaFree(pp.ptr));
    OK(cudaFree(managed));
    OK(cudaFreeAsync(async, s));
    OK(cudaStreamSynchronize(s));
    OK(cudaFreeArray(arr));
    OK(cudaFreeArray(arr3));
    OK(cudaFreeMipmappedArray(mip));
    CHECK(left() == QUOTA);
    // cudaFree of a stream-ordered allocation gives it back too.
    OK(cudaMallocAsync(&async, QUOTA, s));
    CHECK(left() == 0);
    OK(cudaFree(async));
    CHECK(left() == QUOTA);
    OK(cudaStreamDestroy(s));
}

// Threads racing for the quota: exactly as many 16 KiB allocations as it
// holds succeed, however the handlers interleave.
static void threads()
{
    const int nthreads = 8, tries = 16;
    const size_t piece = 16 * KiB;
    std::vector<std::vector<void *>> got(nthreads);
    std::vector<std::thread> ts;
    for (int t = 0; t < nthreads; t++)
        ts.emplace_back([&got, t, piece] {
            for (int i = 0; i < tries; i++) {
                void *p;
                cudaError_t e = cudaMalloc(&p, piece);
                // Any other failure is a null entry, which fails below.
                if (e == cudaSuccess)
                    got[t].push_back(p);
                else if (e != cudaErrorMemoryAllocation || p != NULL)
                    got[t].push_back(NULL);
            }
        });
    for (auto &t : ts)
        t.join();
    size_t n = 0;
    for (auto &v : got)
        for (void *p : v) {
            CHECK(p != NULL);
            n++;
        }
    CHECK(n == QUOTA / piece);
    CHECK(left() == 0);
    for (auto &v : got)
        for (void *p : v)
            OK(cudaFree(p));
    CHECK(left() == QUOTA);
}

// One quota for the session, whatever the device; a reset gives back
// what its device held only.
static void devices()
{
    void *a, *b, *c;
    OK(cudaSetDevice(0));
    OK(cudaMalloc(&a, 768 * KiB));
    OK(cudaSetDevice(1));
    CHECK(left() == 256 * KiB);
    REFUSED_PTR(cudaMalloc(&c, 512 * KiB), c);
    OK(cudaMalloc(&b, 256 * KiB));
    CHECK(left() == 0);
    OK(cudaDeviceReset());
    CHECK(left() == 256 * KiB);
    OK(cudaSetDevice(0));
    OK(cudaFree(a));
    CHECK(left() == QUOTA);
    OK(cudaMalloc(&a, QUOTA));
    OK(cudaDeviceReset());
    CHECK(left() == QUOTA);
}

int main()
{
    device_view();
    linear();
    kinds();
    threads();
    devices();
    printf("ok\n");
    return 0;
}
