/*
 * Per-thread default stream variants.  Every copy here is synchronous and
 * the session's work runs in order on one backend thread, so they behave
 * as their legacy-stream counterparts; a launch's stream 0 means the
 * calling thread's stream.
 */
#include "fe.h"

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind)
{
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return cudaMemset(devPtr, value, count);
}

cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
                                    size_t count, size_t offset,
                                    enum cudaMemcpyKind kind)
{
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol,
                                      size_t count, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim,
                                  dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream)
{
    return __cudaLaunchKernel_ptsz((cudaKernel_t)func, gridDim, blockDim,
                                   args, sharedMem, stream);
}
