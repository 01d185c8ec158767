/*
 * Between modules.c and launch.c: the kernels and functions this process
 * loaded, with the parameter layouts the backend gave with the load.
 */
#ifndef CUDA_FE_KERNELS_H
#define CUDA_FE_KERNELS_H

#include "fe.h"

#include <stdatomic.h>
#include <stdint.h>

/* Largest kernel parameter block (CUDA 12.1+ on Volta and later). */
#define CUDA_FE_PARAM_MAX 32764u

/* The function attributes that describe a kernel's code, which nothing
 * changes once it is loaded: CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK to
 * CU_FUNC_ATTRIBUTE_CACHE_MODE_CA (the later ones, cluster dimensions,
 * dynamic shared memory and carveout, are the program's to set). */
#define CUDA_FE_CODE_ATTRS (CU_FUNC_ATTRIBUTE_CACHE_MODE_CA + 1)

struct cuda_fe_param {
    uint32_t offset;
    uint32_t size;
};

struct cuda_fe_kernel {
    uint64_t id; /* the CUkernel or CUfunction handed to the program */
    int is_kernel;
    char *name;
    CUresult status; /* why the layout is unknown, or CUDA_SUCCESS */
    uint32_t nparams;
    uint32_t param_bytes; /* end of the last parameter */
    struct cuda_fe_param *params;
    /* The last configuration the backend accepted (gvs_remote.h): a
     * launch within it is posted. */
    _Atomic uint64_t ok_config;
    /* Its attributes as the backend answered them for device attr_dev
     * (modules.c): bit a of attr_have once attribute a is kept; one a
     * program may set is valid while the layer's count of kernel
     * settings is still attr_settings[a]. */
    uint32_t attr_have;
    CUdevice attr_dev;
    int attr_val[CU_FUNC_ATTRIBUTE_MAX];
    uint64_t attr_settings[CU_FUNC_ATTRIBUTE_MAX];
};

/* launch.c: the parameter block of a launch or kernel node, packed into
 * block (CUDA_FE_PARAM_MAX bytes) from kernelParams by k's layout, or
 * the program's own buffer from extra: *data and *len say which bytes,
 * *form how they travel (cuda.api, LAUNCH). */
#define CUDA_FE_FORM_PARAMS 0
#define CUDA_FE_FORM_EXTRA 1
CUresult cuda_fe_pack_params(const struct cuda_fe_kernel *k,
                             void **kernelParams, void **extra,
                             uint8_t *block, const void **data, size_t *len,
                             uint8_t *form);

/* The kernel or function of id, or NULL.  It lives until its library or
 * module is unloaded. */
struct cuda_fe_kernel *cuda_fe_kernel_find(uint64_t id);

#endif
