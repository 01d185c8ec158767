/*
 * cuda.mock_callbacks: host functions and stream callbacks of a driver API
 * program (linked with -lcuda) through gvsd and the mock driver
 * (mock_callbacks.c), and per-thread default streams.  A host function
 * runs after the work before it in its stream, in order with the other
 * callbacks, under the context it was enqueued in; it may call the
 * driver (a copy, a query of its own stream, which is busy) without a
 * deadlock; the stream waits for it; a stream callback gets the stream
 * and its status.  The _ptsz forms and CU_STREAM_PER_THREAD work from
 * several threads, each its own stream, which a reset of the context
 * takes along.  Prints "ok".
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver_check.h"
#include "mock_driver.h"

#define N 64
#define MANY 100

static CUdeviceptr dev_mem;
static CUstream stream;
static CUcontext ctx;

/* What the callbacks saw, written by them (on one client thread, in
 * order) and read after a synchronization. */
static uint32_t seen_copy[N];
static CUresult seen_query, seen_copy_result, seen_status;
static CUcontext seen_ctx;
static CUstream seen_stream;
static int order[MANY + 8], norder;

static void CUDA_CB reads_back(void *arg)
{
    (void)arg;
    usleep(100000);
    seen_copy_result = cuMemcpyDtoH(seen_copy, dev_mem, sizeof(seen_copy));
    seen_query = cuStreamQuery(stream);
    (void)cuCtxGetCurrent(&seen_ctx);
    order[norder++] = -1;
}

static void CUDA_CB note(void *arg)
{
    order[norder++] = (int)(intptr_t)arg;
}

static void CUDA_CB stream_cb(CUstream s, CUresult status, void *arg)
{
    seen_stream = s;
    seen_status = status;
    order[norder++] = (int)(intptr_t)arg;
}

/* The _ptsz and _ptds forms, as cuGetProcAddress gives them to a
 * program built with --default-stream per-thread. */
static CUresult (*launch_host_func_ptsz)(CUstream, CUhostFn, void *);
static CUresult (*h2d_ptds)(CUdeviceptr, const void *, size_t);
static CUresult (*d2h_ptds)(void *, CUdeviceptr, size_t);

static void find_ptsz(const char *name, void **fn)
{
    CUdriverProcAddressQueryResult found;
    CHECK(cuGetProcAddress(name, fn, 13000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                           &found));
    EXPECT(found == CU_GET_PROC_ADDRESS_SUCCESS);
}

/* The id of the calling thread's per-thread default stream (the mock's:
 * the legacy stream is 0). */
static unsigned long long per_thread_id(void)
{
    unsigned long long id = 0;
    CHECK(cuStreamGetId(CU_STREAM_PER_THREAD, &id));
    EXPECT(id != 0);
    return id;
}

static unsigned long long main_stream_id;

/* Each thread's own default stream, not another's nor the legacy one:
 * its copies and host functions run, and a synchronization of it waits
 * for them. */
static void *per_thread(void *arg)
{
    int *ran = arg;
    uint32_t mine[4] = {1, 2, 3, 5 + (uint32_t)ran[0]}, back[4];
    CUdeviceptr at = dev_mem + (ran[0] == 0 ? 0 : sizeof(mine));
    CHECK(cuCtxSetCurrent(ctx));
    EXPECT(per_thread_id() != main_stream_id);
    CHECK(h2d_ptds(at, mine, sizeof(mine)));
    CHECK(cuLaunchHostFunc(CU_STREAM_PER_THREAD, note, (void *)1000));
    CHECK(launch_host_func_ptsz(NULL, note, (void *)1001));
    CHECK(d2h_ptds(back, at, sizeof(back)));
    EXPECT(memcmp(back, mine, sizeof(mine)) == 0);
    CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    CHECK(cuStreamQuery(CU_STREAM_PER_THREAD));
    *ran = 2;
    return NULL;
}

