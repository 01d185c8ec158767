#include "streams.h"

/* Checks offset/count against the global and returns its device address
 * at offset. */
static cudaError_t symbol_at(const void *symbol, size_t count, size_t offset,
                             void **at)
{
    struct fe_symbol s;
    cudaError_t e = fe_symbol_resolve(symbol, &s);
    if (e != cudaSuccess)
        return e;
    if (offset > s.size || count > s.size - offset)
        return cudaErrorInvalidValue;
    *at = (void *)(uintptr_t)(s.addr + offset);
    return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src,
                               size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    void *dst;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudart_fe_ret(cudaErrorInvalidMemcpyDirection);
    cudaError_t e = symbol_at(symbol, count, offset, &dst);
    if (e == cudaSuccess)
        e = fe_copy(dst, src, count, kind, 0);
    return cudart_fe_ret(e);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                 size_t offset, enum cudaMemcpyKind kind)
{
    void *src;
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudart_fe_ret(cudaErrorInvalidMemcpyDirection);
    cudaError_t e = symbol_at(symbol, count, offset, &src);
    if (e == cudaSuccess)
        e = fe_copy(dst, src, count, kind, 0);
    return cudart_fe_ret(e);
}

static cudaError_t to_symbol_async(const void *symbol, const void *src,
                                   size_t count, size_t offset,
                                   enum cudaMemcpyKind kind,
                                   cudaStream_t stream, int per_thread)
{
    void *dst;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    cudaError_t e = symbol_at(symbol, count, offset, &dst);
    if (e == cudaSuccess)
        e = fe_copy_async(dst, src, count, kind, stream, per_thread);
    return e;
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
                                    size_t count, size_t offset,
                                    enum cudaMemcpyKind kind,
                                    cudaStream_t stream)
{
    return cudart_fe_ret(
        to_symbol_async(symbol, src, count, offset, kind, stream, 0));
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
                                         size_t count, size_t offset,
                                         enum cudaMemcpyKind kind,
                                         cudaStream_t stream)
{
    return cudart_fe_ret(
        to_symbol_async(symbol, src, count, offset, kind, stream, 1));
}

static cudaError_t from_symbol_async(void *dst, const void *symbol,
                                     size_t count, size_t offset,
                                     enum cudaMemcpyKind kind,
                                     cudaStream_t stream, int per_thread)
{
    void *src;
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    cudaError_t e = symbol_at(symbol, count, offset, &src);
    if (e == cudaSuccess)
        e = fe_copy_async(dst, src, count, kind, stream, per_thread);
    return e;
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol,
                                      size_t count, size_t offset,
                                      enum cudaMemcpyKind kind,
                                      cudaStream_t stream)
{
    return cudart_fe_ret(
        from_symbol_async(dst, symbol, count, offset, kind, stream, 0));
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
                                           size_t count, size_t offset,
                                           enum cudaMemcpyKind kind,
                                           cudaStream_t stream)
{
    return cudart_fe_ret(
        from_symbol_async(dst, symbol, count, offset, kind, stream, 1));
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    struct fe_symbol s;
    if (devPtr == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = fe_symbol_resolve(symbol, &s);
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)s.addr;
    return cudart_fe_ret(e);
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    struct fe_symbol s;
    if (size == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = fe_symbol_resolve(symbol, &s);
    if (e == cudaSuccess)
        *size = (size_t)s.size;
    return cudart_fe_ret(e);
}
