/* Launch configurations and attributes off the wire (the frontend's
 * launch_attr.c encodes them).  Each field is decoded into the union
 * member its id names; the rest of the value stays zeroed, so an id
 * this build does not know reaches CUDA with a zero value and CUDA
 * answers for it. */
#include "kernels.h"

#include <string.h>

#include "gvs/err.h"
#include "objects.h"

static void get_dim(struct apigen_call *c, unsigned *x, unsigned *y,
                    unsigned *z)
{
    apigen_get_u32(c, x);
    apigen_get_u32(c, y);
    apigen_get_u32(c, z);
}

static void get_int(struct apigen_call *c, int *v)
{
    int32_t w;
    apigen_get_i32(c, &w);
    *v = w;
}

/* An event field: unknown ids make the whole call fail as CUDA would for
 * a bad handle. */
static void get_event(struct apigen_call *c, cudaEvent_t *ev, cudaError_t *e)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    if (c->rc == 0 && be_event(wire, ev) != cudaSuccess)
        *e = cudaErrorInvalidResourceHandle;
}

int be_get_launch_attr(struct apigen_call *c, cudaLaunchAttribute *out,
                       cudaError_t *e)
{
    cudaLaunchAttributeValue *v = &out->val;
    uint32_t id, bits;
    uint64_t base, bytes;
    int w;
    memset(out, 0, sizeof(*out));
    apigen_get_u32(c, &id);
    out->id = (cudaLaunchAttributeID)id;
    switch (id) {
    case cudaLaunchAttributeAccessPolicyWindow:
        apigen_get_u64(c, &base);
        apigen_get_u64(c, &bytes);
        apigen_get_u32(c, &bits);
        /* The window is a caching hint over an address range; CUDA
         * checks it and never reads through it. */
        v->accessPolicyWindow.base_ptr = (void *)(uintptr_t)base;
        v->accessPolicyWindow.num_bytes = (size_t)bytes;
        memcpy(&v->accessPolicyWindow.hitRatio, &bits, sizeof(bits));
        get_int(c, &w);
        v->accessPolicyWindow.hitProp = (enum cudaAccessProperty)w;
        get_int(c, &w);
        v->accessPolicyWindow.missProp = (enum cudaAccessProperty)w;
        break;
    case cudaLaunchAttributeCooperative:
        get_int(c, &v->cooperative);
        break;
    case cudaLaunchAttributeSynchronizationPolicy:
        get_int(c, &w);
        v->syncPolicy = (enum cudaSynchronizationPolicy)w;
        break;
    case cudaLaunchAttributeClusterDimension:
        get_dim(c, &v->clusterDim.x, &v->clusterDim.y, &v->clusterDim.z);
        break;
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
        get_int(c, &w);
        v->clusterSchedulingPolicyPreference =
            (enum cudaClusterSchedulingPolicy)w;
        break;
    case cudaLaunchAttributeProgrammaticStreamSerialization:
        get_int(c, &v->programmaticStreamSerializationAllowed);
        break;
    case cudaLaunchAttributeProgrammaticEvent:
        get_event(c, &v->programmaticEvent.event, e);
        get_int(c, &v->programmaticEvent.flags);
        get_int(c, &v->programmaticEvent.triggerAtBlockStart);
        break;
    case cudaLaunchAttributePriority:
        get_int(c, &v->priority);
        break;
    case cudaLaunchAttributeMemSyncDomainMap:
        apigen_get_u8(c, &v->memSyncDomainMap.default_);
        apigen_get_u8(c, &v->memSyncDomainMap.remote);
        break;
    case cudaLaunchAttributeMemSyncDomain:
        get_int(c, &w);
        v->memSyncDomain = (cudaLaunchMemSyncDomain)w;
        break;
    case cudaLaunchAttributePreferredClusterDimension:
        get_dim(c, &v->preferredClusterDim.x, &v->preferredClusterDim.y,
                &v->preferredClusterDim.z);
        break;
    case cudaLaunchAttributeLaunchCompletionEvent:
        get_event(c, &v->launchCompletionEvent.event, e);
        get_int(c, &v->launchCompletionEvent.flags);
        break;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
        get_int(c, &v->deviceUpdatableKernelNode.deviceUpdatable);
        break;
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
        apigen_get_u32(c, &v->sharedMemCarveout);
        break;
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
        apigen_get_u32(c, &v->nvlinkUtilCentricScheduling);
        break;
    default:
        break;
    }
    return c->rc;
}

int be_get_launch_config(struct apigen_call *c, cudaLaunchConfig_t *cfg,
                         cudaLaunchAttribute *attrs, uint64_t *stream,
                         cudaError_t *e)
{
    uint64_t shmem;
    uint32_t n;
    memset(cfg, 0, sizeof(*cfg));
    get_dim(c, &cfg->gridDim.x, &cfg->gridDim.y, &cfg->gridDim.z);
    get_dim(c, &cfg->blockDim.x, &cfg->blockDim.y, &cfg->blockDim.z);
    apigen_get_u64(c, &shmem);
    apigen_get_u64(c, stream);
    apigen_get_u32(c, &n);
    if (c->rc < 0)
        return c->rc;
    if (n > BE_MAX_LAUNCH_ATTRS)
        return GVS_E_RANGE;
    for (uint32_t i = 0; i < n && c->rc == 0; i++)
        be_get_launch_attr(c, &attrs[i], e);
    if (c->rc < 0)
        return c->rc;
    cfg->dynamicSmemBytes = (size_t)shmem;
    cfg->attrs = n > 0 ? attrs : NULL;
    cfg->numAttrs = n;
    if (*e == cudaSuccess && shmem > SIZE_MAX)
        *e = cudaErrorInvalidValue;
    return 0;
}
