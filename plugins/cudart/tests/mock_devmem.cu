// cudart.mock_devmem: device memory the driver frontend made (a virtual
// memory mapping, on the driver plugin's mock behind the same gvsd) is
// device memory to the runtime frontend too, through the layer's lookup
// (gvs_remote_device_memory): cudaPointerGetAttributes asks the backend
// about it in one round trip, until it is unmapped; memory no frontend
// knows is unregistered host memory, answered here.  The driver is opened with
// dlopen, as frameworks open it.  Prints "ok".
#include <cuda.h>
#include <stdint.h>

#include "mock_check.h"

#define DRV(f) ((decltype(&f))dlsym(drv, #f))
#define CU(call) CHECK((call) == CUDA_SUCCESS)

int main()
{
    stats_init();
    OK(cudaFree(0));
    void *drv = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(drv != NULL);
    const size_t g = (size_t)2 << 20; // the mock's granularity
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CU(DRV(cuInit)(0));
    CU(DRV(cuMemAddressReserve)(&va, g, 0, 0, 0));
    CU(DRV(cuMemCreate)(&h, g, &prop, 0));
    CU(DRV(cuMemMap)(va, g, 0, h, 0));

    // The worker's mock runtime does not know the mock driver's memory
    // (a GPU's runtime does): its answer is a refusal; what counts here
    // is that the backend was asked.
    cudaPointerAttributes a;
    struct stats s = now();
    CHECK(cudaPointerGetAttributes(&a, (void *)(va + 64)) ==
          cudaErrorInvalidValue);
    CHECK(now().round_trips - s.round_trips == 1);
    (void)cudaGetLastError();
    int local = 0;
    s = now();
    OK(cudaPointerGetAttributes(&a, &local));
    CHECK(now().round_trips == s.round_trips);
    CHECK(a.type == cudaMemoryTypeUnregistered);

    CU(DRV(cuMemUnmap)(va, g));
    s = now();
    OK(cudaPointerGetAttributes(&a, (void *)(va + 64)));
    CHECK(now().round_trips == s.round_trips);
    CU(DRV(cuMemRelease)(h));
    CU(DRV(cuMemAddressFree)(va, g));
    printf("ok\n");
    return 0;
}
