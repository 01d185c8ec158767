// The unsuffixed driver exports old binaries link, whose prototype is a
// current form's and which gvs serves (cuStreamDestroy, cuEventDestroy,
// cuEventElapsedTime, cuStreamGetCaptureInfo), found by their names:
// what each answers, in use and on the mistakes old programs make.
#include "check.h"
#include "driver_api.h"

typedef CUresult (*stream_fn)(CUstream);
typedef CUresult (*event_fn)(CUevent);
typedef CUresult (*elapsed_fn)(float *, CUevent, CUevent);
typedef CUresult (*info_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *);

#define LEGACY(type, name) ((type)gvs_driver_sym(name))

__global__ void spin(int *p)
{
    *p += 1;
}

static void streams_events(void)
{
    cudaStream_t s;
    cudaEvent_t a, b;
    int *d;
    CHECK(cudaMalloc(&d, sizeof(int)));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CUstreamCaptureStatus st;
    cuuint64_t id;
    info_fn info = LEGACY(info_fn, "cuStreamGetCaptureInfo");
    CUresult r = info(s, &st, &id);
    printf("cuStreamGetCaptureInfo: %s, status %d\n", driver_error_name(r),
           (int)st);
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    r = info(s, &st, &id);
    printf("capturing: %s, status %d\n", driver_error_name(r), (int)st);
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphDestroy(g));

    CHECK(cudaEventRecord(a, s));
    spin<<<1, 1, 0, s>>>(d);
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms = -1;
    r = LEGACY(elapsed_fn, "cuEventElapsedTime")(&ms, a, b);
    printf("cuEventElapsedTime: %s, non-negative %d\n", driver_error_name(r),
           ms >= 0);
    cudaEvent_t untimed;
    CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    CHECK(cudaEventRecord(untimed, s));
    CHECK(cudaEventSynchronize(untimed));
    r = LEGACY(elapsed_fn, "cuEventElapsedTime")(&ms, a, untimed);
    printf("elapsed time of an untimed event: %s\n", driver_error_name(r));

    event_fn event_destroy = LEGACY(event_fn, "cuEventDestroy");
    printf("cuEventDestroy: %s %s %s\n", driver_error_name(event_destroy(a)),
           driver_error_name(event_destroy(b)),
           driver_error_name(event_destroy(untimed)));
    // A stream destroyed with work in it: the work goes on.
    spin<<<1, 1, 0, s>>>(d);
    printf("cuStreamDestroy: %s\n",
           driver_error_name(LEGACY(stream_fn, "cuStreamDestroy")(s)));
    CHECK(cudaDeviceSynchronize());
    int v = 0;
    CHECK(cudaMemcpy(&v, d, sizeof(v), cudaMemcpyDeviceToHost));
    printf("kernels ran: %d\n", v);
    CHECK(cudaFree(d));
}

int main()
{
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    if (driver_use_primary(0))
        return 1;
    streams_events();
    printf("done\n");
    return 0;
}
