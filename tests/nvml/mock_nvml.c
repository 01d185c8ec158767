/*
 * A stand-in for NVML (libnvidia-ml.so.1) listing two GPUs whose UUIDs
 * are those of the CUDA runtime mock's devices
 * (plugins/cudart/tests/mock_devices.c): gvsd's GPU list (`gvs status`,
 * the per-GPU metrics) and the NVML plugin's backend (plugins/nvml) are
 * tested on it without a GPU: a test puts its directory on gvsd's
 * LD_LIBRARY_PATH.  Every value is a function of the GPU's index, so
 * that a test knows what the backend was told.
 */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MOCK_GPUS 2u

static const char *const names[MOCK_GPUS] = {"gvs mock 0", "gvs mock 1"};
static const char *const uuids[MOCK_GPUS] = {
    "GPU-00000000-0000-0000-0000-000000000000",
    "GPU-11111111-1111-1111-1111-111111111111",
};

nvmlReturn_t nvmlInit_v2(void)
{
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == NVML_SUCCESS ? "Success" : "mock NVML error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count)
{
    *count = MOCK_GPUS;
    return NVML_SUCCESS;
}

/* A device handle is its index + 1: never NULL. */
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *device)
{
    if (index >= MOCK_GPUS)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(unsigned long)(index + 1);
    return NVML_SUCCESS;
}

static int index_of(nvmlDevice_t device)
{
    unsigned long i = (unsigned long)device;
    return i >= 1 && i <= MOCK_GPUS ? (int)(i - 1) : -1;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    for (unsigned i = 0; i < MOCK_GPUS; i++)
        if (strcmp(uuid, uuids[i]) == 0)
            return nvmlDeviceGetHandleByIndex_v2(i, device);
    return NVML_ERROR_NOT_FOUND;
}

