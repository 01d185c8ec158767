/*
 * A stand-in for NVIDIA's driver (libcuda.so.1) with only what the NVML
 * plugin's backend asks of it (plugins/nvml/backend/devices.c): the
 * devices CUDA sees and their UUIDs, those of mock_nvml.c's GPUs,
 * narrowed by CUDA_VISIBLE_DEVICES (indices) as the driver narrows them.
 * In its own directory (tests/nvml/cuda), so that only the tests that
 * ask for it find it.
 */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

#define MOCK_GPUS 2

static int visible[MOCK_GPUS];
static int n_visible = -1;

CUresult cuInit(unsigned flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    n_visible = 0;
    for (int i = 0; v == NULL && i < MOCK_GPUS; i++)
        visible[n_visible++] = i;
    while (v != NULL && *v != '\0' && n_visible < MOCK_GPUS) {
        char *end;
        long d = strtol(v, &end, 10);
        if (end == v || d < 0 || d >= MOCK_GPUS)
            break; /* CUDA stops at the first invalid entry */
        visible[n_visible++] = (int)d;
        v = *end == ',' ? end + 1 : end;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    if (n_visible < 0)
        return CUDA_ERROR_NOT_INITIALIZED;
    *count = n_visible;
    return CUDA_SUCCESS;
}

/* GPU d's UUID is 16 bytes of 0x11 * d. */
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    if (n_visible < 0)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= n_visible)
        return CUDA_ERROR_INVALID_DEVICE;
    memset(uuid->bytes, 0x11 * visible[dev], sizeof(uuid->bytes));
    return CUDA_SUCCESS;
}
