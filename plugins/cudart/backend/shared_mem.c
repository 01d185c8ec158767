/*
 * Host memory the client shares with the worker (shm:// sessions only):
 * the layer keeps the regions (remote_be.h, "Shared host memory"); the
 * runtime pins them and copies from and to them here, so that a copy
 * between the GPU and such memory is one DMA (docs/cudart.md, "Host
 * memory").  The runtime also makes the layer's pinned staging of D2H
 * chunks (stage_d2h).
 */
#include "be.h"

#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "objects.h"

static int32_t enter(struct gvs_call *call)
{
    return cudart_be_enter(call);
}

static int32_t pin(void *p, uint64_t size, uint64_t *dev)
{
    void *d = NULL;
    cudaError_t e = cudaHostRegister(
        p, size, cudaHostRegisterPortable | cudaHostRegisterMapped);
    if (e == cudaSuccess && cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess)
        d = NULL;
    (void)cudaGetLastError();
    *dev = (uint64_t)(uintptr_t)d;
    return e;
}

static void unpin(void *p, uint64_t size)
{
    (void)size;
    cudaHostUnregister(p);
    (void)cudaGetLastError();
}

static int32_t sync_device(struct gvs_call *call)
{
    (void)call;
    return cudaDeviceSynchronize();
}

static int32_t copy(struct gvs_call *call, uint64_t stream, uint32_t flags,
                    int h2d, uint64_t dev, void *host, uint64_t len)
{
    cudaStream_t st = NULL;
    int on_stream = (flags & GVS_REMOTE_SHARED_ON_STREAM) != 0;
    cudaError_t e = on_stream
                        ? be_enter_stream_range(call, stream, &st, dev, len)
                        : cudart_be_enter(call);
    if (e == cudaSuccess && !on_stream)
        e = be_check_device_range(dev, len);
    if (e != cudaSuccess)
        return e;
    int wait = (flags & GVS_REMOTE_SHARED_WAIT) != 0;
    if (len == 0)
        return !wait      ? cudaSuccess
               : on_stream ? cudaStreamSynchronize(st)
                           : cudaDeviceSynchronize();
    void *d = (void *)(uintptr_t)dev;
    void *dst = h2d ? d : host;
    const void *src = h2d ? host : d;
    enum cudaMemcpyKind k = h2d ? cudaMemcpyHostToDevice
                                : cudaMemcpyDeviceToHost;
    if (!on_stream)
        return be_memcpy(dst, src, len, k);
    if (flags & GVS_REMOTE_SHARED_BATCH)
        return be_copy_posted(call, st, dst, src, len, k);
    e = be_memcpy_async(dst, src, len, k, st);
    if (e == cudaSuccess && wait)
        e = cudaStreamSynchronize(st);
    return e;
}

/* The runtime has no stream memory operations: the driver's, found
 * through the runtime. */
static int32_t signal_word(struct gvs_call *call, uint64_t stream,
                           uint64_t dev, uint32_t value)
{
    be_driver_write_value32_fn write_value = be_driver()->write_value32;
    cudaStream_t st;
    cudaError_t e = write_value != NULL ? be_stream(call, stream, &st)
                                        : cudaErrorNotSupported;
    if (e == cudaSuccess &&
        write_value((CUstream)st, (CUdeviceptr)dev, value,
                    CU_STREAM_WRITE_VALUE_DEFAULT) != CUDA_SUCCESS)
        e = cudaErrorNotSupported;
    return e;
}

static int32_t host_alloc(void **p, size_t n)
{
    cudaError_t e = cudaHostAlloc(p, n, cudaHostAllocPortable);
    /* Leaves nothing behind for a later cudaGetLastError. */
    (void)cudaGetLastError();
    return e;
}

static void host_free(void *p)
{
    (void)cudaFreeHost(p);
    (void)cudaGetLastError();
}

