// Where the runtime and the driver meet in one program (issue 9): a
// program of runtime calls only, then driver calls with no cuInit of its
// own, as a library mixing both APIs makes them.
//  - The thread's current context is the runtime's primary context
//    (cuDevicePrimaryCtxRetain's handle), and driver calls work in it; a
//    new thread has none until its cudaSetDevice.
//  - A stream and an event the runtime made are driver handles.
//  - cudaStreamPerThread and CU_STREAM_PER_THREAD are one stream: a long
//    kernel on one keeps the other busy, a host function on the driver's
//    keeps the runtime's busy, work through both APIs runs in order, an
//    event recorded through one follows the other's work, the stream's
//    id is the same through both, and after a device reset the next
//    per-thread stream is one again.
// Every line is a result both runs must print alike.
#include "check.h"
#include "driver_api.h"

#include <pthread.h>
#include <unistd.h>

// A driver call must succeed: else the program exits, naming it.
static void check_cu(CUresult r, const char *call)
{
    if (r != CUDA_SUCCESS) {
        printf("FAIL %s: %s\n", call, driver_error_name(r));
        exit(1);
    }
}
#define CHECK_CU(call) check_cu((call), #call)

// Runs for ns nanoseconds of the GPU's clock, then stores v.
__global__ void spin(unsigned long long ns, int *out, int v)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
    if (out != NULL)
        *out = v;
}

static const unsigned long long LONG_NS = 400ull * 1000 * 1000;

static void sleepy(void *arg)
{
    (void)arg;
    usleep(400 * 1000);
}

// A new thread has no context until the runtime's cudaSetDevice gives it
// its device's primary one.
static void *new_thread(void *primary)
{
    CUcontext c = NULL;
    CHECK_CU(DRIVER(cuCtxGetCurrent)(&c));
    printf("new thread's context: %d\n", c != NULL);
    CHECK(cudaSetDevice(0));
    CHECK_CU(DRIVER(cuCtxGetCurrent)(&c));
    printf("after cudaSetDevice, the primary: %d\n", c == (CUcontext)primary);
    return NULL;
}

static int value(int *d)
{
    int v = 0;
    CHECK(cudaMemcpy(&v, d, sizeof(v), cudaMemcpyDeviceToHost));
    return v;
}

