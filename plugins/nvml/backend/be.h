/*
 * The NVML backend plugin (gvs-nvml.so): the calls of nvml.api answered
 * by the worker's NVML for its session.  Private to the plugin.
 *
 * The plugin never links NVML: a gvsd without one still loads it.  It
 * resolves what it calls at the session's first NVML call (lib.c), the
 * generated handlers through NVML_LIB(NAME), and lists the GPUs the
 * session may use (devices.c): those of NVML's that the session's CUDA
 * sees (gvsd's --devices and the client's CUDA_VISIBLE_DEVICES narrow
 * it, docs/nvml.md), in NVML's order.
 */
#ifndef NVML_BE_H
#define NVML_BE_H

#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/plugin.h"
#include "nvml_be_gen.h"
#include "nvml_wire.h"
#include "remote_be.h"

/* The functions the hand-written handlers call; the generated ones call
 * NVML_BE_CALLED's. */
#define NVML_BE_CALLED_BY_HAND(X)                                            \
    X(nvmlInit_v2)                                                           \
    X(nvmlShutdown)                                                          \
    X(nvmlDeviceGetCount_v2)                                                 \
    X(nvmlDeviceGetHandleByIndex_v2)                                         \
    X(nvmlDeviceGetHandleByUUID)                                             \
    X(nvmlSystemGetDriverVersion)                                            \
    X(nvmlSystemGetNVMLVersion)                                              \
    X(nvmlSystemGetCudaDriverVersion_v2)                                     \
    X(nvmlDeviceGetName)                                                     \
    X(nvmlDeviceGetUUID)                                                     \
    X(nvmlDeviceGetSerial)                                                   \
    X(nvmlDeviceGetBoardPartNumber)                                          \
    X(nvmlDeviceGetVbiosVersion)                                             \
    X(nvmlDeviceGetMemoryInfo_v2)                                            \
    X(nvmlDeviceGetComputeRunningProcesses_v3)                               \
    X(nvmlDeviceGetGraphicsRunningProcesses_v3)                              \
    X(nvmlDeviceGetMPSComputeRunningProcesses_v3)                            \
    X(nvmlDeviceGetFieldValues)

/* Resolved where the host's NVML has them (NULL elsewhere): newer than
 * the oldest NVML gvsd serves. */
#define NVML_BE_CALLED_IF_THERE(X)                                           \
    X(nvmlDeviceGetPciInfoExt)

struct nvml_be_lib {
#define NVML_BE_LIB_FIELD(name) __typeof__(name) *name;
    NVML_BE_CALLED(NVML_BE_LIB_FIELD)
    NVML_BE_CALLED_BY_HAND(NVML_BE_LIB_FIELD)
    NVML_BE_CALLED_IF_THERE(NVML_BE_LIB_FIELD)
#undef NVML_BE_LIB_FIELD
};

/* Filled by nvml_be_ready's first success; read only after it. */
extern struct nvml_be_lib nvml_be_lib;
#define NVML_LIB(name) (nvml_be_lib.name)

/* gvsd's services and the layer's backend, set at session open. */
extern const struct gvs_host_api *nvml_be_host;
extern const struct gvs_remote_be *nvml_be_remote;

/* lib.c: NVML loaded and initialized, and the session's list made, once
 * per worker: NVML_SUCCESS, else what every call answers (NVML's own
 * failure, NVML_ERROR_DRIVER_NOT_LOADED where the host has no NVML). */
nvmlReturn_t nvml_be_ready(void);
/* lib.c: nvmlShutdown, where nvml_be_ready initialized NVML. */
void nvml_be_unload(void);

/* devices.c: the session's GPU of index i of its list: NVML's handle,
 * and the worker's CUDA ordinal of it (-1 where CUDA is not there to
 * say). */
struct nvml_be_device {
    nvmlDevice_t handle;
    int ordinal;
};
/* Makes the list (after NVML's initialization): NVML_SUCCESS or NVML's
 * failure. */
nvmlReturn_t nvml_be_devices_list(void);
unsigned nvml_be_device_count(void);
/* The generated handlers' resolver (nvml.api's handle): the entry of
 * wire, NVML_ERROR_INVALID_ARGUMENT for an index past the list. */
nvmlReturn_t nvml_be_device(uint64_t wire, nvmlDevice_t *out);
const struct nvml_be_device *nvml_be_device_at(uint64_t wire);

#endif