static int32_t host_func(struct gvs_call *call, uint64_t stream,
                         void (*fn)(void *arg), void *arg)
{
    cudaStream_t st;
    cudaError_t e = be_stream(call, stream, &st);
    if (e == cudaSuccess)
        e = cudaLaunchHostFunc(st, fn, arg);
    return e;
}

/* A piece read ahead goes where its copy would: a synchronous copy's on
 * the legacy stream, as cudaMemcpy's, never into a capture.  It stays in
 * the device allocation it starts in (cut at its end): a range across
 * allocations passes the requests' checks when both ends are device
 * memory, but a DMA over a gap between them would fault, and a fault
 * ends the context. */
static int32_t ahead_copy(void *host, struct gvs_remote_piece *p,
                          void **event)
{
    cudaStream_t s = p->stream != NULL ? (cudaStream_t)p->stream
                                       : cudaStreamLegacy;
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    uint64_t left = be_device_left(p->src);
    if (left == 0)
        return cudaErrorInvalidValue;
    if (p->len > left)
        p->len = left;
    cudaError_t e = cudaStreamIsCapturing(s, &st);
    if (e == cudaSuccess && st != cudaStreamCaptureStatusNone)
        e = cudaErrorStreamCaptureUnsupported;
    if (e == cudaSuccess && *event == NULL)
        e = cudaEventCreateWithFlags((cudaEvent_t *)event,
                                     cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = be_memcpy_async(host, (const void *)(uintptr_t)p->src,
                            (size_t)p->len, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess &&
        (e = cudaEventRecord((cudaEvent_t)*event, s)) != cudaSuccess) {
        /* An event of another device: the copy is waited for, and the
         * next read ahead makes one of the lane's current device. */
        (void)cudaStreamSynchronize(s);
        (void)cudaEventDestroy((cudaEvent_t)*event);
        *event = NULL;
    }
    (void)cudaGetLastError();
    return e;
}

static int ahead_done(void *event, int wait, int32_t *result)
{
    cudaError_t e = wait ? cudaEventSynchronize((cudaEvent_t)event)
                         : cudaEventQuery((cudaEvent_t)event);
    (void)cudaGetLastError();
    if (e == cudaErrorNotReady)
        return 0;
    *result = e;
    return 1;
}

static void ahead_free(void *event)
{
    (void)cudaEventDestroy((cudaEvent_t)event);
    (void)cudaGetLastError();
}

const struct gvs_remote_pinner be_pinner = {
    .success = cudaSuccess,
    .invalid = cudaErrorInvalidValue,
    .nomem = cudaErrorMemoryAllocation,
    .notsup = cudaErrorNotSupported,
    .registered = cudaErrorHostMemoryAlreadyRegistered,
    .direction = cudaErrorInvalidMemcpyDirection,
    .plugin = CUDART_PLUGIN_ID,
    .enter = enter,
    .pin = pin,
    .unpin = unpin,
    .sync = sync_device,
    .copy = copy,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .host_func = host_func,
    .signal = signal_word,
    .context_key = be_lane_key,
    .ahead_copy = ahead_copy,
    .ahead_done = ahead_done,
    .ahead_free = ahead_free,
};

int cudart_be_hostmem_share(struct gvs_call *call)
{
    return be_remote->hostmem_share(call, &be_pinner);
}

int cudart_be_hostmem_unshare(struct gvs_call *call)
{
    return be_remote->hostmem_unshare(call, &be_pinner);
}

int cudart_be_memcpy_shared(struct gvs_call *call)
{
    return be_remote->memcpy_shared(call, &be_pinner);
}

int cudart_be_memcpy_shared_posted(struct gvs_call *call)
{
    return be_remote->memcpy_shared(call, &be_pinner);
}

int cudart_be_memcpy_posted(struct gvs_call *call)
{
    return be_remote->d2h_posted(call, &be_pinner);
}

void be_shared_free(void)
{
    be_remote->shared_release(&be_pinner);
    be_remote->stage_release(&be_pinner);
    be_remote->posted_release(&be_pinner);
}