int main()
{
    int *d;
    CHECK(cudaMalloc(&d, sizeof(int)));
    CHECK(cudaMemset(d, 0, sizeof(int)));
    CHECK(cudaDeviceSynchronize());

    // The runtime's context, found by the driver.
    CUcontext cur = NULL, primary = NULL;
    CUdevice dev = -1;
    CHECK_CU(DRIVER(cuCtxGetCurrent)(&cur));
    CHECK_CU(DRIVER(cuCtxGetDevice)(&dev));
    CHECK_CU(DRIVER(cuDevicePrimaryCtxRetain)(&primary, 0));
    printf("current context: %d, device %d, the primary: %d\n", cur != NULL,
           dev, cur == primary);
    CHECK_CU(DRIVER(cuDevicePrimaryCtxRelease)(0));
    pthread_t t;
    if (pthread_create(&t, NULL, new_thread, primary) != 0 ||
        pthread_join(t, NULL) != 0) {
        printf("FAIL a thread\n");
        return 1;
    }
    CUdeviceptr m = 0;
    CHECK_CU(DRIVER(cuMemAlloc)(&m, 256));
    CHECK_CU(DRIVER(cuMemsetD32)(m, 7, 64));
    int back = 0;
    CHECK(cudaMemcpy(&back, (void *)m, sizeof(back), cudaMemcpyDeviceToHost));
    printf("driver memory through the runtime: %d\n", back);
    CHECK_CU(DRIVER(cuMemFree)(m));

    // The runtime's stream and event, to the driver.
    cudaStream_t rs;
    cudaEvent_t re;
    CHECK(cudaStreamCreate(&rs));
    CHECK(cudaEventCreateWithFlags(&re, cudaEventDisableTiming));
    spin<<<1, 1, 0, rs>>>(LONG_NS, NULL, 0);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(re, rs));
    printf("runtime stream busy to the driver: %s\n",
           driver_error_name(DRIVER(cuStreamQuery)((CUstream)rs)));
    printf("runtime event pending to the driver: %s\n",
           driver_error_name(DRIVER(cuEventQuery)((CUevent)re)));
    CHECK_CU(DRIVER(cuEventSynchronize)((CUevent)re));
    printf("runtime stream done to the driver: %s\n",
           driver_error_name(DRIVER(cuStreamQuery)((CUstream)rs)));

    // One per-thread default stream.  A long kernel through the runtime
    // keeps the driver's busy.
    spin<<<1, 1, 0, cudaStreamPerThread>>>(LONG_NS, d, 1);
    CHECK(cudaGetLastError());
    printf("runtime's per-thread work, driver's query: %s\n",
           driver_error_name(DRIVER(cuStreamQuery)(CU_STREAM_PER_THREAD)));
    // Driver work after it runs after it: the kernel's 1 is overwritten.
    CHECK_CU(DRIVER(cuMemsetD32Async)((CUdeviceptr)d, 2, 1,
                                      CU_STREAM_PER_THREAD));
    CHECK_CU(DRIVER(cuStreamSynchronize)(CU_STREAM_PER_THREAD));
    printf("runtime's query after the driver's sync: %s\n",
           cudaGetErrorName(cudaStreamQuery(cudaStreamPerThread)));
    printf("value after kernel then driver memset: %d\n", value(d));

    // A host function through the driver keeps the runtime's busy.
    CHECK_CU(DRIVER(cuLaunchHostFunc)(CU_STREAM_PER_THREAD, sleepy, NULL));
    printf("driver's per-thread work, runtime's query: %s\n",
           cudaGetErrorName(cudaStreamQuery(cudaStreamPerThread)));
    CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    printf("driver's query after the runtime's sync: %s\n",
           driver_error_name(DRIVER(cuStreamQuery)(CU_STREAM_PER_THREAD)));

    // An event recorded through the driver after the runtime's kernel.
    cudaEvent_t pe;
    CHECK(cudaEventCreateWithFlags(&pe, cudaEventDisableTiming));
    spin<<<1, 1, 0, cudaStreamPerThread>>>(LONG_NS, d, 3);
    CHECK(cudaGetLastError());
    CHECK_CU(DRIVER(cuEventRecord)((CUevent)pe, CU_STREAM_PER_THREAD));
    printf("driver's record after runtime's kernel: %s\n",
           cudaGetErrorName(cudaEventQuery(pe)));
    CHECK(cudaEventSynchronize(pe));
    printf("value at the event: %d\n", value(d));

    // The same stream by its id.
    unsigned long long rid = 0, did = 0;
    CHECK(cudaStreamGetId(cudaStreamPerThread, &rid));
    CHECK_CU(DRIVER(cuStreamGetId)(CU_STREAM_PER_THREAD, &did));
    printf("same per-thread stream id: %d\n", rid == did);

    CHECK(cudaEventDestroy(pe));
    CHECK(cudaEventDestroy(re));
    CHECK(cudaStreamDestroy(rs));
    CHECK(cudaFree(d));

    // A device reset takes the per-thread stream along; the next one is
    // still one for both APIs.
    CHECK(cudaDeviceReset());
    spin<<<1, 1, 0, cudaStreamPerThread>>>(LONG_NS, NULL, 0);
    CHECK(cudaGetLastError());
    printf("after a reset, runtime's work, driver's query: %s\n",
           driver_error_name(DRIVER(cuStreamQuery)(CU_STREAM_PER_THREAD)));
    CHECK_CU(DRIVER(cuStreamSynchronize)(CU_STREAM_PER_THREAD));
    printf("runtime's query after the driver's sync: %s\n",
           cudaGetErrorName(cudaStreamQuery(cudaStreamPerThread)));
    printf("done\n");
    return 0;
}
