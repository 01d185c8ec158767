/* Device queries that are not a driver call alone (cuda.api). */
#include "be.h"

#include <stdio.h>
#include <string.h>

#include "apigen_rt.h"
#include "gvs/err.h"

/* The longest name a device has (cudaDeviceProp's name field). */
#define NAME_MAX_LEN 256
/* A PCI bus id is "dddd:bb:dd.f"; what a program may pass is bounded. */
#define BUS_ID_MAX_LEN 64

int cuda_be_cudevicetotalmem_v2(struct gvs_call *call)
{
    struct cuda_be_session *s = call->state;
    struct apigen_call c = {call->out, call->in, 0};
    int32_t dev;
    size_t bytes = 0;
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuDeviceTotalMem_v2)(&bytes, (CUdevice)dev);
    /* What the session may hold, as cudart's cudaMemGetInfo shows it. */
    struct gvs_session_info info;
    s->host->session_info(s->session, &info);
    if (r == CUDA_SUCCESS && info.memory_quota != 0 &&
        info.memory_quota < bytes)
        bytes = (size_t)info.memory_quota;
    apigen_put_i32(&c, (int32_t)r);
    if (r == CUDA_SUCCESS)
        apigen_put_u64(&c, bytes);
    return c.rc;
}

int cuda_be_device_get_name(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t dev;
    char name[NAME_MAX_LEN];
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuDeviceGetName)(name, (int)sizeof(name), (CUdevice)dev);
    apigen_put_i32(&c, (int32_t)r);
    if (r == CUDA_SUCCESS)
        apigen_put_blob(&c, name, strnlen(name, sizeof(name)));
    return c.rc;
}

int cuda_be_device_get_pci_bus_id(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t dev;
    char id[BUS_ID_MAX_LEN];
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuDeviceGetPCIBusId)(id, (int)sizeof(id), (CUdevice)dev);
    apigen_put_i32(&c, (int32_t)r);
    if (r == CUDA_SUCCESS)
        apigen_put_blob(&c, id, strnlen(id, sizeof(id)));
    return c.rc;
}

int cuda_be_device_get_by_pci_bus_id(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const uint8_t *bytes;
    size_t n;
    char id[BUS_ID_MAX_LEN];
    CUdevice dev = 0;
    apigen_get_blob(&c, &bytes, &n);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (n >= sizeof(id)) {
        snprintf(call->why, sizeof(call->why),
                 "a PCI bus id of %zu bytes (at most %zu)", n,
                 sizeof(id) - 1);
        return GVS_E_RANGE;
    }
    memcpy(id, bytes, n);
    id[n] = '\0';
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuDeviceGetByPCIBusId)(&dev, id);
    apigen_put_i32(&c, (int32_t)r);
    if (r == CUDA_SUCCESS)
        apigen_put_i32(&c, (int32_t)dev);
    return c.rc;
}
