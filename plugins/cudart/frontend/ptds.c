/*
 * Per-thread default stream variants (nvcc --default-stream per-thread).
 * cudaMemcpy and cudaMemset there are ordered on the calling thread's
 * default stream, not the legacy one: the copy is cudaMemcpy's on
 * cudaStreamPerThread and returns once done (memcpy.c), the memset the
 * stream-ordered one there.  The symbol copies are synchronous and keep their
 * legacy-stream counterparts; a launch's stream 0 means the calling
 * thread's stream.
 */
#include "streams.h"

#include "cudart_fe_gen.h"

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind)
{
    return cudart_fe_ret(fe_copy(dst, src, count, kind, 1));
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return cudart_fe_ret(
        cudart_rpc_MEMSET_ASYNC(fe_stream_wire(NULL, 1), devPtr, value, count));
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
