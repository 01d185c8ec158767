/* The worker's copies through the driver (be.h): the runtime's copy
 * calls turn into the driver's after checks the handlers already made,
 * and take longer a call.  Where the driver refuses, or an entry point
 * is missing, the runtime copies, so that a failure is the runtime's own
 * code and state, as launches do (launch.c).  The driver's copies take
 * unified addresses, the direction being where they lie: the same copy
 * as the runtime's of kind k, which the caller checked against the
 * addresses. */
#include "be.h"

#include "cudart_ops.h"

cudaError_t be_memcpy_async(void *dst, const void *src, size_t n,
                            enum cudaMemcpyKind k, cudaStream_t s)
{
    be_driver_copy_async_fn copy = be_driver()->copy_async;
    if (copy != NULL && copy((CUdeviceptr)(uintptr_t)dst,
                             (CUdeviceptr)(uintptr_t)src, n,
                             (CUstream)s) == CUDA_SUCCESS)
        return cudaSuccess;
    return cudaMemcpyAsync(dst, src, n, k, s);
}

cudaError_t be_memcpy(void *dst, const void *src, size_t n,
                      enum cudaMemcpyKind k)
{
    be_driver_copy_fn copy = be_driver()->copy;
    if (copy != NULL && copy((CUdeviceptr)(uintptr_t)dst,
                             (CUdeviceptr)(uintptr_t)src, n) == CUDA_SUCCESS)
        return cudaSuccess;
    return cudaMemcpy(dst, src, n, k);
}

static int32_t copy_one(void *s, uint64_t dst, uint64_t src, uint64_t len,
                        int kind)
{
    return be_memcpy_async((void *)(uintptr_t)dst, (const void *)(uintptr_t)src,
                           (size_t)len, (enum cudaMemcpyKind)kind,
                           (cudaStream_t)s);
}

/* Not the legacy stream (which takes no batch), nor a capturing one. */
static int batchable(void *s)
{
    enum cudaStreamCaptureStatus st;
    if (s == NULL || (cudaStream_t)s == cudaStreamLegacy)
        return 0;
    cudaError_t e = cudaStreamIsCapturing((cudaStream_t)s, &st);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return e == cudaSuccess && st == cudaStreamCaptureStatusNone;
}

/* The sources read in stream order, as a copy of its own reads them. */
static int32_t copy_batch(void *s, unsigned long long *dsts,
                          unsigned long long *srcs, size_t *sizes, size_t n)
{
    be_driver_copy_batch_fn batch = be_driver()->copy_batch;
    CUmemcpyAttributes a = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
    size_t first = 0;
    return batch != NULL && batch(dsts, srcs, sizes, n, &a, &first, 1,
                                  (CUstream)s) == CUDA_SUCCESS
               ? cudaSuccess
               : cudaErrorNotSupported;
}

static const struct gvs_remote_copy_driver *copy_driver(void)
{
    return &be_driver()->copy_kernel;
}

/* Copies between device and page-locked host memory are the copy
 * engines', but for a run that depends on itself (copies into one
 * buffer from memory the worker shares with the client), which the
 * layer's kernel makes in order in one launch (remote batch.c). */
static const struct gvs_remote_batcher batcher = {
    .success = cudaSuccess,
    .plugin = CUDART_PLUGIN_ID,
    .copy = copy_one,
    .batchable = batchable,
    .copy_batch = copy_batch,
    .mapped_driver = copy_driver,
};

/* Copies between device memory may be the layer's copy kernel's. */
static const struct gvs_remote_batcher d2d_batcher = {
    .success = cudaSuccess,
    .plugin = CUDART_PLUGIN_ID,
    .copy = copy_one,
    .batchable = batchable,
    .copy_batch = copy_batch,
    .driver = copy_driver,
};

cudaError_t be_copy_posted(struct gvs_call *call, cudaStream_t s, void *dst,
                           const void *src, size_t n, enum cudaMemcpyKind k)
{
    return be_remote->copy_posted(
        call, k == cudaMemcpyDeviceToDevice ? &d2d_batcher : &batcher, s,
        (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, n, (int)k);
}
