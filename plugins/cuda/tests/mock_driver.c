/*
 * A driver of two GPUs held in memory, for the mock backend (gvs-cuda.so
 * in the tests' plugin dir) that serves cuda.mock_devices without a GPU:
 * it stands for backend/driver.c and fills cuda_be_drv with functions
 * that answer as the driver would, by fixed values (mock_devices.c
 * checks them on the client).
 */
#include "be.h"

#include <stdio.h>
#include <string.h>

#define MOCK_DEVICES 2

static CUresult mock_init(unsigned int flags)
{
    return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult mock_count(int *count)
{
    *count = MOCK_DEVICES;
    return CUDA_SUCCESS;
}

static CUresult check_dev(CUdevice dev)
{
    return dev >= 0 && dev < MOCK_DEVICES ? CUDA_SUCCESS
                                          : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult mock_get(CUdevice *device, int ordinal)
{
    CUresult r = check_dev(ordinal);
    if (r == CUDA_SUCCESS)
        *device = ordinal;
    return r;
}

static CUresult mock_attribute(int *pi, CUdevice_attribute attrib,
                               CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r != CUDA_SUCCESS)
        return r;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *pi = 9;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *pi = 0;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *pi = 132;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
        *pi = 0x18 + dev;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult mock_uuid(CUuuid *uuid, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        for (int i = 0; i < 16; i++)
            uuid->bytes[i] = (char)(0xa0 + 16 * dev + i);
    return r;
}

static CUresult mock_capability(int *major, int *minor, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS) {
        *major = 9;
        *minor = 0;
    }
    return r;
}

static CUresult mock_total(size_t *bytes, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        *bytes = (size_t)80 << 30;
    return r;
}

static CUresult mock_name(char *name, int len, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        snprintf(name, (size_t)len, "gvs mock GPU %d", (int)dev);
    return r;
}

static CUresult mock_peer(int *can, CUdevice dev, CUdevice peer)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        r = check_dev(peer);
    if (r == CUDA_SUCCESS)
        *can = dev != peer;
    return r;
}

static CUresult mock_p2p(int *value, CUdevice_P2PAttribute attrib,
                         CUdevice src, CUdevice dst)
{
    CUresult r = check_dev(src);
    if (r == CUDA_SUCCESS)
        r = check_dev(dst);
    if (r == CUDA_SUCCESS && src == dst)
        r = CUDA_ERROR_INVALID_DEVICE;
    if (r == CUDA_SUCCESS)
        *value = attrib == CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ? 0 : 1;
    return r;
}

static CUresult mock_properties(CUdevprop *prop, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS) {
        memset(prop, 0, sizeof(*prop));
        prop->maxThreadsPerBlock = 1024;
        prop->SIMDWidth = 32;
        prop->clockRate = 1980000;
    }
    return r;
}

static CUresult mock_tex1d(size_t *width, CUarray_format format,
                           unsigned channels, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS && (channels < 1 || channels > 4 || format == 0))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *width = (size_t)1 << 28;
    return r;
}

static CUresult mock_affinity(int *pi, CUexecAffinityType type, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        *pi = type == CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    return r;
}

static CUresult mock_bus_id(char *id, int len, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        snprintf(id, (size_t)len, "0000:%02x:00.0", 0x18 + (int)dev);
    return r;
}

static CUresult mock_by_bus_id(CUdevice *dev, const char *id)
{
    unsigned bus;
    if (sscanf(id, "0000:%2x:00.0", &bus) != 1 || bus < 0x18 ||
        bus >= 0x18 + MOCK_DEVICES)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = (CUdevice)(bus - 0x18);
    return CUDA_SUCCESS;
}

int cuda_be_driver_load(void)
{
    cuda_be_drv.cuDeviceCanAccessPeer = mock_peer;
    cuda_be_drv.cuDeviceGetP2PAttribute = mock_p2p;
    cuda_be_drv.cuDeviceGetProperties = mock_properties;
    cuda_be_drv.cuDeviceGetTexture1DLinearMaxWidth = mock_tex1d;
    cuda_be_drv.cuDeviceGetExecAffinitySupport = mock_affinity;
    cuda_be_drv.cuDeviceGetPCIBusId = mock_bus_id;
    cuda_be_drv.cuDeviceGetByPCIBusId = mock_by_bus_id;
    cuda_be_drv.cuInit = mock_init;
    cuda_be_drv.cuDriverGetVersion = mock_version;
    cuda_be_drv.cuDeviceGetCount = mock_count;
    cuda_be_drv.cuDeviceGet = mock_get;
    cuda_be_drv.cuDeviceGetAttribute = mock_attribute;
    cuda_be_drv.cuDeviceGetUuid = mock_uuid;
    cuda_be_drv.cuDeviceGetUuid_v2 = mock_uuid;
    cuda_be_drv.cuDeviceComputeCapability = mock_capability;
    cuda_be_drv.cuDeviceTotalMem_v2 = mock_total;
    cuda_be_drv.cuDeviceGetName = mock_name;
    /* A function the backend calls that the mock lacks leaves the mock
     * "without a driver": every call fails, and so does the test. */
#define CUDA_MOCK_SET(name)                                                  \
    if (cuda_be_drv.name == NULL)                                            \
        return -1;
    CUDA_BE_CALLED(CUDA_MOCK_SET)
    CUDA_BE_CALLED_BY_HAND(CUDA_MOCK_SET)
#undef CUDA_MOCK_SET
    return 0;
}