int main(void)
{
    CUdevice dev;
    uint32_t host[N];
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuMemAlloc(&dev_mem, sizeof(host)));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    /* After a copy in the stream, in order, with the stream's status. */
    for (int i = 0; i < N; i++)
        host[i] = 7 + (uint32_t)i;
    CHECK(cuMemcpyHtoDAsync(dev_mem, host, sizeof(host), stream));
    CHECK(cuLaunchHostFunc(stream, reads_back, NULL));
    CHECK(cuStreamAddCallback(stream, stream_cb, (void *)1, 0));
    CHECK(cuLaunchHostFunc(stream, note, (void *)2));
    CHECK(cuStreamSynchronize(stream));
    EXPECT(norder == 3 && order[0] == -1 && order[1] == 1 && order[2] == 2);
    CHECK(seen_copy_result);
    EXPECT(memcmp(seen_copy, host, sizeof(host)) == 0);
    EXPECT(seen_query == CUDA_ERROR_NOT_READY);
    EXPECT(seen_ctx == ctx);
    EXPECT(seen_stream == stream && seen_status == CUDA_SUCCESS);
    CHECK(cuStreamQuery(stream));

    /* A stream in error: its callback gets the error. */
    /* A stream's context, the driver's forms. */
    CUcontext of;
    CUgreenCtx green = (CUgreenCtx)1;
    CHECK(cuStreamGetCtx(stream, &of));
    EXPECT(of == ctx);
    CHECK(cuStreamGetCtx_v2(CU_STREAM_PER_THREAD, &of, &green));
    EXPECT(of == ctx && green == NULL);
    EXPECT(cuStreamGetCtx((CUstream)(uintptr_t)0x123456789ull, &of) ==
           CUDA_ERROR_INVALID_HANDLE);

    CUstream broken;
    CHECK(cuStreamCreateWithPriority(&broken, 0, MOCK_BROKEN_PRIORITY));
    CHECK(cuStreamAddCallback(broken, stream_cb, (void *)3, 0));
    CHECK(cuStreamSynchronize(broken));
    EXPECT(seen_stream == broken && seen_status == CUDA_ERROR_LAUNCH_FAILED);

    /* Many keep their order; the legacy stream runs them too, and a
     * context synchronization waits for them. */
    norder = 0;
    for (int i = 0; i < MANY; i++)
        CHECK(cuLaunchHostFunc(stream, note, (void *)(intptr_t)i));
    CHECK(cuStreamAddCallback(NULL, stream_cb, (void *)MANY, 0));
    CHECK(cuCtxSynchronize());
    EXPECT(norder == MANY + 1);
    for (int i = 0; i <= MANY; i++)
        EXPECT(order[i] == i);
    EXPECT(seen_stream == NULL && seen_status == CUDA_SUCCESS);

    /* Per-thread default streams, through both forms, on two threads. */
    find_ptsz("cuLaunchHostFunc", (void **)&launch_host_func_ptsz);
    find_ptsz("cuMemcpyHtoD", (void **)&h2d_ptds);
    find_ptsz("cuMemcpyDtoH", (void **)&d2h_ptds);
    unsigned long long legacy = 1;
    CHECK(cuStreamGetId(NULL, &legacy));
    EXPECT(legacy == 0);
    main_stream_id = per_thread_id();
    EXPECT(per_thread_id() == main_stream_id);
    norder = 0;
    pthread_t t[2];
    int ran[2] = {0, 1}; /* which half of dev_mem, then 2 once done */
    for (int i = 0; i < 2; i++)
        EXPECT(pthread_create(&t[i], NULL, per_thread, &ran[i]) == 0);
    for (int i = 0; i < 2; i++)
        EXPECT(pthread_join(t[i], NULL) == 0);
    EXPECT(ran[0] == 2 && ran[1] == 2 && norder == 4);

    /* What the driver refuses. */
    EXPECT(cuLaunchHostFunc(stream, NULL, NULL) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamAddCallback(stream, NULL, NULL, 0) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamAddCallback(stream, stream_cb, NULL, 1) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchHostFunc((CUstream)(uintptr_t)0x123456789ull, note,
                            NULL) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuCtxSynchronize());
    EXPECT(norder == 4);

    CHECK(cuStreamDestroy(broken));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuMemFree(dev_mem));

    /* A reset takes the context's streams along: the next use makes
     * another. */
    CHECK(cuDevicePrimaryCtxReset(dev));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    EXPECT(per_thread_id() != main_stream_id);
    printf("ok\n");
    return 0;
}
