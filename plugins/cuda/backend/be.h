/*
 * Private contracts between the files of the CUDA driver backend plugin
 * (gvs-cuda.so).  Handlers run in a session's worker process on several
 * threads at once (include/gvs/plugin.h).
 *
 * The plugin never links the driver: a gvsd on a machine without one
 * still loads it (and answers as a machine with no device).  The driver
 * functions it calls are resolved once, at the first call that needs
 * them, from the worker's libcuda.so.1 (driver.c); the generated handlers
 * call them through CUDA_DRV(NAME), and their prototypes are cuda.h's
 * own (__typeof__).
 */
#ifndef CUDA_BE_H
#define CUDA_BE_H

/* Every name as the driver exports it (cuDeviceGetUuid is not
 * cuDeviceGetUuid_v2 here), as the frontend sees them (frontend/fe.h). */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>

#include "cuda_be_gen.h"
#include "gvs/plugin.h"

/* The driver functions the hand-written handlers call, beside those of
 * the generated ones (CUDA_BE_CALLED). */
#define CUDA_BE_CALLED_BY_HAND(X)                                            \
    X(cuDeviceGetName)                                                       \
    X(cuDeviceTotalMem_v2)                                                   \
    X(cuDeviceGetPCIBusId)                                                   \
    X(cuDeviceGetByPCIBusId)

/* Deprecated functions are forwarded all the same: programs call them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct cuda_be_driver {
#define CUDA_BE_DRIVER_FIELD(name) __typeof__(name) *name;
    CUDA_BE_CALLED(CUDA_BE_DRIVER_FIELD)
    CUDA_BE_CALLED_BY_HAND(CUDA_BE_DRIVER_FIELD)
#undef CUDA_BE_DRIVER_FIELD
};
#pragma GCC diagnostic pop

/* Filled by cuda_be_enter's first success; read only after it. */
extern struct cuda_be_driver cuda_be_drv;
#define CUDA_DRV(name) (cuda_be_drv.name)

/* driver.c: fills cuda_be_drv once.  0, or -1 when the worker has no
 * driver (or one that lacks a function): every call then answers
 * CUDA_ERROR_NO_DEVICE.  The tests' mock backend defines its own. */
int cuda_be_driver_load(void);

/* Every op's first step (cuda.api): the driver is there. */
CUresult cuda_be_enter(struct gvs_call *call);

struct cuda_be_session {
    const struct gvs_host_api *host;
    struct gvs_session *session;
};

#endif
