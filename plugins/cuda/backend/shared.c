/*
 * Host memory the client shares with the worker (shm:// sessions only;
 * cuda.api, HOSTMEM_SHARE..MEMCPY_SHARED): the layer keeps the regions
 * (remote_be.h, "Shared host memory"); the driver pins them, in the
 * lane's current context and portable to every other, and copies from
 * and to them here, so that a copy between the GPU and such memory is
 * one DMA.  The driver also makes the layer's pinned staging of D2H
 * pieces (stage_d2h).
 */
#include "be.h"

#include "cuda_be_gen.h"
#include "cuda_ops.h"

static int32_t enter(struct gvs_call *call)
{
    return cuda_be_enter(call);
}

static int32_t pin(void *p, uint64_t size, uint64_t *dev)
{
    CUdeviceptr d = 0;
    CUresult r = CUDA_DRV(cuMemHostRegister_v2)(
        p, size, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r == CUDA_SUCCESS &&
        CUDA_DRV(cuMemHostGetDevicePointer_v2)(&d, p, 0) != CUDA_SUCCESS)
        d = 0;
    *dev = d;
    return r;
}

static void unpin(void *p, uint64_t size)
{
    (void)size;
    (void)CUDA_DRV(cuMemHostUnregister)(p);
}

static int32_t sync_context(struct gvs_call *call)
{
    (void)call;
    return CUDA_DRV(cuCtxSynchronize)();
}

/* The layer's batches of posted copies (remote_be.h, copy_posted);
 * kind is 1 for a copy to the device. */
static int32_t copy_one(void *s, uint64_t dst, uint64_t src, uint64_t len,
                        int kind)
{
    return kind ? CUDA_DRV(cuMemcpyHtoDAsync_v2)(
                      dst, (const void *)(uintptr_t)src, len, (CUstream)s)
                : CUDA_DRV(cuMemcpyDtoHAsync_v2)((void *)(uintptr_t)dst, src,
                                                 len, (CUstream)s);
}

/* Not the legacy stream (which takes no batch), nor a capturing one. */
static int batchable(void *s)
{
    CUstreamCaptureStatus st;
    cuuint64_t id;
    size_t n;
    return s != NULL && (CUstream)s != CU_STREAM_LEGACY &&
           CUDA_DRV(cuStreamGetCaptureInfo_v3)((CUstream)s, &st, &id, NULL,
                                               NULL, NULL, &n) ==
               CUDA_SUCCESS &&
           st == CU_STREAM_CAPTURE_STATUS_NONE;
}

/* The sources read in stream order, as a copy of its own reads them. */
static int32_t copy_batch(void *s, unsigned long long *dsts,
                          unsigned long long *srcs, size_t *sizes, size_t n)
{
    CUmemcpyAttributes a = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
    size_t first = 0;
    return CUDA_DRV(cuMemcpyBatchAsync_v2)(dsts, srcs, sizes, n, &a, &first,
                                           1, (CUstream)s);
}

static const struct gvs_remote_batcher batcher = {
    .success = CUDA_SUCCESS,
    .plugin = CUDA_PLUGIN_ID,
    .copy = copy_one,
    .batchable = batchable,
    .copy_batch = copy_batch,
};

/* As the driver's own copies: the stream and the device range are
 * checked before anything moves. */
static int32_t copy(struct gvs_call *call, uint64_t stream, uint32_t flags,
                    int h2d, uint64_t dev, void *host, uint64_t len)
{
    CUstream s = NULL;
    int on_stream = (flags & GVS_REMOTE_SHARED_ON_STREAM) != 0;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && on_stream)
        r = cuda_be_stream(call, stream, &s);
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_device_range(dev, len);
    if (r != CUDA_SUCCESS)
        return r;
    int wait = (flags & GVS_REMOTE_SHARED_WAIT) != 0;
    if (len == 0)
        return !wait      ? CUDA_SUCCESS
               : on_stream ? CUDA_DRV(cuStreamSynchronize)(s)
                           : CUDA_DRV(cuCtxSynchronize)();
    if (!on_stream)
        return h2d ? CUDA_DRV(cuMemcpyHtoD_v2)(dev, host, len)
                   : CUDA_DRV(cuMemcpyDtoH_v2)(host, dev, len);
    uint64_t h = (uint64_t)(uintptr_t)host;
    if (flags & GVS_REMOTE_SHARED_BATCH)
        return cuda_be_remote->copy_posted(call, &batcher, s, h2d ? dev : h,
                                           h2d ? h : dev, len, h2d);
    r = h2d ? CUDA_DRV(cuMemcpyHtoDAsync_v2)(dev, host, len, s)
            : CUDA_DRV(cuMemcpyDtoHAsync_v2)(host, dev, len, s);
    if (r == CUDA_SUCCESS && wait)
        r = CUDA_DRV(cuStreamSynchronize)(s);
    return r;
}

static int32_t signal_word(struct gvs_call *call, uint64_t stream,
                           uint64_t dev, uint32_t value)
{
    CUstream s = NULL;
    CUresult r = cuda_be_stream(call, stream, &s);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamWriteValue32_v2)(s, dev, value,
                                              CU_STREAM_WRITE_VALUE_DEFAULT);
    return r;
}

static int32_t host_alloc(void **p, size_t n)
{
    return CUDA_DRV(cuMemHostAlloc)(p, n, CU_MEMHOSTALLOC_PORTABLE);
}

static void host_free(void *p)
{
    (void)CUDA_DRV(cuMemFreeHost)(p);
}

static int32_t host_func(struct gvs_call *call, uint64_t stream,
                         void (*fn)(void *arg), void *arg)
{
    CUstream s = NULL;
    CUresult r = cuda_be_stream(call, stream, &s);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuLaunchHostFunc)(s, fn, arg);
    return r;
}

const struct gvs_remote_pinner cuda_be_pinner = {
    .success = CUDA_SUCCESS,
    .invalid = CUDA_ERROR_INVALID_VALUE,
    .nomem = CUDA_ERROR_OUT_OF_MEMORY,
    .notsup = CUDA_ERROR_NOT_SUPPORTED,
    .registered = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
    .direction = CUDA_ERROR_INVALID_VALUE,
    .plugin = CUDA_PLUGIN_ID,
    .enter = enter,
    .pin = pin,
    .unpin = unpin,
    .sync = sync_context,
    .copy = copy,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .host_func = host_func,
    .signal = signal_word,
    .context_key = cuda_be_context_key,
};

int cuda_be_hostmem_share(struct gvs_call *call)
{
    return cuda_be_remote->hostmem_share(call, &cuda_be_pinner);
}

int cuda_be_hostmem_unshare(struct gvs_call *call)
{
    return cuda_be_remote->hostmem_unshare(call, &cuda_be_pinner);
}

int cuda_be_memcpy_shared(struct gvs_call *call)
{
    return cuda_be_remote->memcpy_shared(call, &cuda_be_pinner);
}

int cuda_be_memcpy_shared_posted(struct gvs_call *call)
{
    return cuda_be_remote->memcpy_shared(call, &cuda_be_pinner);
}

int cuda_be_memcpy_posted(struct gvs_call *call)
{
    return cuda_be_remote->d2h_posted(call, &cuda_be_pinner);
}

void cuda_be_shared_free(void)
{
    cuda_be_remote->shared_release(&cuda_be_pinner);
    cuda_be_remote->stage_release(&cuda_be_pinner);
    cuda_be_remote->posted_release(&cuda_be_pinner);
}
