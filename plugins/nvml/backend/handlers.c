/* The hand-written ops of nvml.api, whose wire forms it gives. */
#include "be.h"

#include <string.h>
#include <unistd.h>

int nvml_be_init(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    if (apigen_end(&c) < 0)
        return c.rc;
    nvmlReturn_t r = nvml_be_ready();
    apigen_put_i32(&c, (int32_t)r);
    if (r == NVML_SUCCESS)
        apigen_put_u32(&c, nvml_be_device_count());
    return c.rc;
}

static void put_string(struct apigen_call *c, nvmlReturn_t r, const char *s,
                       size_t room)
{
    apigen_put_i32(c, (int32_t)r);
    if (r == NVML_SUCCESS)
        apigen_put_blob(c, s, strnlen(s, room));
}

int nvml_be_system_string(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t which;
    apigen_get_i32(&c, &which);
    if (apigen_end(&c) < 0)
        return c.rc;
    char s[NVML_STRING_MAX + 1] = "";
    nvmlReturn_t r = nvml_be_ready();
    if (r == NVML_SUCCESS && which == NVML_STR_DRIVER_VERSION)
        r = NVML_LIB(nvmlSystemGetDriverVersion)(s, sizeof(s));
    else if (r == NVML_SUCCESS && which == NVML_STR_NVML_VERSION)
        r = NVML_LIB(nvmlSystemGetNVMLVersion)(s, sizeof(s));
    else if (r == NVML_SUCCESS)
        r = NVML_ERROR_INVALID_ARGUMENT;
    put_string(&c, r, s, sizeof(s));
    return c.rc;
}

int nvml_be_nvmlsystemgetcudadriverversion_v2(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    if (apigen_end(&c) < 0)
        return c.rc;
    int version = 0;
    nvmlReturn_t r = nvml_be_ready();
    if (r == NVML_SUCCESS)
        r = NVML_LIB(nvmlSystemGetCudaDriverVersion_v2)(&version);
    apigen_put_i32(&c, (int32_t)r);
    if (r == NVML_SUCCESS)
        apigen_put_i32(&c, version);
    return c.rc;
}

int nvml_be_device_string(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t dev, length;
    int32_t which;
    apigen_get_u32(&c, &dev);
    apigen_get_i32(&c, &which);
    apigen_get_u32(&c, &length);
    if (apigen_end(&c) < 0)
        return c.rc;
    /* NVML answers a short buffer itself; a longer one than ours holds
     * no more. */
    char s[NVML_STRING_MAX + 1] = "";
    unsigned room = length < sizeof(s) ? length : (unsigned)sizeof(s);
    nvmlDevice_t h;
    nvmlReturn_t r = nvml_be_device(dev, &h);
    if (r == NVML_SUCCESS) {
        switch (which) {
        case NVML_STR_NAME:
            r = NVML_LIB(nvmlDeviceGetName)(h, s, room);
            break;
        case NVML_STR_UUID:
            r = NVML_LIB(nvmlDeviceGetUUID)(h, s, room);
            break;
        case NVML_STR_SERIAL:
            r = NVML_LIB(nvmlDeviceGetSerial)(h, s, room);
            break;
        case NVML_STR_BOARD_PART_NUMBER:
            r = NVML_LIB(nvmlDeviceGetBoardPartNumber)(h, s, room);
            break;
        case NVML_STR_VBIOS_VERSION:
            r = NVML_LIB(nvmlDeviceGetVbiosVersion)(h, s, room);
            break;
        default:
            r = NVML_ERROR_INVALID_ARGUMENT;
        }
    }
    put_string(&c, r, s, room);
    return c.rc;
}

/* The session's view (docs/nvml.md): with a quota, the quota is the
 * memory and what is left of it bounds the free; used is always the
 * session's own allocations on the GPU, reserved the driver's only
 * where no quota hides the GPU's size. */
