/* Device calls whose arguments the generator cannot describe: PCI bus
 * ids (strings), cudaChooseDevice (a whole cudaDeviceProp), and the
 * deprecated shared memory bank configuration. */
#include "devices.h"

#include <string.h>

#include "cudart_ops.h"

/* Longer strings are no PCI bus id; CUDA would refuse them too. */
#define BUS_ID_MAX 1024u

/* Request: i32 len, i32 device.  Reply: i32 result, str what CUDA wrote
 * into a buffer of len bytes (up to its terminator, even on failure: a
 * buffer too short gets the start of the id, as natively). */
cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    struct apigen_call c;
    const uint8_t *text;
    size_t n;
    if (pciBusId == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    apigen_put_i32(&c, len);
    apigen_put_i32(&c, device);
    e = cudart_fe_run(&c, CUDART_OP_cudaDeviceGetPCIBusId, 0);
    /* No reply (the connection failed): nothing more to read. */
    if (c.get == NULL)
        return cudart_fe_ret(e);
    apigen_get_blob(&c, &text, &n);
    if (apigen_end(&c) < 0)
        return cudart_fe_ret(cudaErrorUnknown);
    if (len > 0 && (n > 0 || e == cudaSuccess)) {
        if (n > (size_t)len - 1)
            n = (size_t)len - 1;
        memcpy(pciBusId, text, n);
        pciBusId[n] = '\0';
    }
    return cudart_fe_ret(e);
}

/* Request: str id.  Reply: i32 result, on success i32 device. */
cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
    struct apigen_call c;
    int32_t dev = 0;
    if (device == NULL || pciBusId == NULL ||
        strnlen(pciBusId, BUS_ID_MAX + 1) > BUS_ID_MAX)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    apigen_put_str(&c, pciBusId);
    e = cudart_fe_run(&c, CUDART_OP_cudaDeviceGetByPCIBusId, 0);
    if (e == cudaSuccess)
        apigen_get_i32(&c, &dev);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *device = dev;
    return cudart_fe_ret(e);
}

/* Request: raw struct cudaDeviceProp.  Reply: i32 result, on success
 * i32 device. */
cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    struct apigen_call c;
    int32_t dev = 0;
    if (device == NULL || prop == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    apigen_put_bytes(&c, prop, sizeof(*prop));
    e = cudart_fe_run(&c, CUDART_OP_cudaChooseDevice, 0);
    if (e == cudaSuccess)
        apigen_get_i32(&c, &dev);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *device = dev;
    return cudart_fe_ret(e);
}

/* Request: empty.  Reply: i32 result, on success i32 configuration. */
cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *pConfig)
{
    struct apigen_call c;
    int32_t v = 0;
    if (pConfig == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    e = cudart_fe_run(&c, CUDART_OP_DEVICE_GET_SHARED_MEM_CONFIG,
                      APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_i32(&c, &v);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *pConfig = (enum cudaSharedMemConfig)v;
    return cudart_fe_ret(e);
}

/* Request: i32 configuration.  Reply: i32 result. */
cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    apigen_put_i32(&c, config);
    e = cudart_fe_run(&c, CUDART_OP_DEVICE_SET_SHARED_MEM_CONFIG,
                      APIGEN_DEVICE);
    return cudart_fe_ret(cudart_fe_end(&c, e));
}
