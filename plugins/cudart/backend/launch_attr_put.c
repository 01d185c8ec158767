/* Launch attribute values onto the wire, field by field as
 * launch_attr.c decodes them (kernels.h). */
#include "kernels.h"

#include <string.h>

static void put_dim(struct apigen_call *c, unsigned x, unsigned y,
                    unsigned z)
{
    apigen_put_u32(c, x);
    apigen_put_u32(c, y);
    apigen_put_u32(c, z);
}

void be_put_launch_attr(struct apigen_call *c, cudaLaunchAttributeID id,
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
        apigen_put_u64(c, 0);
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
        apigen_put_u64(c, 0);
        apigen_put_i32(c, v->launchCompletionEvent.flags);
        break;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
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
