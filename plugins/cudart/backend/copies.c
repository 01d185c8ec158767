/* The worker's copies through the driver (be.h): the runtime's copy
 * calls turn into the driver's after checks the handlers already made,
 * and take longer a call.  Where the driver refuses, or an entry point
 * is missing, the runtime copies, so that a failure is the runtime's own
 * code and state, as launches do (launch.c).  The driver's copies take
 * unified addresses, the direction being where they lie: the same copy
 * as the runtime's of kind k, which the caller checked against the
 * addresses. */
#include "be.h"

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
