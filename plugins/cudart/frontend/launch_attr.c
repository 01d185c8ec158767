/* Launch configurations and attributes on the wire.  Each attribute
 * travels as its id and the fields its id gives meaning to, never as the
 * raw union: events become wire ids, and padding or a field of another
 * member carries nothing.  An id this build does not know travels
 * without a value; the backend passes it on zeroed and CUDA decides. */
#include "kernels.h"

#include <string.h>

#include "streams.h"

static void put_dim(struct apigen_call *c, unsigned x, unsigned y,
                    unsigned z)
{
    apigen_put_u32(c, x);
    apigen_put_u32(c, y);
    apigen_put_u32(c, z);
}

void fe_put_launch_attr(struct apigen_call *c, cudaLaunchAttributeID id,
                        const cudaLaunchAttributeValue *v)
{
    uint32_t bits;
    apigen_put_u32(c, (uint32_t)id);
    switch (id) {
    case cudaLaunchAttributeAccessPolicyWindow:
        memcpy(&bits, &v->accessPolicyWindow.hitRatio, sizeof(bits));
        apigen_put_u64(c, (uint64_t)(uintptr_t)v->accessPolicyWindow.base_ptr);
        apigen_put_u64(c, v->accessPolicyWindow.num_bytes);
        apigen_put_u32(c, bits);
        apigen_put_i32(c, v->accessPolicyWindow.hitProp);
        apigen_put_i32(c, v->accessPolicyWindow.missProp);
        break;
    case cudaLaunchAttributeCooperative:
        apigen_put_i32(c, v->cooperative);
        break;
    case cudaLaunchAttributeSynchronizationPolicy:
        apigen_put_i32(c, v->syncPolicy);
        break;
    case cudaLaunchAttributeClusterDimension:
        put_dim(c, v->clusterDim.x, v->clusterDim.y, v->clusterDim.z);
        break;
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
        apigen_put_i32(c, v->clusterSchedulingPolicyPreference);
        break;
    case cudaLaunchAttributeProgrammaticStreamSerialization:
        apigen_put_i32(c, v->programmaticStreamSerializationAllowed);
        break;
    case cudaLaunchAttributeProgrammaticEvent:
        apigen_put_u64(c, fe_event_wire(v->programmaticEvent.event));
        apigen_put_i32(c, v->programmaticEvent.flags);
        apigen_put_i32(c, v->programmaticEvent.triggerAtBlockStart);
        break;
    case cudaLaunchAttributePriority:
        apigen_put_i32(c, v->priority);
        break;
    case cudaLaunchAttributeMemSyncDomainMap:
        apigen_put_u8(c, v->memSyncDomainMap.default_);
        apigen_put_u8(c, v->memSyncDomainMap.remote);
        break;
    case cudaLaunchAttributeMemSyncDomain:
        apigen_put_i32(c, v->memSyncDomain);
        break;
    case cudaLaunchAttributePreferredClusterDimension:
        put_dim(c, v->preferredClusterDim.x, v->preferredClusterDim.y,
                v->preferredClusterDim.z);
        break;
    case cudaLaunchAttributeLaunchCompletionEvent:
        apigen_put_u64(c, fe_event_wire(v->launchCompletionEvent.event));
        apigen_put_i32(c, v->launchCompletionEvent.flags);
        break;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
        /* devNode is CUDA's answer inside a graph, not an input. */
        apigen_put_i32(c, v->deviceUpdatableKernelNode.deviceUpdatable);
        break;
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
        apigen_put_u32(c, v->sharedMemCarveout);
        break;
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
        apigen_put_u32(c, v->nvlinkUtilCentricScheduling);
        break;
    default:
        break;
    }
}

cudaError_t fe_put_launch_config(struct apigen_call *c,
                                 const cudaLaunchConfig_t *cfg,
                                 int per_thread)
{
    if ((cfg->numAttrs > 0 && cfg->attrs == NULL) ||
        cfg->numAttrs > FE_MAX_LAUNCH_ATTRS)
        return cudaErrorInvalidValue;
    put_dim(c, cfg->gridDim.x, cfg->gridDim.y, cfg->gridDim.z);
    put_dim(c, cfg->blockDim.x, cfg->blockDim.y, cfg->blockDim.z);
    apigen_put_u64(c, cfg->dynamicSmemBytes);
    apigen_put_u64(c, fe_stream_wire(cfg->stream, per_thread));
    apigen_put_u32(c, cfg->numAttrs);
    for (unsigned i = 0; i < cfg->numAttrs; i++)
        fe_put_launch_attr(c, cfg->attrs[i].id, &cfg->attrs[i].val);
    return cudaSuccess;
}
