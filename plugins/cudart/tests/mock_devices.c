/*
 * Devices for the host-memory mock of the CUDA runtime: two "physical"
 * devices, narrowed by CUDA_VISIBLE_DEVICES the way CUDA narrows them
 * (ordinals, or UUID prefixes of GPU-00000000-... and GPU-11111111-...;
 * the list ends at the first entry that names no device), and the
 * per-device settings, peers and PCI ids, modelled on what an H200
 * answers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "mock_kernels.h"
#include "mock_streams.h"

#define PHYSICAL 2

static const char *const uuids[PHYSICAL] = {
    "GPU-00000000-0000-0000-0000-000000000000",
    "GPU-11111111-1111-1111-1111-111111111111",
};

static pthread_once_t visible_once = PTHREAD_ONCE_INIT;
static int nvisible;
static int visible[PHYSICAL];

static int parse_entry(const char *e, size_t n)
{
    if (n == 1 && e[0] >= '0' && e[0] < '0' + PHYSICAL)
        return e[0] - '0';
    for (int p = 0; n > 4 && p < PHYSICAL; p++)
        if (n <= strlen(uuids[p]) && strncmp(e, uuids[p], n) == 0)
            return p;
    return -1;
}

static void read_visible(void)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (v == NULL) {
        nvisible = PHYSICAL;
        for (int p = 0; p < PHYSICAL; p++)
            visible[p] = p;
        return;
    }
    while (nvisible < PHYSICAL) {
        size_t n = strcspn(v, ",");
        int p = parse_entry(v, n);
        if (p < 0)
            break;
        visible[nvisible++] = p;
        if (v[n] == '\0')
            break;
        v += n + 1;
    }
}

int mock_visible_count(void)
{
    pthread_once(&visible_once, read_visible);
    return nvisible;
}

int mock_physical(int ordinal)
{
    pthread_once(&visible_once, read_visible);
    return visible[ordinal];
}

static int valid(int device)
{
    return device >= 0 && device < mock_visible_count();
}

/* Per visible device. */
static size_t limits[PHYSICAL][cudaLimitPersistingL2CacheSize + 1];
static enum cudaFuncCache cache_config[PHYSICAL];
static enum cudaSharedMemConfig bank_size[PHYSICAL] = {
    cudaSharedMemBankSizeFourByte, cudaSharedMemBankSizeFourByte};
static unsigned flags[PHYSICAL] = {cudaDeviceMapHost, cudaDeviceMapHost};
static int peer_enabled[PHYSICAL][PHYSICAL];

cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit)
{
    if ((unsigned)limit > cudaLimitPersistingL2CacheSize)
        return cudaErrorInvalidValue;
    *value = limits[mock_current_device()][limit];
    return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    if ((unsigned)limit > cudaLimitPersistingL2CacheSize)
        return cudaErrorInvalidValue;
    limits[mock_current_device()][limit] = value;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *config)
{
    *config = cache_config[mock_current_device()];
    return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config)
{
    if ((unsigned)config > cudaFuncCachePreferEqual)
        return cudaErrorInvalidValue;
    cache_config[mock_current_device()] = config;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *config)
{
    *config = bank_size[mock_current_device()];
    return cudaSuccess;
}

cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config)
{
    if ((unsigned)config > cudaSharedMemBankSizeEightByte)
        return cudaErrorInvalidValue;
    bank_size[mock_current_device()] = config;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned *out)
{
    *out = flags[mock_current_device()];
    return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned f)
{
    if (f & ~(unsigned)cudaDeviceMask)
        return cudaErrorInvalidValue;
    flags[mock_current_device()] = f | cudaDeviceMapHost;
    return cudaSuccess;
}

cudaError_t cudaInitDevice(int device, unsigned device_flags, unsigned f)
{
    (void)device_flags, (void)f;
    return valid(device) ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    if (!valid(device) || !valid(peer))
        return cudaErrorInvalidDevice;
    *can = device != peer;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned f)
{
    int dev = mock_current_device();
    if (!valid(peer))
        return cudaErrorInvalidDevice;
    if (f != 0)
        return cudaErrorInvalidValue;
    if (peer == dev)
        return cudaErrorPeerAccessUnsupported;
    if (peer_enabled[dev][peer])
        return cudaErrorPeerAccessAlreadyEnabled;
    peer_enabled[dev][peer] = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    int dev = mock_current_device();
    if (!valid(peer))
        return cudaErrorInvalidDevice;
    if (peer == dev || !peer_enabled[dev][peer])
        return cudaErrorPeerAccessNotEnabled;
    peer_enabled[dev][peer] = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr,
                                      int src, int dst)
{
    if (!valid(src) || !valid(dst) || src == dst)
        return cudaErrorInvalidDevice;
    *value = attr == cudaDevP2PAttrAccessSupported ||
             attr == cudaDevP2PAttrPerformanceRank;
    return cudaSuccess;
}

cudaError_t cudaMemcpyPeer(void *dst, int dst_dev, const void *src,
                           int src_dev, size_t count)
{
    if (!valid(dst_dev) || !valid(src_dev))
        return cudaErrorInvalidDevice;
    mock_streams_drain();
    if (count != 0)
        memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src,
                                int src_dev, size_t count, cudaStream_t s)
{
    (void)s;
    return cudaMemcpyPeer(dst, dst_dev, src, src_dev, count);
}

/* Physical device p sits on bus 0x0d + p. */
cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int device)
{
    char full[16];
    if (!valid(device))
        return cudaErrorInvalidDevice;
    if (len <= 0)
        return cudaErrorInvalidValue;
    snprintf(full, sizeof(full), "0000:%02x:00.0",
             0x0d + mock_physical(device));
    snprintf(id, (size_t)len, "%s", full);
    return (size_t)len > strlen(full) ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *id)
{
    unsigned bus;
    char tail;
    if (sscanf(id, "0000:%x:00.%c", &bus, &tail) == 2 && tail == '0')
        for (int d = 0; d < mock_visible_count(); d++)
            if (0x0d + (unsigned)mock_physical(d) == bus) {
                *device = d;
                return cudaSuccess;
            }
    return cudaErrorInvalidDevice;
}

/* The last visible device whose major version is at least the one asked
 * for (the mock's are 9.0), else 0. */
cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    *device = prop->major <= 9 ? mock_visible_count() - 1 : 0;
    return cudaSuccess;
}
