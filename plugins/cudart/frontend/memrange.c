/* Attributes of a range of managed memory (api/80-misc.api
 * MEM_RANGE_ATTRS): the sizes travel, the backend's values come back
 * into the program's buffers. */
#include "fe.h"

#include <string.h>

#include "cudart_ops.h"

/* As the backend bounds them (backend/misc.c). */
#define MAX_ATTRS 16u
#define DATA_MAX ((size_t)32 << 10)

static cudaError_t range_attrs(void **data, const size_t *sizes,
                               const enum cudaMemRangeAttribute *attrs,
                               size_t n, const void *p, size_t count)
{
    struct apigen_call c;
    size_t total = 0;
    if (data == NULL || sizes == NULL || attrs == NULL || n == 0)
        return cudaErrorInvalidValue;
    if (n > MAX_ATTRS)
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < n; i++) {
        if (data[i] == NULL || sizes[i] == 0 || sizes[i] > DATA_MAX - total)
            return cudaErrorInvalidValue;
        total += sizes[i];
    }
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
    apigen_put_u64(&c, count);
    apigen_put_u32(&c, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        apigen_put_i32(&c, attrs[i]);
        apigen_put_u64(&c, sizes[i]);
    }
    e = cudart_fe_run(&c, CUDART_OP_MEM_RANGE_ATTRS, APIGEN_DEVICE);
    for (size_t i = 0; e == cudaSuccess && i < n; i++) {
        const uint8_t *v;
        size_t len;
        apigen_get_blob(&c, &v, &len);
        if (c.rc == 0 && len != sizes[i])
            return cudaErrorUnknown;
        if (c.rc == 0)
            memcpy(data[i], v, len);
    }
    return cudart_fe_end(&c, e);
}

cudaError_t cudaMemRangeGetAttribute(void *data, size_t dataSize,
                                     enum cudaMemRangeAttribute attribute,
                                     const void *devPtr, size_t count)
{
    return cudart_fe_ret(
        range_attrs(&data, &dataSize, &attribute, 1, devPtr, count));
}

cudaError_t cudaMemRangeGetAttributes(void **data, size_t *dataSizes,
                                      enum cudaMemRangeAttribute *attributes,
                                      size_t numAttributes,
                                      const void *devPtr, size_t count)
{
    return cudart_fe_ret(range_attrs(data, dataSizes, attributes,
                                     numAttributes, devPtr, count));
}