static nvmlReturn_t copy(const char *s, char *out, unsigned len)
{
    if (strlen(s) >= len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *out, unsigned len)
{
    return copy("580.0-mock", out, len);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *out, unsigned len)
{
    return copy("13.580.0-mock", out, len);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    *version = 13000;
    return NVML_SUCCESS;
}

/* A string of a device: its name, its UUID, or "WHAT-INDEX". */
#define MOCK_STRING(fn, what)                                                \
    nvmlReturn_t fn(nvmlDevice_t device, char *out, unsigned len)            \
    {                                                                        \
        int i = index_of(device);                                            \
        char s[64];                                                          \
        if (i < 0)                                                           \
            return NVML_ERROR_INVALID_ARGUMENT;                              \
        snprintf(s, sizeof(s), "%s-%d", what, i);                            \
        return copy(s, out, len);                                            \
    }
MOCK_STRING(nvmlDeviceGetSerial, "serial")
MOCK_STRING(nvmlDeviceGetBoardPartNumber, "part")
MOCK_STRING(nvmlDeviceGetVbiosVersion, "vbios")

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *out, unsigned len)
{
    int i = index_of(device);
    return i < 0 ? NVML_ERROR_INVALID_ARGUMENT : copy(names[i], out, len);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *out, unsigned len)
{
    int i = index_of(device);
    return i < 0 ? NVML_ERROR_INVALID_ARGUMENT : copy(uuids[i], out, len);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *m)
{
    if (index_of(device) < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    m->total = 80ull << 30;
    m->used = 1ull << 30;
    m->free = m->total - m->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *m)
{
    if (index_of(device) < 0 || m->version != nvmlMemory_v2)
        return NVML_ERROR_INVALID_ARGUMENT;
    m->total = 80ull << 30;
    m->reserved = 512ull << 20;
    m->used = 512ull << 20;
    m->free = m->total - m->used - m->reserved;
    return NVML_SUCCESS;
}

/* The caller (a gvsd worker) holding 300 MiB of each GPU, and another
 * process (pid 1) 1 GiB: a session must see only its own. */
static nvmlReturn_t processes(nvmlDevice_t device, unsigned *n,
                              nvmlProcessInfo_t *p)
{
    if (index_of(device) < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (*n < 2) {
        *n = 2;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *n = 2;
    memset(p, 0, 2 * sizeof(*p));
    p[0].pid = 1;
    p[0].usedGpuMemory = 1ull << 30;
    p[1].pid = (unsigned)getpid();
    p[1].usedGpuMemory = 300ull << 20;
    p[0].gpuInstanceId = p[1].gpuInstanceId = 0xFFFFFFFF;
    p[0].computeInstanceId = p[1].computeInstanceId = 0xFFFFFFFF;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                     unsigned *n,
                                                     nvmlProcessInfo_t *p)
{
    return processes(device, n, p);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                      unsigned *n,
                                                      nvmlProcessInfo_t *p)
{
    if (index_of(device) < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    (void)p;
    *n = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device,
                                                        unsigned *n,
                                                        nvmlProcessInfo_t *p)
{
    return nvmlDeviceGetGraphicsRunningProcesses_v3(device, n, p);
}

/* Each field's value is twice its id, on GPU index i plus i. */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int n,
                                      nvmlFieldValue_t *v)
{
    int i = index_of(device);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int k = 0; k < n; k++) {
        v[k].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        v[k].value.uiVal = 2 * v[k].fieldId + (unsigned)i;
        v[k].nvmlReturn = NVML_SUCCESS;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    int i = index_of(device);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof(*pci));
    pci->domain = 0;
    pci->bus = 0x18 + (unsigned)i;
    pci->device = 0;
    pci->pciDeviceId = 0x233510de;
    snprintf(pci->busId, sizeof(pci->busId), NVML_DEVICE_PCI_BUS_ID_FMT,
             pci->domain, pci->bus, pci->device);
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy),
             NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, pci->domain, pci->bus,
             pci->device);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_t *pci)
{
    int i = index_of(device);
    if (i < 0 || pci == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (pci->version != nvmlPciInfoExt_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlPciInfo_t v3;
    (void)nvmlDeviceGetPciInfo_v3(device, &v3);
    *pci = (nvmlPciInfoExt_t){.version = nvmlPciInfoExt_v1, .domain = v3.domain,
                              .bus = v3.bus, .device = v3.device,
                              .pciDeviceId = v3.pciDeviceId, .baseClass = 3,
                              .subClass = 2};
    memcpy(pci->busId, v3.busId, sizeof(pci->busId));
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device,
                                                int *major, int *minor)
{
    if (index_of(device) < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = 9;
    *minor = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                           nvmlUtilization_t *u)
{
    int i = index_of(device);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    u->gpu = 40 + (unsigned)i;
    u->memory = 20 + (unsigned)i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device,
                                         nvmlBAR1Memory_t *m)
{
    if (index_of(device) < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    m->bar1Total = 256ull << 20;
    m->bar1Used = 1ull << 20;
    m->bar1Free = m->bar1Total - m->bar1Used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
                                                 unsigned link,
                                                 nvmlPciInfo_t *pci)
{
    (void)link;
    (void)pci;
    return index_of(device) < 0 ? NVML_ERROR_INVALID_ARGUMENT
                                : NVML_ERROR_NOT_SUPPORTED;
}

/* The rest answer base + 10 * index in each out, or NOT_SUPPORTED for
 * what a mock GPU lacks (a fan). */
#define MOCK_1(fn, type, base)                                               \
    nvmlReturn_t fn(nvmlDevice_t device, type *out)                          \
    {                                                                        \
        int i = index_of(device);                                            \
        if (i < 0)                                                           \
            return NVML_ERROR_INVALID_ARGUMENT;                              \
        *out = (type)(base + 10 * i);                                        \
        return NVML_SUCCESS;                                                 \
    }
#define MOCK_2(fn, type, base)                                               \
    nvmlReturn_t fn(nvmlDevice_t device, type *a, type *b)                   \
    {                                                                        \
        int i = index_of(device);                                            \
        if (i < 0)                                                           \
            return NVML_ERROR_INVALID_ARGUMENT;                              \
        *a = (type)(base + 10 * i);                                          \
        *b = (type)(base + 10 * i + 1);                                      \
        return NVML_SUCCESS;                                                 \
    }
#define MOCK_ARG(fn, argtype, type, base)                                    \
    nvmlReturn_t fn(nvmlDevice_t device, argtype arg, type *out)             \
    {                                                                        \
        int i = index_of(device);                                            \
        if (i < 0)                                                           \
            return NVML_ERROR_INVALID_ARGUMENT;                              \
        *out = (type)(base + 10 * i + (int)arg);                             \
        return NVML_SUCCESS;                                                 \
    }
MOCK_1(nvmlDeviceGetArchitecture, nvmlDeviceArchitecture_t, 9)
MOCK_1(nvmlDeviceGetBrand, nvmlBrandType_t, 2)
MOCK_1(nvmlDeviceGetMinorNumber, unsigned, 0)
MOCK_1(nvmlDeviceGetNumGpuCores, unsigned, 16896)
MOCK_1(nvmlDeviceGetMemoryBusWidth, unsigned, 5120)
MOCK_1(nvmlDeviceGetMaxPcieLinkGeneration, unsigned, 5)
MOCK_1(nvmlDeviceGetMaxPcieLinkWidth, unsigned, 16)
MOCK_1(nvmlDeviceGetCurrPcieLinkGeneration, unsigned, 4)
MOCK_1(nvmlDeviceGetCurrPcieLinkWidth, unsigned, 8)
MOCK_1(nvmlDeviceGetMaxMigDeviceCount, unsigned, 0)
MOCK_1(nvmlDeviceGetPersistenceMode, nvmlEnableState_t, 1)
MOCK_1(nvmlDeviceGetComputeMode, nvmlComputeMode_t, 0)
MOCK_1(nvmlDeviceGetDisplayMode, nvmlEnableState_t, 0)
MOCK_1(nvmlDeviceGetDisplayActive, nvmlEnableState_t, 0)
MOCK_1(nvmlDeviceGetPowerUsage, unsigned, 75000)
MOCK_1(nvmlDeviceGetEnforcedPowerLimit, unsigned, 700000)
MOCK_1(nvmlDeviceGetPowerManagementLimit, unsigned, 700000)
MOCK_1(nvmlDeviceGetPowerManagementDefaultLimit, unsigned, 700000)
MOCK_1(nvmlDeviceGetTotalEnergyConsumption, unsigned long long, 123456789)
MOCK_1(nvmlDeviceGetPerformanceState, nvmlPstates_t, 0)
MOCK_1(nvmlDeviceGetCurrentClocksEventReasons, unsigned long long, 1)
MOCK_2(nvmlDeviceGetMigMode, unsigned, 0)
MOCK_2(nvmlDeviceGetEccMode, nvmlEnableState_t, 0)
MOCK_2(nvmlDeviceGetGpuOperationMode, nvmlGpuOperationMode_t, 0)
MOCK_2(nvmlDeviceGetPowerManagementLimitConstraints, unsigned, 100000)
MOCK_1(nvmlDeviceGetPowerState, nvmlPstates_t, 0)
MOCK_2(nvmlDeviceGetEncoderUtilization, unsigned, 3)
MOCK_2(nvmlDeviceGetDecoderUtilization, unsigned, 4)
MOCK_1(nvmlDeviceGetPcieReplayCounter, unsigned, 0)
MOCK_1(nvmlDeviceGetCurrentClocksThrottleReasons, unsigned long long, 1)
MOCK_1(nvmlDeviceGetSupportedClocksThrottleReasons, unsigned long long, 511)
MOCK_1(nvmlDeviceGetSupportedClocksEventReasons, unsigned long long, 511)
MOCK_1(nvmlDeviceGetBoardId, unsigned, 6)
MOCK_1(nvmlDeviceGetMultiGpuBoard, unsigned, 0)
MOCK_1(nvmlDeviceGetNumFans, unsigned, 0)
MOCK_1(nvmlDeviceGetPowerManagementMode, nvmlEnableState_t, 1)
MOCK_1(nvmlDeviceGetRetiredPagesPendingStatus, nvmlEnableState_t, 0)
MOCK_2(nvmlDeviceGetAutoBoostedClocksEnabled, nvmlEnableState_t, 0)
MOCK_2(nvmlDeviceGetGspFirmwareMode, unsigned, 1)
MOCK_1(nvmlDeviceGetPcieSpeed, unsigned, 16000)
MOCK_1(nvmlDeviceGetPcieLinkMaxSpeed, unsigned, 32000)
MOCK_1(nvmlDeviceGetAdaptiveClockInfoStatus, unsigned, 1)
MOCK_ARG(nvmlDeviceGetTemperature, nvmlTemperatureSensors_t, unsigned, 30)
MOCK_ARG(nvmlDeviceGetTemperatureThreshold, nvmlTemperatureThresholds_t, unsigned, 90)
MOCK_ARG(nvmlDeviceGetPcieThroughput, nvmlPcieUtilCounter_t, unsigned, 100)
MOCK_ARG(nvmlDeviceGetApplicationsClock, nvmlClockType_t, unsigned, 1700)
MOCK_ARG(nvmlDeviceGetDefaultApplicationsClock, nvmlClockType_t, unsigned, 1700)
MOCK_ARG(nvmlDeviceGetMaxCustomerBoostClock, nvmlClockType_t, unsigned, 1980)
MOCK_ARG(nvmlDeviceGetFanSpeed_v2, unsigned, unsigned, 0)

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
                                         nvmlMemoryErrorType_t type,
                                         nvmlEccCounterType_t counter,
                                         unsigned long long *count)
{
    int i = index_of(device);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = (unsigned long long)(10 * i + 2 * (int)type + (int)counter);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device,
                                          nvmlPerfPolicyType_t policy,
                                          nvmlViolationTime_t *t)
{
    int i = index_of(device);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    t->referenceTime = 1000u + (unsigned)i;
    t->violationTime = (unsigned long long)policy;
    return NVML_SUCCESS;
}
MOCK_ARG(nvmlDeviceGetClockInfo, nvmlClockType_t, unsigned, 1000)
MOCK_ARG(nvmlDeviceGetMaxClockInfo, nvmlClockType_t, unsigned, 2000)
MOCK_ARG(nvmlDeviceGetNvLinkState, unsigned, nvmlEnableState_t, 0)
MOCK_ARG(nvmlDeviceGetNvLinkRemoteDeviceType, unsigned, nvmlIntNvLinkDeviceType_t, 0)

nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t type,
                                nvmlClockId_t id, unsigned *mhz)
{
    int i = index_of(device);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mhz = 1500 + 10 * (unsigned)i + (unsigned)type + 100 * (unsigned)id;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned *speed)
{
    (void)speed;
    return index_of(device) < 0 ? NVML_ERROR_INVALID_ARGUMENT
                                : NVML_ERROR_NOT_SUPPORTED;
}
