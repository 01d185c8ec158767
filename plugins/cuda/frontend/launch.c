/* Kernel launches (cuda.api, LAUNCH): the parameters are packed here by
 * the layout the load gave, into the block the backend hands the driver
 * as it is; posted within a configuration the backend accepted for the
 * kernel (gvs_remote.h). */
#include "call.h"
#include "kernels.h"

#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/proto.h"
#include "gvs_remote.h"

#define FORM_PARAMS CUDA_FE_FORM_PARAMS
#define FORM_EXTRA CUDA_FE_FORM_EXTRA
#define ATTRS_MAX 32u

CUresult cuda_fe_pack_params(const struct cuda_fe_kernel *k,
                             void **kernelParams, void **extra,
                             uint8_t *block, const void **data, size_t *len,
                             uint8_t *form)
{
    if (kernelParams != NULL) {
        if (k->status != CUDA_SUCCESS)
            return k->status;
        memset(block, 0, k->param_bytes);
        for (uint32_t i = 0; i < k->nparams; i++) {
            if (kernelParams[i] == NULL)
                return CUDA_ERROR_INVALID_VALUE;
            memcpy(block + k->params[i].offset, kernelParams[i],
                   k->params[i].size);
        }
        *data = block;
        *len = k->param_bytes;
        *form = FORM_PARAMS;
        return CUDA_SUCCESS;
    }
    *form = FORM_EXTRA;
    *data = NULL;
    *len = 0;
    for (size_t i = 0; extra != NULL && extra[i] != CU_LAUNCH_PARAM_END;
         i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            *data = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            *len = *(size_t *)extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (extra == NULL) {
        if (k->nparams > 0)
            return CUDA_ERROR_INVALID_VALUE;
        *form = FORM_PARAMS;
        return CUDA_SUCCESS;
    }
    if ((*data == NULL && *len > 0) || *len > CUDA_FE_PARAM_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* A launch configuration on the wire: grid, block, shared bytes,
 * stream, u32 count and the attributes. */
static void put_config(struct apigen_call *c, const CUlaunchConfig *cfg,
                       int per_thread)
{
    apigen_put_u32(c, cfg->gridDimX);
    apigen_put_u32(c, cfg->gridDimY);
    apigen_put_u32(c, cfg->gridDimZ);
    apigen_put_u32(c, cfg->blockDimX);
    apigen_put_u32(c, cfg->blockDimY);
    apigen_put_u32(c, cfg->blockDimZ);
    apigen_put_u32(c, cfg->sharedMemBytes);
    apigen_put_u64(c, cuda_fe_stream_wire(cfg->hStream, per_thread));
}

static void put_attrs(struct apigen_call *c, const CUlaunchConfig *cfg)
{
    apigen_put_u32(c, cfg->numAttrs);
    for (unsigned int i = 0; i < cfg->numAttrs; i++) {
        apigen_put_u32(c, (uint32_t)cfg->attrs[i].id);
        apigen_put_bytes(c, &cfg->attrs[i].value,
                         sizeof(cfg->attrs[i].value));
    }
}

/* Whether a cluster of dims c tiles grid g; 0 for a zero dimension. */
static int tiles(const uint32_t g[3], unsigned x, unsigned y, unsigned z)
{
    return x != 0 && y != 0 && z != 0 && g[0] % x == 0 && g[1] % y == 0 &&
           g[2] % z == 0;
}

/* A launch with attributes (clusters, cooperative, programmatic
 * serialization: what cuBLASLt and cuDNN use on Hopper) has limits of
 * its own, so it cannot be judged by its threads and shared memory: its
 * key covers the device, the block, the shared memory and every
 * attribute's bytes, and a launch whose key is that of one the backend
 * accepted, at the same settings count, cannot fail at launch time
 * either.  The grid is in the key only for a cooperative launch (its
 * blocks must fit on the device at once); otherwise what the driver
 * checks of it is known here: the device's grid limits, and that the
 * clusters (regular and preferred) tile it.  So a kernel whose grid
 * follows the data (a decoder's attention over a growing sequence)
 * stays posted.  An attribute that names a handle (an event, which may
 * have gone since) or that this list does not know gives no key (0):
 * such launches wait. */
static uint64_t attrs_key(int dev, const CUlaunchConfig *cfg)
{
    const uint32_t g[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
    const uint32_t b[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
    if (gvs_remote_launch_config(dev, g, b, cfg->sharedMemBytes) == 0)
        return 0;
    int coop = 0;
    for (unsigned int i = 0; i < cfg->numAttrs; i++) {
        const CUlaunchAttributeValue *v = &cfg->attrs[i].value;
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
            coop |= v->cooperative != 0;
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
            !tiles(g, v->clusterDim.x, v->clusterDim.y, v->clusterDim.z))
            return 0;
        if (cfg->attrs[i].id ==
                CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION &&
            !tiles(g, v->preferredClusterDim.x, v->preferredClusterDim.y,
                   v->preferredClusterDim.z))
            return 0;
    }
    const uint32_t conf[] = {(uint32_t)dev,  coop ? g[0] : 0,
                             coop ? g[1] : 0, coop ? g[2] : 0,
                             b[0],           b[1],
                             b[2],           cfg->sharedMemBytes,
                             cfg->numAttrs};
    uint64_t h = gvs_hash64(GVS_HASH_SEED, conf, sizeof(conf));
    for (unsigned int i = 0; i < cfg->numAttrs; i++) {
        switch (cfg->attrs[i].id) {
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
        case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
            break;
        default:
            return 0;
        }
        const uint32_t id = (uint32_t)cfg->attrs[i].id;
        h = gvs_hash64(h, &id, sizeof(id));
        h = gvs_hash64(h, &cfg->attrs[i].value, sizeof(cfg->attrs[i].value));
    }
    return h != 0 ? h : 1;
}

/* The key accepted at settings count settings, 0 if none.  The count is
 * read first: accepted_set() zeroes the key before it changes the count. */
static uint64_t accepted_key(struct cuda_fe_accepted *a, uint64_t settings)
{
    return atomic_load(&a->settings) == settings ? atomic_load(&a->key) : 0;
}

static void accepted_set(struct cuda_fe_accepted *a, uint64_t settings,
                   uint64_t key)
{
    atomic_store(&a->key, 0);
    atomic_store(&a->settings, settings);
    atomic_store(&a->key, key);
}

static CUresult launch(const CUlaunchConfig *cfg, CUfunction f,
                       void **kernelParams, void **extra, int per_thread)
{
    struct apigen_call c;
    uint8_t block[CUDA_FE_PARAM_MAX];
    const void *data;
    size_t len;
    uint8_t form;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct cuda_fe_kernel *k = cuda_fe_kernel_find((uint64_t)(uintptr_t)f);
    if (k == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Parameters given both ways are refused, as cuda.h documents. */
    if (cfg->numAttrs > ATTRS_MAX ||
        (cfg->numAttrs > 0 && cfg->attrs == NULL) ||
        (kernelParams != NULL && extra != NULL))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r =
        cuda_fe_pack_params(k, kernelParams, extra, block, &data, &len, &form);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, k->id);
    put_config(&c, cfg, per_thread);
    apigen_put_u8(&c, form);
    apigen_put_blob(&c, data, len);
    put_attrs(&c, cfg);
    /* A launch whose extra buffer is not the size of the kernel's
     * parameters, which the driver may refuse at once, waits; so does one
     * with attributes unlike those of any the backend accepted. */
    CUdevice dev = -1;
    const uint32_t g[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
    const uint32_t b[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
    uint64_t config = 0, ex = 0;
    int exact = form == FORM_PARAMS ||
                (k->status == CUDA_SUCCESS && len == k->param_bytes);
    if (exact && cuda_fe_ctx_device(&dev) == CUDA_SUCCESS) {
        if (cfg->numAttrs == 0)
            config = gvs_remote_launch_config(dev, g, b, cfg->sharedMemBytes);
        else
            ex = attrs_key(dev, cfg);
    }
    uint64_t settings = cuda_fe_kernel_settings(k);
    uint64_t plain_ok = accepted_key(&k->ok_plain, settings);
    if ((config != 0 && plain_ok != 0 &&
         gvs_remote_launch_within(config, plain_ok)) ||
        (ex != 0 && accepted_key(&k->ok_ex, settings) == ex))
        return cuda_fe_post(&c, CUDA_OP_LAUNCH, APIGEN_DEVICE);
    r = cuda_fe_run(&c, CUDA_OP_LAUNCH, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS && config != 0)
        accepted_set(&k->ok_plain, settings, config);
    if (r == CUDA_SUCCESS && ex != 0)
        accepted_set(&k->ok_ex, settings, ex);
    return r;
}

static CUresult launch_plain(CUfunction f, unsigned int gx, unsigned int gy,
                             unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz,
                             unsigned int shmem, CUstream s,
                             void **kernelParams, void **extra,
                             int per_thread)
{
    const CUlaunchConfig cfg = {gx, gy, gz, bx, by, bz, shmem, s, NULL, 0};
    return launch(&cfg, f, kernelParams, extra, per_thread);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                        unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes,
                        CUstream hStream, void **kernelParams, void **extra)
{
    return launch_plain(f, gridDimX, gridDimY, gridDimZ, blockDimX,
                        blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, extra, 0);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
                             unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY,
                             unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream,
                             void **kernelParams, void **extra)
{
    return launch_plain(f, gridDimX, gridDimY, gridDimZ, blockDimX,
                        blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, extra, 1);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                          void **kernelParams, void **extra)
{
    if (config == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(config, f, kernelParams, extra, 0);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                               void **kernelParams, void **extra)
{
    if (config == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(config, f, kernelParams, extra, 1);
}

static CUresult clusters(int which, int *out, CUfunction func,
                         const CUlaunchConfig *config)
{
    struct apigen_call c;
    int32_t v = 0;
    if (out == NULL || config == NULL || config->numAttrs > ATTRS_MAX ||
        (config->numAttrs > 0 && config->attrs == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    if (cuda_fe_kernel_find((uint64_t)(uintptr_t)func) == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)which);
    apigen_put_u64(&c, (uint64_t)(uintptr_t)func);
    put_config(&c, config, 0);
    put_attrs(&c, config);
    r = cuda_fe_run(&c, CUDA_OP_OCCUPANCY_CLUSTERS, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_i32(&c, &v);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *out = v;
    return r;
}

CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
                                      const CUlaunchConfig *config)
{
    return clusters(0, numClusters, func, config);
}

CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize,
                                            CUfunction func,
                                            const CUlaunchConfig *config)
{
    return clusters(1, clusterSize, func, config);
}

static CUresult cooperative(CUfunction f, unsigned int gx, unsigned int gy,
                            unsigned int gz, unsigned int bx, unsigned int by,
                            unsigned int bz, unsigned int shmem, CUstream s,
                            void **kernelParams, int per_thread)
{
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof(attr));
    attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    const CUlaunchConfig cfg = {gx, gy, gz, bx, by, bz, shmem, s, &attr, 1};
    return launch(&cfg, f, kernelParams, NULL, per_thread);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                   unsigned int gridDimY,
                                   unsigned int gridDimZ,
                                   unsigned int blockDimX,
                                   unsigned int blockDimY,
                                   unsigned int blockDimZ,
                                   unsigned int sharedMemBytes,
                                   CUstream hStream, void **kernelParams)
{
    return cooperative(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                       blockDimZ, sharedMemBytes, hStream, kernelParams, 0);
}

CUresult cuLaunchCooperativeKernel_ptsz(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
    void **kernelParams)
{
    return cooperative(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                       blockDimZ, sharedMemBytes, hStream, kernelParams, 1);
}
