// cudaPointerGetAttributes on each kind of memory (CUDA Runtime API,
// "Unified Addressing"), memory hints read back with
// cudaMemRangeGetAttribute(s), the profiler and the persisting L2 reset.
#include "check.h"

#include <cuda_profiler_api.h>

__device__ int global_var[4];

static void show(const char *what, const void *p)
{
    cudaPointerAttributes a;
    CHECK(cudaPointerGetAttributes(&a, p));
    printf("%s: type %d", what, (int)a.type);
    if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged)
        printf(", device %d, device pointer is it %d", a.device,
               a.devicePointer == p);
    if (a.type == cudaMemoryTypeManaged)
        printf(", host pointer is it %d", a.hostPointer == p);
    printf("\n");
}

int main()
{
    int *d, *m, *h, local = 0;
    void *g;
    CHECK(cudaMalloc(&d, 4096));
    CHECK(cudaMallocManaged(&m, 4096));
    CHECK(cudaMallocHost(&h, 4096));
    CHECK(cudaGetSymbolAddress(&g, global_var));
    show("device", d);
    show("device + 100", d + 100);
    show("managed", m);
    show("pinned host", h);
    show("module global", g);
    show("stack", &local);

    int dev = 0, concurrent = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&concurrent,
                                 cudaDevAttrConcurrentManagedAccess, dev));
    cudaMemLocation loc = {cudaMemLocationTypeDevice, dev};
    CHECK(cudaMemAdvise(m, 4096, cudaMemAdviseSetReadMostly, loc));
    CHECK(cudaMemAdvise(m, 4096, cudaMemAdviseSetPreferredLocation, loc));
    int read_mostly = -1, preferred = -1, accessed[4] = {7, 7, 7, 7};
    CHECK(cudaMemRangeGetAttribute(&read_mostly, sizeof(int),
                                   cudaMemRangeAttributeReadMostly, m, 4096));
    void *data[2] = {&preferred, accessed};
    size_t sizes[2] = {sizeof(int), sizeof(accessed)};
    cudaMemRangeAttribute attrs[2] = {cudaMemRangeAttributePreferredLocation,
                                      cudaMemRangeAttributeAccessedBy};
    CHECK(cudaMemRangeGetAttributes(data, sizes, attrs, 2, m, 4096));
    printf("concurrent managed access %d: read mostly %d, preferred is "
           "device %d, accessed by [%d %d]\n",
           concurrent != 0, read_mostly, preferred == dev, accessed[0],
           accessed[1]);
    printf("range of device memory: %s\n",
           cudaGetErrorName(cudaMemRangeGetAttribute(
               &read_mostly, sizeof(int), cudaMemRangeAttributeReadMostly, d,
               4096)));
    (void)cudaGetLastError();

    CHECK(cudaProfilerStart());
    CHECK(cudaProfilerStop());
    CHECK(cudaCtxResetPersistingL2Cache());
    CHECK(cudaFree(d));
    CHECK(cudaFree(m));
    CHECK(cudaFreeHost(h));
    printf("done\n");
    return 0;
}
