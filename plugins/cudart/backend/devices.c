/* Device handlers the generator cannot describe (the frontend's
 * devices.c and peer.c). */
#include "be.h"

#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

/* Longer strings are no PCI bus id. */
#define BUS_ID_MAX 1024u

/* Request: u64 dst, i32 dst device, u64 src, i32 src device, u64 count,
 * u8 async, u64 stream (async only).  Reply: i32 result.  Both ranges
 * must be device memory, as for cudaMemcpy. */
int cudart_be_memcpy_peer(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t dst, src, count, stream = 0;
    int32_t dst_dev, src_dev;
    uint8_t async;
    cudaStream_t s = NULL;
    apigen_get_u64(&c, &dst);
    apigen_get_i32(&c, &dst_dev);
    apigen_get_u64(&c, &src);
    apigen_get_i32(&c, &src_dev);
    apigen_get_u64(&c, &count);
    apigen_get_u8(&c, &async);
    if (c.rc == 0 && async == 1)
        apigen_get_u64(&c, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (async > 1)
        return GVS_E_PROTO;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess && count > SIZE_MAX)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = be_check_device_range(dst, count);
    if (e == cudaSuccess)
        e = be_check_device_range(src, count);
    if (e == cudaSuccess && async)
        e = be_stream(call, stream, &s);
    void *d = (void *)(uintptr_t)dst;
    const void *p = (const void *)(uintptr_t)src;
    if (e == cudaSuccess && async)
        e = cudaMemcpyPeerAsync(d, dst_dev, p, src_dev, (size_t)count, s);
    else if (e == cudaSuccess)
        e = cudaMemcpyPeer(d, dst_dev, p, src_dev, (size_t)count);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: i32 len, i32 device.  Reply: i32 result, str what CUDA wrote
 * into a buffer of len bytes (at most 64), up to its terminator. */
int cudart_be_cudadevicegetpcibusid(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    char buf[64];
    int32_t len, device;
    apigen_get_i32(&c, &len);
    apigen_get_i32(&c, &device);
    if (apigen_end(&c) < 0)
        return c.rc;
    memset(buf, 0, sizeof(buf));
    if (len > (int32_t)sizeof(buf))
        len = (int32_t)sizeof(buf);
    cudaError_t e = cudaDeviceGetPCIBusId(buf, len, device);
    apigen_put_i32(&c, e);
    apigen_put_blob(&c, buf, strnlen(buf, sizeof(buf) - 1));
    return c.rc;
}

/* Request: str id.  Reply: i32 result, on success i32 device. */
int cudart_be_cudadevicegetbypcibusid(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    char *id = NULL;
    int device = 0;
    c.rc = gvs_buf_get_str(c.get, BUS_ID_MAX, &id);
    if (apigen_end(&c) < 0) {
        gvs_free(id);
        return c.rc;
    }
    cudaError_t e = cudaDeviceGetByPCIBusId(&device, id);
    gvs_free(id);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, device);
    return c.rc;
}

/* Request: raw struct cudaDeviceProp.  Reply: i32 result, on success
 * i32 device. */
int cudart_be_cudachoosedevice(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cudaDeviceProp prop;
    int device = 0;
    apigen_get_bytes(&c, &prop, sizeof(prop));
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudaChooseDevice(&device, &prop);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, device);
    return c.rc;
}

/* The bank size calls are deprecated in CUDA 13, not gone. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* Request: empty.  Reply: i32 result, on success i32 configuration. */
int cudart_be_device_get_shared_mem_config(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    enum cudaSharedMemConfig config = cudaSharedMemBankSizeDefault;
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaDeviceGetSharedMemConfig(&config);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_i32(&c, config);
    return c.rc;
}

/* Request: i32 configuration.  Reply: i32 result. */
int cudart_be_device_set_shared_mem_config(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t config;
    apigen_get_i32(&c, &config);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaDeviceSetSharedMemConfig((enum cudaSharedMemConfig)config);
    apigen_put_i32(&c, e);
    return c.rc;
}

#pragma GCC diagnostic pop
