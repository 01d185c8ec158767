/* Launch attribute values on the wire for both halves
 * (launch_attr_wire.h). */
#include "launch_attr_wire.h"

#include <string.h>

void cudart_wire_put_dim(struct apigen_call *c, unsigned x, unsigned y,
                         unsigned z)
{
    apigen_put_u32(c, x);
    apigen_put_u32(c, y);
    apigen_put_u32(c, z);
}

void cudart_wire_get_dim(struct apigen_call *c, unsigned *x, unsigned *y,
                         unsigned *z)
{
    apigen_get_u32(c, x);
    apigen_get_u32(c, y);
    apigen_get_u32(c, z);
}

static uint64_t put_event(cudart_wire_event_put event_wire, cudaEvent_t ev)
{
    return event_wire != NULL ? event_wire(ev) : 0;
}

void cudart_wire_put_launch_attr(struct apigen_call *c,
                                 cudaLaunchAttributeID id,
                                 const cudaLaunchAttributeValue *v,
                                 cudart_wire_event_put event_wire)
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
        cudart_wire_put_dim(c, v->clusterDim.x, v->clusterDim.y,
                            v->clusterDim.z);
        break;
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
        apigen_put_i32(c, v->clusterSchedulingPolicyPreference);
        break;
    case cudaLaunchAttributeProgrammaticStreamSerialization:
        apigen_put_i32(c, v->programmaticStreamSerializationAllowed);
        break;
    case cudaLaunchAttributeProgrammaticEvent:
        apigen_put_u64(c, put_event(event_wire, v->programmaticEvent.event));
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
        cudart_wire_put_dim(c, v->preferredClusterDim.x,
                            v->preferredClusterDim.y,
                            v->preferredClusterDim.z);
        break;
    case cudaLaunchAttributeLaunchCompletionEvent:
        apigen_put_u64(c,
                       put_event(event_wire, v->launchCompletionEvent.event));
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

static void get_int(struct apigen_call *c, int *v)
{
    int32_t w;
    apigen_get_i32(c, &w);
    *v = w;
}

static void get_event(struct apigen_call *c, cudaEvent_t *ev,
                      cudart_wire_event_get get, void *ctx)
{
    uint64_t skipped;
    if (get != NULL)
        get(c, ev, ctx);
    else
        apigen_get_u64(c, &skipped);
}

void cudart_wire_get_launch_attr_value(struct apigen_call *c, uint32_t id,
                                       cudaLaunchAttributeValue *v,
                                       cudart_wire_event_get get_ev,
                                       void *ctx)
{
    uint32_t bits;
    uint64_t base, bytes;
    int w;
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
        cudart_wire_get_dim(c, &v->clusterDim.x, &v->clusterDim.y,
                            &v->clusterDim.z);
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
        get_event(c, &v->programmaticEvent.event, get_ev, ctx);
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
        cudart_wire_get_dim(c, &v->preferredClusterDim.x,
                            &v->preferredClusterDim.y,
                            &v->preferredClusterDim.z);
        break;
    case cudaLaunchAttributeLaunchCompletionEvent:
        get_event(c, &v->launchCompletionEvent.event, get_ev, ctx);
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
}
