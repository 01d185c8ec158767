// cudart.mock_mixed: a -cudart shared program that also calls the driver
// (libcuda.so.1, opened with dlopen as frameworks open it) with no
// cuInit of its own, on the runtime plugin's mock and the driver
// plugin's mock behind one gvsd: where the two frontends meet
// (docs/driver.md, "Contexts" and "Streams and events").
//  - After runtime calls only, the driver is initialized and the
//    thread's current context is its runtime device's primary context,
//    learnt in one round trip, the handle cuDevicePrimaryCtxRetain
//    gives; it follows cudaSetDevice, and driver calls work in it.  A
//    new thread has none until its cudaSetDevice.
//  - A stream and an event the runtime made are driver handles.
//  - The per-thread default stream is one for both APIs: once the
//    runtime made the thread's cudaStreamPerThread, CU_STREAM_PER_THREAD
//    makes no stream of the driver's (the mock driver numbers the
//    streams it makes in order, cuStreamGetId), nor after a device
//    reset took it along.
// Prints "ok".
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>

#include "mock_check.h"

#define CU(call) CHECK((call) == CUDA_SUCCESS)

static void *drv;
#define DRV(f) ((decltype(&f))dlsym(drv, #f))

static unsigned long long driver_stream_id(CUstream s)
{
    unsigned long long id = 0;
    CU(DRV(cuStreamGetId)(s, &id));
    return id;
}

// A new thread has no context until cudaSetDevice gives it the device's
// primary one, without another round trip once the process knows it.
static void *new_thread(void *primary)
{
    CUcontext c = NULL;
    CU(DRV(cuCtxGetCurrent)(&c));
    CHECK(c == NULL);
    OK(cudaSetDevice(0));
    struct stats s = now();
    CU(DRV(cuCtxGetCurrent)(&c));
    CHECK(c == (CUcontext)primary);
    CHECK(now().round_trips == s.round_trips);
    return NULL;
}

int main()
{
    stats_init();
    OK(cudaFree(0));
    drv = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(drv != NULL);

    // The runtime's primary context, asked of the backend once.
    CUcontext cur = NULL, again = NULL, primary = NULL;
    struct stats s = now();
    CU(DRV(cuCtxGetCurrent)(&cur));
    CHECK(cur != NULL);
    CHECK(now().round_trips - s.round_trips == 1);
    s = now();
    CU(DRV(cuCtxGetCurrent)(&again));
    CHECK(again == cur);
    CHECK(now().round_trips == s.round_trips);
    CUdevice dev = -1;
    CU(DRV(cuCtxGetDevice)(&dev));
    CHECK(dev == 0);
    CU(DRV(cuDevicePrimaryCtxRetain)(&primary, 0));
    CHECK(primary == cur);
    CU(DRV(cuDevicePrimaryCtxRelease_v2)(0));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, new_thread, primary) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CUdeviceptr m = 0;
    CU(DRV(cuMemAlloc_v2)(&m, 256));
    CU(DRV(cuMemsetD8_v2)(m, 7, 256));
    CU(DRV(cuMemFree_v2)(m));

    // It follows the runtime's device.
    OK(cudaSetDevice(1));
    CU(DRV(cuCtxGetCurrent)(&again));
    CHECK(again != NULL && again != cur);
    CU(DRV(cuCtxGetDevice)(&dev));
    CHECK(dev == 1);
    OK(cudaSetDevice(0));
    CU(DRV(cuCtxGetCurrent)(&again));
    CHECK(again == cur);

    // The runtime's stream and event, through the driver.
    cudaStream_t rs;
    cudaEvent_t re;
    OK(cudaStreamCreate(&rs));
    OK(cudaEventCreate(&re));
    CU(DRV(cuStreamQuery)((CUstream)rs));
    CU(DRV(cuStreamSynchronize)((CUstream)rs));
    CU(DRV(cuEventQuery)((CUevent)re));

    // One per-thread default stream: the driver makes none between a and b.
    CUstream a, b;
    CU(DRV(cuStreamCreate)(&a, CU_STREAM_DEFAULT));
    unsigned long long ia = driver_stream_id(a);
    unsigned long long rt = 0;
    OK(cudaStreamGetId(cudaStreamPerThread, &rt));
    OK(cudaStreamSynchronize(cudaStreamPerThread));
    CU(DRV(cuStreamQuery)(CU_STREAM_PER_THREAD));
    CU(DRV(cuStreamSynchronize)(CU_STREAM_PER_THREAD));
    CU(DRV(cuStreamCreate)(&b, CU_STREAM_DEFAULT));
    CHECK(driver_stream_id(b) == ia + 1);
    OK(cudaStreamQuery(cudaStreamPerThread));

    CU(DRV(cuStreamDestroy_v2)(a));
    CU(DRV(cuStreamDestroy_v2)(b));
    OK(cudaEventDestroy(re));
    OK(cudaStreamDestroy(rs));

    // A device reset takes the per-thread stream along, for both APIs:
    // the next use makes another, still one.
    OK(cudaDeviceReset());
    unsigned long long rt2 = 0;
    OK(cudaStreamGetId(cudaStreamPerThread, &rt2));
    CHECK(rt2 != rt);
    CU(DRV(cuStreamQuery)(CU_STREAM_PER_THREAD));
    CU(DRV(cuStreamCreate)(&a, CU_STREAM_DEFAULT));
    CHECK(driver_stream_id(a) == ia + 2);
    CU(DRV(cuStreamDestroy_v2)(a));
    printf("ok\n");
    return 0;
}
