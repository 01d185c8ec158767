/* The session's GPUs as NVML handles, and what identifies them: names,
 * UUIDs, serials and PCI addresses, asked of the backend once per
 * nvmlInit (they do not change while the GPU is there), and the lookups
 * by those, answered from its answers. */
#include "fe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "nvml_fe_gen.h"
#include "nvml_ops.h"
#include "nvml_wire.h"

static struct nvmlDevice_st devices[NVML_DEVICES_MAX];
static _Atomic unsigned count;

/* What identifies each GPU, as the backend answered it: a string of
 * `which` is known once its bit is set in have_string. */
struct identity {
    unsigned have_string;
    char string[NVML_STR_DEVICE_COUNT][NVML_STRING_MAX + 1];
    int have_pci;
    nvmlPciInfo_t pci;
};
static pthread_mutex_t identity_lock = PTHREAD_MUTEX_INITIALIZER;
static struct identity identity[NVML_DEVICES_MAX];

void nvml_fe_devices_set(unsigned n)
{
    pthread_mutex_lock(&identity_lock);
    for (unsigned i = 0; i < n; i++) {
        devices[i].index = i;
        identity[i].have_string = 0;
        identity[i].have_pci = 0;
    }
    atomic_store(&count, n);
    pthread_mutex_unlock(&identity_lock);
}

unsigned nvml_fe_device_count(void)
{
    return atomic_load(&count);
}

int nvml_fe_device_index(nvmlDevice_t device)
{
    unsigned n = atomic_load(&count);
    for (unsigned i = 0; i < n; i++)
        if (device == &devices[i])
            return (int)i;
    return -1;
}

/* Past any list: the backend refuses it as NVML refuses a bad handle. */
uint64_t nvml_fe_device_wire(nvmlDevice_t device, int per_thread)
{
    (void)per_thread;
    int i = nvml_fe_device_index(device);
    return i < 0 ? UINT32_MAX : (uint64_t)i;
}

nvmlReturn_t nvml_fe_begin_device(struct apigen_call *c, nvmlDevice_t device)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    int i = nvml_fe_device_index(device);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    r = nvml_fe_begin(c);
    if (r == NVML_SUCCESS)
        apigen_put_u32(c, (uint32_t)i);
    return r;
}

