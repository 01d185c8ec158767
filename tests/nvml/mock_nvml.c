/*
 * A stand-in for NVML (libnvidia-ml.so.1) with the entry points gvsd
 * uses (server/gpus.c), listing two GPUs whose UUIDs are those of the
 * CUDA runtime mock's devices (plugins/cudart/tests/mock_devices.c), so
 * that gvsd's GPU list (`gvs status`, the per-GPU metrics) can be tested
 * without a GPU: a test puts its directory on gvsd's LD_LIBRARY_PATH.
 */
#include <stdio.h>
#include <string.h>

#define MOCK_GPUS 2u

struct nvml_memory {
    unsigned long long total, free, used;
};

static const char *const names[MOCK_GPUS] = {"gvs mock 0", "gvs mock 1"};
static const char *const uuids[MOCK_GPUS] = {
    "GPU-00000000-0000-0000-0000-000000000000",
    "GPU-11111111-1111-1111-1111-111111111111",
};

/* NVML's codes: success, invalid argument, insufficient size. */
enum { OK = 0, BAD_ARG = 2, TOO_SMALL = 7 };

int nvmlInit_v2(void)
{
    return OK;
}

int nvmlShutdown(void)
{
    return OK;
}

const char *nvmlErrorString(int r)
{
    return r == OK ? "Success" : "mock NVML error";
}

int nvmlDeviceGetCount_v2(unsigned *count)
{
    *count = MOCK_GPUS;
    return OK;
}

/* A device handle is its index + 1: never NULL. */
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **device)
{
    if (index >= MOCK_GPUS)
        return BAD_ARG;
    *device = (void *)(unsigned long)(index + 1);
    return OK;
}

static int index_of(void *device)
{
    unsigned long i = (unsigned long)device;
    return i >= 1 && i <= MOCK_GPUS ? (int)(i - 1) : -1;
}

static int copy(const char *s, char *out, unsigned len)
{
    if (strlen(s) >= len)
        return TOO_SMALL;
    memcpy(out, s, strlen(s) + 1);
    return OK;
}

int nvmlDeviceGetName(void *device, char *out, unsigned len)
{
    int i = index_of(device);
    return i < 0 ? BAD_ARG : copy(names[i], out, len);
}

int nvmlDeviceGetUUID(void *device, char *out, unsigned len)
{
    int i = index_of(device);
    return i < 0 ? BAD_ARG : copy(uuids[i], out, len);
}

int nvmlDeviceGetMemoryInfo(void *device, struct nvml_memory *m)
{
    if (index_of(device) < 0)
        return BAD_ARG;
    m->total = 80ull << 30;
    m->used = 1ull << 30;
    m->free = m->total - m->used;
    return OK;
}