int nvml_be_device_memory(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t dev;
    apigen_get_u32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    const struct nvml_be_device *d = nvml_be_device_at(dev);
    nvmlReturn_t r = d != NULL ? NVML_SUCCESS : nvml_be_ready();
    if (r == NVML_SUCCESS && d == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
    if (r == NVML_SUCCESS)
        r = NVML_LIB(nvmlDeviceGetMemoryInfo_v2)(d->handle, &m);
    uint64_t own = 0, quota = 0;
    if (r == NVML_SUCCESS) {
        nvml_be_remote->quota_usage(d->ordinal, &own, &quota);
        size_t total = (size_t)m.total, free = (size_t)m.free;
        nvml_be_remote->quota_mem_info(&free, &total);
        m.total = total;
        m.free = free;
        if (quota != 0)
            m.reserved = 0;
    }
    apigen_put_i32(&c, (int32_t)r);
    if (r == NVML_SUCCESS) {
        apigen_put_u64(&c, m.total);
        apigen_put_u64(&c, m.reserved);
        apigen_put_u64(&c, m.free);
        apigen_put_u64(&c, own);
    }
    return c.rc;
}

int nvml_be_device_pci_class(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t dev;
    apigen_get_u32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    nvmlDevice_t h;
    nvmlReturn_t r = nvml_be_device(dev, &h);
    nvmlPciInfoExt_t pci = {.version = nvmlPciInfoExt_v1};
    if (r == NVML_SUCCESS)
        r = NVML_LIB(nvmlDeviceGetPciInfoExt) != NULL
                ? NVML_LIB(nvmlDeviceGetPciInfoExt)(h, &pci)
                : NVML_ERROR_NOT_SUPPORTED;
    apigen_put_i32(&c, (int32_t)r);
    if (r == NVML_SUCCESS) {
        apigen_put_u32(&c, pci.baseClass);
        apigen_put_u32(&c, pci.subClass);
    }
    return c.rc;
}

/* The worker's own entries of NVML's list: the session's processes. */
int nvml_be_device_processes(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t dev;
    int32_t kind;
    apigen_get_u32(&c, &dev);
    apigen_get_i32(&c, &kind);
    if (apigen_end(&c) < 0)
        return c.rc;
    nvmlDevice_t h;
    nvmlReturn_t r = nvml_be_device(dev, &h);
    if (r == NVML_SUCCESS && (kind < 0 || kind >= NVML_PROC_KINDS))
        r = NVML_ERROR_INVALID_ARGUMENT;
    /* Every process on the GPU, whoever's: a list of its size. */
    enum { ROOM = 1024 };
    static _Thread_local nvmlProcessInfo_t all[ROOM];
    unsigned n = ROOM;
    if (r == NVML_SUCCESS) {
        if (kind == NVML_PROC_COMPUTE)
            r = NVML_LIB(nvmlDeviceGetComputeRunningProcesses_v3)(h, &n, all);
        else if (kind == NVML_PROC_GRAPHICS)
            r = NVML_LIB(nvmlDeviceGetGraphicsRunningProcesses_v3)(h, &n, all);
        else
            r = NVML_LIB(nvmlDeviceGetMPSComputeRunningProcesses_v3)(h, &n, all);
    }
    unsigned own = 0;
    unsigned pid = (unsigned)getpid();
    for (unsigned i = 0; r == NVML_SUCCESS && i < n && i < ROOM; i++)
        if (all[i].pid == pid && own < NVML_PROCESSES_MAX)
            all[own++] = all[i];
    apigen_put_i32(&c, (int32_t)r);
    if (r == NVML_SUCCESS) {
        apigen_put_u32(&c, own);
        for (unsigned i = 0; i < own; i++) {
            apigen_put_u64(&c, all[i].usedGpuMemory);
            apigen_put_u32(&c, all[i].gpuInstanceId);
            apigen_put_u32(&c, all[i].computeInstanceId);
        }
    }
    return c.rc;
}

int nvml_be_device_field_values(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t dev, n;
    apigen_get_u32(&c, &dev);
    apigen_get_u32(&c, &n);
    if (c.rc == 0 && (n == 0 || n > NVML_FIELD_VALUES_MAX))
        c.rc = GVS_E_PROTO;
    static _Thread_local nvmlFieldValue_t v[NVML_FIELD_VALUES_MAX];
    for (uint32_t i = 0; i < n && c.rc == 0; i++) {
        memset(&v[i], 0, sizeof(v[i]));
        apigen_get_u32(&c, &v[i].fieldId);
        apigen_get_u32(&c, &v[i].scopeId);
    }
    if (apigen_end(&c) < 0)
        return c.rc;
    nvmlDevice_t h;
    nvmlReturn_t r = nvml_be_device(dev, &h);
    if (r == NVML_SUCCESS)
        r = NVML_LIB(nvmlDeviceGetFieldValues)(h, (int)n, v);
    apigen_put_i32(&c, (int32_t)r);
    if (r == NVML_SUCCESS)
        apigen_put_bytes(&c, v, (size_t)n * sizeof(v[0]));
    return c.rc;
}