nvmlReturn_t nvml_fe_get_string(struct apigen_call *c, char *out,
                                unsigned length)
{
    const uint8_t *p;
    size_t len;
    apigen_get_blob(c, &p, &len);
    if (c->rc != 0)
        return NVML_ERROR_UNKNOWN;
    if (len > NVML_STRING_MAX || memchr(p, 0, len) != NULL) {
        c->rc = -1;
        return NVML_ERROR_UNKNOWN;
    }
    if (len >= length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, p, len);
    out[len] = '\0';
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (deviceCount == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = nvml_fe_device_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
    return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                           nvmlDevice_t *device)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (device == NULL || index >= nvml_fe_device_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                        nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    int i = nvml_fe_device_index(device);
    if (i < 0 || index == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = (unsigned)i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    return nvmlSystemGetCudaDriverVersion_v2(cudaDriverVersion);
}

static nvmlReturn_t system_string(enum nvml_string which, char *out,
                                  unsigned length)
{
    if (out == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct apigen_call c;
    nvmlReturn_t r = nvml_fe_begin(&c);
    if (r != NVML_SUCCESS)
        return r;
    apigen_put_i32(&c, (int32_t)which);
    r = nvml_fe_run(&c, NVML_OP_SYSTEM_STRING, 0);
    if (r == NVML_SUCCESS)
        r = nvml_fe_get_string(&c, out, length);
    return nvml_fe_end(&c, r);
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return system_string(NVML_STR_DRIVER_VERSION, version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    return system_string(NVML_STR_NVML_VERSION, version, length);
}

/* The string which of device i, asked of the backend in full the first
 * time (so that a shorter buffer is answered here, as NVML answers it). */
static nvmlReturn_t known_string(unsigned i, enum nvml_string which, char *out,
                                 unsigned length)
{
    pthread_mutex_lock(&identity_lock);
    struct identity *id = &identity[i];
    nvmlReturn_t r = NVML_SUCCESS;
    if (!(id->have_string & (1u << which))) {
        struct apigen_call c;
        r = nvml_fe_begin_device(&c, &devices[i]);
        if (r == NVML_SUCCESS) {
            apigen_put_i32(&c, (int32_t)which);
            apigen_put_u32(&c, NVML_STRING_MAX + 1);
            r = nvml_fe_run(&c, NVML_OP_DEVICE_STRING, 0);
            if (r == NVML_SUCCESS)
                r = nvml_fe_get_string(&c, id->string[which],
                                       NVML_STRING_MAX + 1);
            r = nvml_fe_end(&c, r);
        }
        if (r == NVML_SUCCESS)
            id->have_string |= 1u << which;
    }
    if (r == NVML_SUCCESS) {
        size_t len = strlen(id->string[which]);
        if (len >= length)
            r = NVML_ERROR_INSUFFICIENT_SIZE;
        else
            memcpy(out, id->string[which], len + 1);
    }
    pthread_mutex_unlock(&identity_lock);
    return r;
}

static nvmlReturn_t device_string(nvmlDevice_t device, enum nvml_string which,
                                  char *out, unsigned length)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    int i = nvml_fe_device_index(device);
    if (out == NULL || i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    return known_string((unsigned)i, which, out, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name,
                               unsigned int length)
{
    return device_string(device, NVML_STR_NAME, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
                               unsigned int length)
{
    return device_string(device, NVML_STR_UUID, uuid, length);
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial,
                                 unsigned int length)
{
    return device_string(device, NVML_STR_SERIAL, serial, length);
}

nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device,
                                          char *partNumber,
                                          unsigned int length)
{
    return device_string(device, NVML_STR_BOARD_PART_NUMBER, partNumber,
                         length);
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version,
                                       unsigned int length)
{
    return device_string(device, NVML_STR_VBIOS_VERSION, version, length);
}

/* The PCI address, asked once (nvml.api's generated round trip). */
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    int i = nvml_fe_device_index(device);
    if (pci == NULL || i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&identity_lock);
    struct identity *id = &identity[i];
    if (!id->have_pci) {
        r = nvml_rpc_nvmlDeviceGetPciInfo_v3(device, &id->pci, 0);
        id->have_pci = r == NVML_SUCCESS;
    }
    if (r == NVML_SUCCESS)
        *pci = id->pci;
    pthread_mutex_unlock(&identity_lock);
    return r;
}

/* The PCI address held, with the class codes asked of the backend. */
nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_t *pci)
{
    if (pci != NULL && pci->version != nvmlPciInfoExt_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlPciInfo_t v3;
    nvmlReturn_t r = nvmlDeviceGetPciInfo_v3(device, pci != NULL ? &v3 : NULL);
    if (r != NVML_SUCCESS)
        return r;
    struct apigen_call c;
    r = nvml_fe_begin_device(&c, device);
    if (r != NVML_SUCCESS)
        return r;
    r = nvml_fe_run(&c, NVML_OP_DEVICE_PCI_CLASS, 0);
    uint32_t base = 0, sub = 0;
    if (r == NVML_SUCCESS) {
        apigen_get_u32(&c, &base);
        apigen_get_u32(&c, &sub);
    }
    r = nvml_fe_end(&c, r);
    if (r != NVML_SUCCESS)
        return r;
    *pci = (nvmlPciInfoExt_t){.version = nvmlPciInfoExt_v1,
                              .domain = v3.domain,
                              .bus = v3.bus,
                              .device = v3.device,
                              .pciDeviceId = v3.pciDeviceId,
                              .pciSubSystemId = v3.pciSubSystemId,
                              .baseClass = base,
                              .subClass = sub};
    memcpy(pci->busId, v3.busId, sizeof(pci->busId));
    return NVML_SUCCESS;
}

/* The older forms answer the same fields: NVML's v1 and v2 differ from
 * v3 only in how they fill busId, which the v3 answer holds. */
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    return nvmlDeviceGetPciInfo_v3(device, pci);
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    return nvmlDeviceGetPciInfo_v3(device, pci);
}

/* The device whose string which equals key; NVML_ERROR_NOT_FOUND when
 * none does. */
static nvmlReturn_t find_by_string(enum nvml_string which, const char *key,
                                   nvmlDevice_t *device)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (key == NULL || device == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = nvml_fe_device_count();
    for (unsigned i = 0; i < n; i++) {
        char s[NVML_STRING_MAX + 1];
        r = known_string(i, which, s, sizeof(s));
        if (r == NVML_ERROR_NOT_SUPPORTED)
            continue;
        if (r != NVML_SUCCESS)
            return r;
        if (strcmp(s, key) == 0) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    return find_by_string(NVML_STR_UUID, uuid, device);
}

nvmlReturn_t nvmlDeviceGetHandleBySerial(const char *serial,
                                         nvmlDevice_t *device)
{
    return find_by_string(NVML_STR_SERIAL, serial, device);
}

/* "domain:bus:device.function" or "bus:device.function", hexadecimal,
 * as NVML takes it: -1 when malformed. */
static int parse_bus_id(const char *s, unsigned *domain, unsigned *bus,
                        unsigned *dev)
{
    unsigned fn;
    int end = 0;
    if (sscanf(s, "%x:%x:%x.%x%n", domain, bus, dev, &fn, &end) == 4 &&
        s[end] == '\0')
        return 0;
    *domain = 0;
    end = 0;
    if (sscanf(s, "%x:%x.%x%n", bus, dev, &fn, &end) == 3 && s[end] == '\0')
        return 0;
    return -1;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
                                              nvmlDevice_t *device)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    unsigned domain, bus, dev;
    if (pciBusId == NULL || device == NULL ||
        parse_bus_id(pciBusId, &domain, &bus, &dev) != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = nvml_fe_device_count();
    for (unsigned i = 0; i < n; i++) {
        nvmlPciInfo_t pci;
        r = nvmlDeviceGetPciInfo_v3(&devices[i], &pci);
        if (r != NVML_SUCCESS)
            return r;
        if (pci.domain == domain && pci.bus == bus && pci.device == dev) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId,
                                           nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}
