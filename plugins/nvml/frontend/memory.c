/* What a session holds on its GPUs: memory, processes (the session's
 * own, under the client's pid), and NVML's field values. */
#include "fe.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nvml_ops.h"
#include "nvml_wire.h"

struct memory {
    uint64_t total, reserved, free, used;
};

static nvmlReturn_t memory(nvmlDevice_t device, struct memory *m)
{
    struct apigen_call c;
    nvmlReturn_t r = nvml_fe_begin_device(&c, device);
    if (r != NVML_SUCCESS)
        return r;
    r = nvml_fe_run(&c, NVML_OP_DEVICE_MEMORY, 0);
    if (r == NVML_SUCCESS) {
        apigen_get_u64(&c, &m->total);
        apigen_get_u64(&c, &m->reserved);
        apigen_get_u64(&c, &m->free);
        apigen_get_u64(&c, &m->used);
    }
    return nvml_fe_end(&c, r);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *out)
{
    struct memory m;
    nvmlReturn_t r = nvml_fe_ready();
    if (r == NVML_SUCCESS && out == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        r = memory(device, &m);
    if (r != NVML_SUCCESS)
        return r;
    /* NVIDIA's version 1 counts the driver's reserved memory as used:
     * that is no session's, and a session's used is its own. */
    out->total = m.total;
    out->free = m.free;
    out->used = m.used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                        nvmlMemory_v2_t *out)
{
    struct memory m;
    nvmlReturn_t r = nvml_fe_ready();
    if (r == NVML_SUCCESS && out == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS && out->version != nvmlMemory_v2)
        r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (r == NVML_SUCCESS)
        r = memory(device, &m);
    if (r != NVML_SUCCESS)
        return r;
    out->total = m.total;
    out->reserved = m.reserved;
    out->free = m.free;
    out->used = m.used;
    return NVML_SUCCESS;
}

struct process {
    uint64_t used;
    uint32_t gpu_instance, compute_instance;
};

/* The session's processes of kind on device into p[0..*n). */
static nvmlReturn_t processes(nvmlDevice_t device, enum nvml_process_kind kind,
                              struct process *p, unsigned *n)
{
    struct apigen_call c;
    nvmlReturn_t r = nvml_fe_begin_device(&c, device);
    if (r != NVML_SUCCESS)
        return r;
    apigen_put_i32(&c, (int32_t)kind);
    r = nvml_fe_run(&c, NVML_OP_DEVICE_PROCESSES, 0);
    uint32_t count = 0;
    if (r == NVML_SUCCESS) {
        apigen_get_u32(&c, &count);
        if (c.rc == 0 && count > NVML_PROCESSES_MAX)
            c.rc = -1;
        for (uint32_t i = 0; i < count && c.rc == 0; i++) {
            apigen_get_u64(&c, &p[i].used);
            apigen_get_u32(&c, &p[i].gpu_instance);
            apigen_get_u32(&c, &p[i].compute_instance);
        }
    }
    r = nvml_fe_end(&c, r);
    *n = r == NVML_SUCCESS ? count : 0;
    return r;
}

/* NVML's contract for the lists: *infoCount in is the room, out the
 * count; too little room is NVML_ERROR_INSUFFICIENT_SIZE with the count
 * needed.  The session's processes are this one: the client's pid.
 * Entries are `stride` bytes apart and begin as nvmlProcessInfo_v1_t
 * (version 1) or nvmlProcessInfo_t (else), the rest of each zeroed. */
nvmlReturn_t nvml_fe_process_list(nvmlDevice_t device, int kind,
                                  unsigned int *infoCount, void *infos,
                                  int version, size_t stride)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (infoCount == NULL || (*infoCount != 0 && infos == NULL))
        return NVML_ERROR_INVALID_ARGUMENT;
    struct process p[NVML_PROCESSES_MAX];
    unsigned n;
    r = processes(device, kind, p, &n);
    if (r != NVML_SUCCESS)
        return r;
    unsigned room = *infoCount;
    *infoCount = n;
    if (n > room)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    unsigned pid = (unsigned)getpid();
    for (unsigned i = 0; i < n; i++) {
        unsigned char *e = (unsigned char *)infos + i * stride;
        memset(e, 0, stride);
        if (version == 1) {
            nvmlProcessInfo_v1_t *o = (nvmlProcessInfo_v1_t *)e;
            o->pid = pid;
            o->usedGpuMemory = p[i].used;
        } else {
            nvmlProcessInfo_t *o = (nvmlProcessInfo_t *)e;
            o->pid = pid;
            o->usedGpuMemory = p[i].used;
            o->gpuInstanceId = p[i].gpu_instance;
            o->computeInstanceId = p[i].compute_instance;
        }
    }
    return NVML_SUCCESS;
}

