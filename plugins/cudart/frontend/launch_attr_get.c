/* Launch attribute values off the wire (kernels.h), as the backend's
 * launch_attr_put.c appends them: the stream and graph-node attribute
 * queries. */
#include "kernels.h"

#include <string.h>

#include "gvs/err.h"

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

int fe_get_launch_attr(struct apigen_call *c, cudaLaunchAttributeID want,
                       cudaLaunchAttributeValue *v)
{
    uint32_t id, bits;
    uint64_t u;
    int w;
    memset(v, 0, sizeof(*v));
    apigen_get_u32(c, &id);
    if (c->rc == 0 && id != (uint32_t)want)
        c->rc = GVS_E_PROTO;
    if (c->rc < 0)
        return c->rc;
    switch (want) {
    case cudaLaunchAttributeAccessPolicyWindow:
        apigen_get_u64(c, &u);
        v->accessPolicyWindow.base_ptr = (void *)(uintptr_t)u;
        apigen_get_u64(c, &u);
        v->accessPolicyWindow.num_bytes = (size_t)u;
        apigen_get_u32(c, &bits);
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
        apigen_get_u64(c, &u);
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
        apigen_get_u64(c, &u);
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
