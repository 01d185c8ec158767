/* The session's GPUs (be.h): NVML's, narrowed to those the session's
 * CUDA sees, matched by UUID.  CUDA is asked through the worker's driver
 * (the one the API plugins load): cuInit in the worker, never in gvsd's
 * parent. */
#include "be.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static struct nvml_be_device list[NVML_DEVICES_MAX];
static unsigned count;

/* The worker's CUDA devices' UUIDs in NVML's form ("GPU-8-4-4-4-12"
 * hexadecimal), by ordinal: their number, or -1 when there is no driver
 * to ask. */
#define UUID_LEN 41
static int cuda_uuids(char (*out)[UUID_LEN + 1], int max)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return -1;
    CUresult (*init)(unsigned);
    CUresult (*get_count)(int *);
    CUresult (*uuid)(CUuuid *, CUdevice);
    *(void **)&init = dlsym(h, "cuInit");
    *(void **)&get_count = dlsym(h, "cuDeviceGetCount");
    *(void **)&uuid = dlsym(h, "cuDeviceGetUuid_v2");
    int n = 0;
    if (init == NULL || get_count == NULL || uuid == NULL || init(0) != CUDA_SUCCESS ||
        get_count(&n) != CUDA_SUCCESS)
        return -1;
    if (n > max)
        n = max;
    for (int d = 0; d < n; d++) {
        CUuuid u;
        if (uuid(&u, d) != CUDA_SUCCESS)
            return -1;
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(out[d], UUID_LEN + 1,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                 "%02x%02x%02x%02x%02x%02x",
                 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
                 b[10], b[11], b[12], b[13], b[14], b[15]);
    }
    return n;
}

nvmlReturn_t nvml_be_devices_list(void)
{
    unsigned n = 0;
    nvmlReturn_t r = NVML_LIB(nvmlDeviceGetCount_v2)(&n);
    if (r != NVML_SUCCESS)
        return r;
    static char seen[NVML_DEVICES_MAX][UUID_LEN + 1];
    int cuda = cuda_uuids(seen, NVML_DEVICES_MAX);
    /* Without a driver, CUDA sees no GPU: unless nothing narrows the
     * session's, there is none it may use. */
    int all = cuda < 0 && getenv("CUDA_VISIBLE_DEVICES") == NULL;
    if (cuda < 0 && !all)
        nvml_be_host->log(GVS_LOG_WARN, "no CUDA driver to say which GPUs the "
                              "session may use: it sees none");
    for (unsigned i = 0; i < n && count < NVML_DEVICES_MAX; i++) {
        nvmlDevice_t h;
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        if (NVML_LIB(nvmlDeviceGetHandleByIndex_v2)(i, &h) != NVML_SUCCESS ||
            NVML_LIB(nvmlDeviceGetUUID)(h, uuid, sizeof(uuid)) != NVML_SUCCESS)
            continue; /* NVML skips a GPU it cannot reach the same way */
        int ordinal = -1;
        for (int d = 0; d < cuda; d++)
            if (strcmp(seen[d], uuid) == 0)
                ordinal = d;
        if (ordinal < 0 && !all)
            continue;
        list[count].handle = h;
        list[count].ordinal = ordinal;
        count++;
    }
    return NVML_SUCCESS;
}

unsigned nvml_be_device_count(void)
{
    return count;
}

const struct nvml_be_device *nvml_be_device_at(uint64_t wire)
{
    if (nvml_be_ready() != NVML_SUCCESS || wire >= count)
        return NULL;
    return &list[wire];
}

nvmlReturn_t nvml_be_device(uint64_t wire, nvmlDevice_t *out)
{
    nvmlReturn_t r = nvml_be_ready();
    if (r != NVML_SUCCESS)
        return r;
    const struct nvml_be_device *d = nvml_be_device_at(wire);
    if (d == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = d->handle;
    return NVML_SUCCESS;
}