/* NVML's nine lists: three kinds, each in three versions of its entry
 * (v1: pid and memory; v2 and v3: with the MIG instances). */
#define PROCESS_LIST(name, kind, entry, version)                             \
    nvmlReturn_t name(nvmlDevice_t device, unsigned int *infoCount,          \
                      entry *infos)                                          \
    {                                                                        \
        return nvml_fe_process_list(device, kind, infoCount, infos, version, \
                                    sizeof(entry));                          \
    }
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses, NVML_PROC_COMPUTE,
             nvmlProcessInfo_v1_t, 1)
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v2, NVML_PROC_COMPUTE,
             nvmlProcessInfo_v2_t, 2)
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v3, NVML_PROC_COMPUTE,
             nvmlProcessInfo_t, 3)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses, NVML_PROC_GRAPHICS,
             nvmlProcessInfo_v1_t, 1)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v2, NVML_PROC_GRAPHICS,
             nvmlProcessInfo_v2_t, 2)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v3, NVML_PROC_GRAPHICS,
             nvmlProcessInfo_t, 3)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses, NVML_PROC_MPS,
             nvmlProcessInfo_v1_t, 1)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v2, NVML_PROC_MPS,
             nvmlProcessInfo_v2_t, 2)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v3, NVML_PROC_MPS,
             nvmlProcessInfo_t, 3)
#undef PROCESS_LIST

/* The name of the session's process (the only one its lists show): the
 * program as its command line names it, as NVML says. */
nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name,
                                      unsigned int length)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (name == NULL || length == 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (pid != (unsigned)getpid())
        return NVML_ERROR_NOT_FOUND;
    char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t len = f != NULL ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    buf[len] = '\0';
    /* The first argument, NUL-terminated in the file. */
    size_t want = strlen(buf);
    if (want == 0)
        return NVML_ERROR_NOT_FOUND;
    if (want >= length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(name, buf, want + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t *values)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (values == NULL || valuesCount <= 0 ||
        (unsigned)valuesCount > NVML_FIELD_VALUES_MAX)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct apigen_call c;
    r = nvml_fe_begin_device(&c, device);
    if (r != NVML_SUCCESS)
        return r;
    apigen_put_u32(&c, (uint32_t)valuesCount);
    for (int i = 0; i < valuesCount; i++) {
        apigen_put_u32(&c, values[i].fieldId);
        apigen_put_u32(&c, values[i].scopeId);
    }
    r = nvml_fe_run(&c, NVML_OP_DEVICE_FIELD_VALUES, 0);
    if (r == NVML_SUCCESS) {
        nvmlFieldValue_t got[NVML_FIELD_VALUES_MAX];
        apigen_get_bytes(&c, got, (size_t)valuesCount * sizeof(got[0]));
        r = nvml_fe_end(&c, r);
        /* Each value answers the field the caller asked. */
        for (int i = 0; r == NVML_SUCCESS && i < valuesCount; i++)
            if (got[i].fieldId != values[i].fieldId ||
                got[i].scopeId != values[i].scopeId)
                r = NVML_ERROR_UNKNOWN;
        if (r == NVML_SUCCESS)
            memcpy(values, got, (size_t)valuesCount * sizeof(got[0]));
        return r;
    }
    return nvml_fe_end(&c, r);
}
