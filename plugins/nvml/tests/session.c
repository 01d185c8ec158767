/*
 * nvml.mock_session: NVML through gvs on the mock NVML
 * (tests/nvml/mock_nvml.c) and the mock driver: what a session sees of
 * its GPUs.  Arguments: the number of GPUs the session should see and
 * the session's memory quota in MiB (0: none).  Prints "ok" last.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <nvml.h>
#include <stdint.h>

/* NVML's private export tables, which no header declares. */
nvmlReturn_t nvmlInternalGetExportTable(const void **ppExportTable,
                                        const void *pExportTableId);
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_EQ(a, b)                                                       \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        if (a_ != b_) {                                                      \
            fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__,     \
                    __LINE__, #a, #b, a_, b_);                               \
            exit(1);                                                         \
        }                                                                    \
    } while (0)
#define CHECK_STR(a, b)                                                      \
    do {                                                                     \
        if (strcmp((a), (b)) != 0) {                                         \
            fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                    (a), (b));                                               \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static const unsigned long long MiB = 1ull << 20;

/* The client's round trips (include/gvs/client.h's counters, looked up:
 * the program links nothing of gvs; more[] is room for later fields). */
struct stats {
    uint64_t round_trips, posts, bytes_sent, bytes_received, more[8];
};

static uint64_t round_trips(void)
{
    static void (*get)(struct stats *);
    if (get == NULL)
        *(void **)&get = dlsym(RTLD_DEFAULT, "gvs_client_get_stats");
    if (get == NULL) {
        fprintf(stderr, "no gvs_client_get_stats\n");
        exit(1);
    }
    struct stats s;
    get(&s);
    return s.round_trips;
}

static void before_init(void)
{
    unsigned n;
    CHECK_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    CHECK_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    CHECK_STR(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
    CHECK_STR(nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
}

/* The GPUs the session sees, their identity and the lookups by it. */
static void identity(unsigned want)
{
    unsigned n = 99;
    CHECK_EQ(nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    CHECK_EQ(n, want);
    CHECK_EQ(nvmlDeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
    nvmlDevice_t d, again;
    CHECK_EQ(nvmlDeviceGetHandleByIndex_v2(n, &d), NVML_ERROR_INVALID_ARGUMENT);
    for (unsigned i = 0; i < n; i++) {
        unsigned idx;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        CHECK_EQ(nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetIndex(d, &idx), NVML_SUCCESS);
        CHECK_EQ(idx, i);
        CHECK_EQ(nvmlDeviceGetName(d, name, sizeof(name)), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetUUID(d, uuid, sizeof(uuid)), NVML_SUCCESS);
        /* With one GPU visible (gvsd --devices 1) it is the host's
         * second. */
        unsigned host = want == 1 ? 1 : i;
        char expect[64];
        snprintf(expect, sizeof(expect), "gvs mock %u", host);
        CHECK_STR(name, expect);
        CHECK_EQ(uuid[4], host == 0 ? '0' : '1');
        CHECK_EQ(nvmlDeviceGetName(d, name, 4), NVML_ERROR_INSUFFICIENT_SIZE);
        CHECK_EQ(nvmlDeviceGetHandleByUUID(uuid, &again), NVML_SUCCESS);
        CHECK_EQ(again == d, 1);
        nvmlPciInfo_t pci;
        CHECK_EQ(nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
        CHECK_EQ(pci.bus, 0x18 + host);
        CHECK_EQ(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &again), NVML_SUCCESS);
        CHECK_EQ(again == d, 1);
        CHECK_EQ(nvmlDeviceGetHandleByPciBusId_v2(pci.busIdLegacy, &again),
                 NVML_SUCCESS);
        CHECK_EQ(again == d, 1);
        unsigned temp, clock;
        CHECK_EQ(nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
        CHECK_EQ(temp, 30 + 10 * host);
        CHECK_EQ(nvmlDeviceGetClock(d, NVML_CLOCK_SM, NVML_CLOCK_ID_CURRENT, &clock),
                 NVML_SUCCESS);
        CHECK_EQ(clock, 1500 + 10 * host + NVML_CLOCK_SM);
        nvmlUtilization_t u;
        CHECK_EQ(nvmlDeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
        CHECK_EQ(u.gpu, 40 + host);
        unsigned speed, thr, util, period;
        CHECK_EQ(nvmlDeviceGetFanSpeed(d, &speed), NVML_ERROR_NOT_SUPPORTED);
        CHECK_EQ(nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,
                                                   &thr), NVML_SUCCESS);
        CHECK_EQ(thr, 90 + 10 * host + NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
        CHECK_EQ(nvmlDeviceGetEncoderUtilization(d, &util, &period), NVML_SUCCESS);
        CHECK_EQ(util, 3 + 10 * host);
        CHECK_EQ(period, 4 + 10 * host);
        unsigned long long ecc;
        CHECK_EQ(nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                             NVML_AGGREGATE_ECC, &ecc), NVML_SUCCESS);
        CHECK_EQ(ecc, 10 * host + 2 * NVML_MEMORY_ERROR_TYPE_UNCORRECTED + NVML_AGGREGATE_ECC);
        nvmlViolationTime_t vt;
        CHECK_EQ(nvmlDeviceGetViolationStatus(d, NVML_PERF_POLICY_THERMAL, &vt), NVML_SUCCESS);
        CHECK_EQ(vt.referenceTime, 1000 + host);
        CHECK_EQ(vt.violationTime, NVML_PERF_POLICY_THERMAL);
        nvmlFieldValue_t f[2] = {{.fieldId = 7}, {.fieldId = 9, .scopeId = 1}};
        CHECK_EQ(nvmlDeviceGetFieldValues(d, 2, f), NVML_SUCCESS);
        CHECK_EQ(f[0].value.uiVal, 14 + host);
        CHECK_EQ(f[1].value.uiVal, 18 + host);
    }
    /* What identifies a GPU is asked once per nvmlInit: a second look,
     * and a lookup by it, cost no round trip. */
    uint64_t before = round_trips();
    for (unsigned i = 0; i < n; i++) {
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        nvmlPciInfo_t pci;
        CHECK_EQ(nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetName(d, name, sizeof(name)), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetUUID(d, uuid, sizeof(uuid)), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetPciInfo(d, &pci), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetHandleByUUID(uuid, &again), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &again), NVML_SUCCESS);
    }
    CHECK_EQ(round_trips() - before, 0);
    /* What changes is asked each time: one round trip a call. */
    if (n > 0) {
        unsigned t;
        CHECK_EQ(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
        before = round_trips();
        CHECK_EQ(nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &t), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &t), NVML_SUCCESS);
        CHECK_EQ(round_trips() - before, 2);
    }
    CHECK_EQ(nvmlDeviceGetHandleByUUID("GPU-none", &again), NVML_ERROR_NOT_FOUND);
    CHECK_EQ(nvmlDeviceGetHandleByPciBusId_v2("0000:99:00.0", &again),
             NVML_ERROR_NOT_FOUND);
    CHECK_EQ(nvmlDeviceGetHandleByPciBusId_v2("junk", &again),
             NVML_ERROR_INVALID_ARGUMENT);
    /* A handle not of the list is refused, never followed. */
    struct nvmlDevice_st *forged = (struct nvmlDevice_st *)&n;
    unsigned temp;
    CHECK_EQ(nvmlDeviceGetTemperature(forged, NVML_TEMPERATURE_GPU, &temp),
             NVML_ERROR_INVALID_ARGUMENT);
    char s[80];
    CHECK_EQ(nvmlSystemGetDriverVersion(s, sizeof(s)), NVML_SUCCESS);
    CHECK_STR(s, "580.0-mock");
    CHECK_EQ(nvmlSystemGetDriverVersion(s, 4), NVML_ERROR_INSUFFICIENT_SIZE);
    int cuda;
    CHECK_EQ(nvmlSystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
    CHECK_EQ(cuda, 13000);
}

/* Memory: the quota as the total, the session's own allocations as the
 * use; processes: the session's own, under this process's pid. */
static void usage(unsigned long long quota)
{
    nvmlDevice_t d;
    CHECK_EQ(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
    nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
    CHECK_EQ(nvmlDeviceGetMemoryInfo_v2(d, &m), NVML_SUCCESS);
    CHECK_EQ(m.total, quota != 0 ? quota : 80ull << 30);
    CHECK_EQ(m.used, 0);
    nvmlMemory_v2_t bad = {.version = 1};
    CHECK_EQ(nvmlDeviceGetMemoryInfo_v2(d, &bad), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);

    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    CHECK_EQ(cuInit(0), CUDA_SUCCESS);
    CHECK_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    CHECK_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    CHECK_EQ(cuMemAlloc(&p, 64 * MiB), CUDA_SUCCESS);
    nvmlMemory_t m1;
    CHECK_EQ(nvmlDeviceGetMemoryInfo(d, &m1), NVML_SUCCESS);
    CHECK_EQ(m1.used, 64 * MiB);
    if (quota != 0) {
        CHECK_EQ(m1.total, quota);
        CHECK_EQ(m1.free, quota - 64 * MiB);
    }
    CHECK_EQ(cuMemFree(p), CUDA_SUCCESS);
    CHECK_EQ(nvmlDeviceGetMemoryInfo(d, &m1), NVML_SUCCESS);
    CHECK_EQ(m1.used, 0);

    unsigned n = 0;
    nvmlProcessInfo_t proc[4];
    CHECK_EQ(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL),
             NVML_ERROR_INSUFFICIENT_SIZE);
    CHECK_EQ(n, 1);
    n = 4;
    CHECK_EQ(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, proc), NVML_SUCCESS);
    CHECK_EQ(n, 1);
    CHECK_EQ(proc[0].pid, getpid());
    CHECK_EQ(proc[0].usedGpuMemory, 300 * MiB);
    n = 4;
    CHECK_EQ(nvmlDeviceGetGraphicsRunningProcesses_v3(d, &n, proc), NVML_SUCCESS);
    CHECK_EQ(n, 0);
    char name[256];
    CHECK_EQ(nvmlSystemGetProcessName((unsigned)getpid(), name, sizeof(name)),
             NVML_SUCCESS);
    CHECK_EQ(strstr(name, "nvml_session") != NULL, 1);
    CHECK_EQ(nvmlSystemGetProcessName(1, name, sizeof(name)), NVML_ERROR_NOT_FOUND);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s GPUS QUOTA_MIB\n", argv[0]);
        return 2;
    }
    unsigned want = (unsigned)atoi(argv[1]);
    unsigned long long quota = strtoull(argv[2], NULL, 10) * MiB;
    before_init();
    CHECK_EQ(nvmlInit_v2(), NVML_SUCCESS);
    CHECK_EQ(nvmlInit(), NVML_SUCCESS); /* counted: two shutdowns */
    identity(want);
    if (want > 0)
        usage(quota);
    /* Not supported: said by the result alone. */
    nvmlDevice_t d;
    if (want > 0) {
        CHECK_EQ(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceSetPersistenceMode(d, NVML_FEATURE_ENABLED),
                 NVML_ERROR_NOT_SUPPORTED);
        /* Event sets hold no events: none supported, a wait times out. */
        nvmlEventSet_t set;
        CHECK_EQ(nvmlEventSetCreate(&set), NVML_SUCCESS);
        unsigned long long types = 1;
        CHECK_EQ(nvmlDeviceGetSupportedEventTypes(d, &types), NVML_SUCCESS);
        CHECK_EQ(types, 0);
        CHECK_EQ(nvmlDeviceRegisterEvents(d, 0, set), NVML_SUCCESS);
        CHECK_EQ(nvmlDeviceRegisterEvents(d, nvmlEventTypeXidCriticalError, set),
                 NVML_ERROR_NOT_SUPPORTED);
        CHECK_EQ(nvmlDeviceRegisterEvents(NULL, 0, set), NVML_ERROR_INVALID_ARGUMENT);
        nvmlEventData_t ev;
        CHECK_EQ(nvmlEventSetWait_v2(set, &ev, 1), NVML_ERROR_TIMEOUT);
        CHECK_EQ(nvmlEventSetWait_v2(set, NULL, 1), NVML_ERROR_INVALID_ARGUMENT);
        CHECK_EQ(nvmlEventSetFree(set), NVML_SUCCESS);
        CHECK_EQ(nvmlEventSetCreate(NULL), NVML_ERROR_INVALID_ARGUMENT);
    }
    const void *table = &table;
    unsigned char id[16] = {0};
    CHECK_EQ(nvmlInternalGetExportTable(&table, id), NVML_ERROR_FUNCTION_NOT_FOUND);
    CHECK_EQ(table == NULL, 1);
    /* nvidia-smi's table: NVIDIA's size, its NULL slots, stubs. */
    const unsigned char c4fe[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
                                    0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};
    CHECK_EQ(nvmlInternalGetExportTable(&table, c4fe), NVML_SUCCESS);
    const size_t *words = table;
    CHECK_EQ(words[0], 0x870);
    CHECK_EQ(words[1] == 0 && words[2] == 0 && words[3] != 0 && words[269] != 0, 1);
    nvmlReturn_t (*slot)(void) = (nvmlReturn_t (*)(void))words[269];
    CHECK_EQ(slot(), NVML_ERROR_NOT_SUPPORTED);
    nvmlReturn_t (*logged)(const char *, const char *, const char *, void *) =
        (nvmlReturn_t (*)(const char *, const char *, const char *, void *))words[26];
    CHECK_EQ(logged("nvidia-smi %s: %s\n", "stdout", "GPU 0", NULL), NVML_SUCCESS);
    nvmlReturn_t (*pci_address)(unsigned, char *, unsigned) =
        (nvmlReturn_t (*)(unsigned, char *, unsigned))words[81];
    if (want > 0) {
        char addr[34], expect[34];
        nvmlPciInfo_t pci;
        CHECK_EQ(nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
        snprintf(expect, sizeof(expect), "%04x:%02x:%02x.0", pci.domain, pci.bus,
                 pci.device);
        CHECK_EQ(pci_address(0, addr, sizeof(addr)), NVML_SUCCESS);
        CHECK_EQ(strcmp(addr, expect), 0);
        CHECK_EQ(pci_address(0, addr, 4), NVML_ERROR_INSUFFICIENT_SIZE);
        nvmlPciInfoExt_t ext = {.version = nvmlPciInfoExt_v1};
        CHECK_EQ(nvmlDeviceGetPciInfoExt(d, &ext), NVML_SUCCESS);
        CHECK_EQ(ext.bus, pci.bus);
        CHECK_EQ(ext.pciDeviceId, pci.pciDeviceId);
        CHECK_EQ(ext.baseClass, 3);
        CHECK_EQ(ext.subClass, 2);
        CHECK_STR(ext.busId, pci.busId);
        ext.version = 0;
        CHECK_EQ(nvmlDeviceGetPciInfoExt(d, &ext), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        /* The table view's slots: display, power limit, process lists of
         * nvidia-smi's 4128-byte entries (this session's: the memory
         * usage() left, none of another kind). */
        nvmlReturn_t (*dev_uint)(nvmlDevice_t, unsigned *) =
            (nvmlReturn_t (*)(nvmlDevice_t, unsigned *))words[31];
        unsigned v = 99, want_v;
        nvmlEnableState_t active;
        CHECK_EQ(nvmlDeviceGetDisplayActive(d, &active), NVML_SUCCESS);
        CHECK_EQ(dev_uint(d, &v), NVML_SUCCESS);
        CHECK_EQ(v, active);
        dev_uint = (nvmlReturn_t (*)(nvmlDevice_t, unsigned *))words[108];
        CHECK_EQ(nvmlDeviceGetEnforcedPowerLimit(d, &want_v), NVML_SUCCESS);
        CHECK_EQ(dev_uint(d, &v), NVML_SUCCESS);
        CHECK_EQ(v, want_v);
        nvmlReturn_t (*procs)(nvmlDevice_t, unsigned *, void *) =
            (nvmlReturn_t (*)(nvmlDevice_t, unsigned *, void *))words[213];
        static unsigned char entries[2][4128];
        memset(entries, 0xff, sizeof(entries));
        unsigned room = 0;
        CHECK_EQ(procs(d, &room, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
        CHECK_EQ(room, 1);
        room = 2;
        CHECK_EQ(procs(d, &room, entries), NVML_SUCCESS);
        CHECK_EQ(room, 1);
        const nvmlProcessInfo_t *e = (const nvmlProcessInfo_t *)entries[0];
        CHECK_EQ(e->pid, getpid());
        CHECK_EQ(e->usedGpuMemory, 300 * MiB);
        CHECK_EQ(entries[0][4127], 0);
        CHECK_EQ(entries[1][0], 0xff);
        procs = (nvmlReturn_t (*)(nvmlDevice_t, unsigned *, void *))words[214];
        room = 2;
        CHECK_EQ(procs(d, &room, entries), NVML_SUCCESS);
        CHECK_EQ(room, 0);
        procs = (nvmlReturn_t (*)(nvmlDevice_t, unsigned *, void *))words[215];
        room = 2;
        CHECK_EQ(procs(d, &room, entries), NVML_SUCCESS);
        CHECK_EQ(room, 0);
    }
    char none[34];
    CHECK_EQ(pci_address(99, none, sizeof(none)), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ(nvmlShutdown(), NVML_SUCCESS);
    unsigned n;
    CHECK_EQ(nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    CHECK_EQ(nvmlShutdown(), NVML_SUCCESS);
    CHECK_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    CHECK_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    printf("ok\n");
    return 0;
}
