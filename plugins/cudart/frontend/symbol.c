#include "fe.h"

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
        e = fe_copy(dst, src, count, kind);
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
        e = fe_copy(dst, src, count, kind);
    return cudart_fe_ret(e);
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
