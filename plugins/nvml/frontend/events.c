/* NVML's event sets, as a session has them: sets that hold no events.
 * A GPU's events (Xid errors, clock and power changes, ECC errors) are
 * the host's, which a session does not see (docs/nvml.md), so a device
 * supports no event type and registering one is not supported; a set is
 * still made, freed and waited on, as nvidia-smi does before anything
 * else (without a set it stops with "Internal NVML error"). */
#include "fe.h"

#include <errno.h>
#include <time.h>

#include "gvs/mem.h"

struct nvmlEventSet_st {
    int unused;
};

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (set == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *set = gvs_calloc(1, sizeof(**set));
    return *set != NULL ? NVML_SUCCESS : NVML_ERROR_MEMORY;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (set == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    gvs_free(set);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device,
                                              unsigned long long *eventTypes)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (nvml_fe_device_index(device) < 0 || eventTypes == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *eventTypes = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
                                      unsigned long long eventTypes,
                                      nvmlEventSet_t set)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (nvml_fe_device_index(device) < 0 || set == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    return eventTypes == 0 ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

/* Nothing is registered, so nothing comes: the wait lasts its timeout. */
static nvmlReturn_t wait_none(nvmlEventSet_t set, nvmlEventData_t *data,
                              unsigned int timeoutms)
{
    nvmlReturn_t r = nvml_fe_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (set == NULL || data == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct timespec t = {timeoutms / 1000, (long)(timeoutms % 1000) * 1000000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
    return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
                                 unsigned int timeoutms)
{
    return wait_none(set, data, timeoutms);
}

nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data,
                              unsigned int timeoutms)
{
    return wait_none(set, data, timeoutms);
}
