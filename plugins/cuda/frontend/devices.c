/* The device calls that are more than a generated round trip: strings
 * both ways (cuda.api). */
#include "call.h"

#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs_remote.h"

/* A request of i32 dev whose reply is a string: the backend sends it
 * whole, and it is cut to len here, as the driver cuts it; a cut string
 * is still a success when cut_ok, else CUDA_ERROR_INVALID_VALUE with the
 * cut string written all the same (cuDeviceGetPCIBusId, as seen on
 * driver 580).  len 0 crashes that driver; here it is
 * CUDA_ERROR_INVALID_VALUE. */
static CUresult get_string(uint16_t op, char *out, int len, CUdevice dev,
                           int cut_ok)
{
    struct apigen_call c;
    const uint8_t *bytes;
    size_t n;
    if (out == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(&c, (int32_t)dev);
    r = cuda_fe_run(&c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_blob(&c, &bytes, &n);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    int cut = n > (size_t)len - 1;
    if (cut)
        n = (size_t)len - 1;
    memcpy(out, bytes, n);
    out[n] = '\0';
    return cut && !cut_ok ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* A device's handle does not change while the session lasts: the
 * backend's first answer for an ordinal is kept (libraries ask before
 * their work: 12 times per token of a GPT-2 decode).  Failures are not
 * kept, nor ordinals past the table. */
#define KEPT_DEVICES 64

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    static _Atomic int kept[KEPT_DEVICES]; /* the handle + 1, or 0 */
    int in_table = ordinal >= 0 && ordinal < KEPT_DEVICES;
    if (device == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (in_table && cuda_fe_initialized()) {
        int v = atomic_load_explicit(&kept[ordinal], memory_order_relaxed);
        if (v > 0) {
            *device = v - 1;
            return CUDA_SUCCESS;
        }
    }
    CUresult r = cuda_rpc_cuDeviceGet(device, ordinal);
    if (r == CUDA_SUCCESS && in_table && *device >= 0 && *device < INT_MAX)
        atomic_store_explicit(&kept[ordinal], *device + 1,
                              memory_order_relaxed);
    return r;
}

/* The hardware's, answered from the layer's table after the backend's
 * first answer (gvs_remote.h, gvs_remote_device_attr). */
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    if (pi == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (cuda_fe_initialized() && gvs_remote_device_attr(dev, (int)attrib, pi))
        return CUDA_SUCCESS;
    CUresult r = cuda_rpc_cuDeviceGetAttribute(pi, attrib, dev);
    if (r == CUDA_SUCCESS)
        gvs_remote_device_attr_keep(dev, (int)attrib, pi);
    return r;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    return get_string(CUDA_OP_DEVICE_GET_NAME, name, len, dev, 1);
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    return get_string(CUDA_OP_DEVICE_GET_PCI_BUS_ID, pciBusId, len, dev, 0);
}

/* A bus id no device has is the driver's to refuse; one longer than any
 * bus id is refused here. */
#define BUS_ID_MAX_LEN 63

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    struct apigen_call c;
    int32_t d;
    if (dev == NULL || pciBusId == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = strnlen(pciBusId, BUS_ID_MAX_LEN + 1);
    if (n > BUS_ID_MAX_LEN)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_blob(&c, pciBusId, n);
    r = cuda_fe_run(&c, CUDA_OP_DEVICE_GET_BY_PCI_BUS_ID, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_i32(&c, &d);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *dev = (CUdevice)d;
    return r;
}

/* Atomic capabilities and the driver's logs, in the runtime frontend's
 * wire forms (the layer's, gvs_remote.h).  The operations are the
 * enum's values, read through their int type. */
CUresult cuDeviceGetHostAtomicCapabilities(unsigned int *capabilities,
                                           const CUatomicOperation *operations,
                                           unsigned int count, CUdevice dev)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    return (CUresult)gvs_remote_atomic_caps(
        &cuda_fe_remote_api, CUDA_OP_ATOMIC_CAPS, capabilities,
        (const void *)operations, count, dev, -1);
}

CUresult cuDeviceGetP2PAtomicCapabilities(unsigned int *capabilities,
                                          const CUatomicOperation *operations,
                                          unsigned int count,
                                          CUdevice srcDevice,
                                          CUdevice dstDevice)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dstDevice < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    return (CUresult)gvs_remote_atomic_caps(
        &cuda_fe_remote_api, CUDA_OP_ATOMIC_CAPS, capabilities,
        (const void *)operations, count, srcDevice, dstDevice);
}

CUresult cuLogsDumpToMemory(CUlogIterator *iterator, char *buffer,
                            size_t *size, unsigned int flags)
{
    if (buffer == NULL || size == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    return (CUresult)gvs_remote_logs_dump(&cuda_fe_remote_api,
                                          CUDA_OP_LOGS_DUMP, iterator, buffer,
                                          *size, size, flags);
}
