/*
 * Between modules.c and launch.c: the kernels and functions this process
 * loaded, with the parameter layouts the backend gave with the load.
 */
#ifndef CUDA_FE_KERNELS_H
#define CUDA_FE_KERNELS_H

#include "fe.h"
#include "gvs_remote.h"

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

struct cuda_fe_fn_kept {
    CUcontext ctx;
    uint64_t epoch;
    uint64_t id;
};

/* What the backend accepted for a kernel: key 0 while a new one is
 * stored, so that a reader never pairs one key with another's count. */
struct cuda_fe_accepted {
    _Atomic uint64_t key;
    _Atomic uint64_t settings;
};

struct cuda_fe_kernel {
    uint64_t id; /* the CUkernel or CUfunction handed to the program */
    int is_kernel;
    char *name;
    CUresult status; /* why the layout is unknown, or CUDA_SUCCESS */
    uint32_t nparams;
    uint32_t param_bytes; /* end of the last parameter */
    struct cuda_fe_param *params;
    /* A kernel and its functions in each context (cuKernelGetFunction)
     * are one family, whose root is the kernel (a module's function is a
     * root of its own): a setting made through any of them changes them
     * all, so the root counts the family's settings (cuda_fe_kernel_
     * settings below).  The root owns its functions that have ids of
     * their own (fns, freed with it), and keeps cuKernelGetFunction's
     * answers (kept: a function id for a context, valid at the context
     * epoch it was asked at, contexts.c).  fns and kept are modules.c's
     * lock's. */
    struct cuda_fe_kernel *root;
    _Atomic uint64_t family_settings;
    struct cuda_fe_kernel **fns;
    uint32_t nfns;
    struct cuda_fe_fn_kept *kept;
    uint32_t nkept;
    /* The last configuration the backend accepted (gvs_remote.h), and
     * the key of the last launch with attributes it accepted (launch.c),
     * each at the settings count it was accepted at: a launch within it
     * is posted while the count stays. */
    struct cuda_fe_accepted ok_plain, ok_ex;
    /* Blocks per multiprocessor the backend answered (occupancy.c): a
     * table made at the first question, valid while the settings count
     * stays.  occupancy.c's lock's. */
    struct cuda_fe_occupancy *occ;
    uint32_t nocc, occ_next;
    /* Its attributes as the backend answered them for device attr_dev
     * (modules.c): bit a of attr_have once attribute a is kept; one a
     * program may set is valid while the kernel's settings count is
     * still attr_settings[a]. */
    uint32_t attr_have;
    CUdevice attr_dev;
    int attr_val[CU_FUNC_ATTRIBUTE_MAX];
    uint64_t attr_settings[CU_FUNC_ATTRIBUTE_MAX];
    /* What each attribute was last set to through this member, on which
     * device, when the family had made set_sets[a] settings of that
     * attribute (root->attr_sets[a], counted at each one sent) and the
     * layer set_global settings that may touch any kernel: while both
     * counts stay, setting it to that value again is no change, even
     * after settings of other attributes (libraries set two before each
     * launch).  modules.c's attr_lock's. */
    uint32_t set_have;
    CUdevice set_dev[CU_FUNC_ATTRIBUTE_MAX];
    int set_val[CU_FUNC_ATTRIBUTE_MAX];
    uint64_t set_sets[CU_FUNC_ATTRIBUTE_MAX];
    uint64_t set_global[CU_FUNC_ATTRIBUTE_MAX];
    uint64_t attr_sets[CU_FUNC_ATTRIBUTE_MAX];
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

/* The settings count of k's family: the layer's count of settings made
 * in a way that may touch any kernel (gvs_remote.h: a cache or shared
 * memory preference, a setting through the runtime's frontend) plus the
 * family's own.  Both only grow, so the sum moves whenever either does. */
static inline uint64_t cuda_fe_kernel_settings(struct cuda_fe_kernel *k)
{
    return gvs_remote_kernel_settings() +
           atomic_load(&k->root->family_settings);
}

/* The kernel or function of id, or NULL.  It lives until its library or
 * module is unloaded. */
struct cuda_fe_kernel *cuda_fe_kernel_find(uint64_t id);

#endif
