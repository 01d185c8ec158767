/* Launch configurations and attributes on the wire.  Attribute values
 * are encoded and decoded by common/launch_attr_wire.c, shared with the
 * backend; here events become wire ids.  An id this build does not know
 * travels without a value; the backend passes it on zeroed and CUDA
 * decides. */
#include "kernels.h"

#include <string.h>

#include "gvs/err.h"
#include "streams.h"

cudaError_t fe_put_launch_config(struct apigen_call *c,
                                 const cudaLaunchConfig_t *cfg,
                                 int per_thread)
{
    if ((cfg->numAttrs > 0 && cfg->attrs == NULL) ||
        cfg->numAttrs > FE_MAX_LAUNCH_ATTRS)
        return cudaErrorInvalidValue;
    cudart_wire_put_dim(c, cfg->gridDim.x, cfg->gridDim.y, cfg->gridDim.z);
    cudart_wire_put_dim(c, cfg->blockDim.x, cfg->blockDim.y, cfg->blockDim.z);
    apigen_put_u64(c, cfg->dynamicSmemBytes);
    apigen_put_u64(c, fe_stream_wire(cfg->stream, per_thread));
    apigen_put_u32(c, cfg->numAttrs);
    for (unsigned i = 0; i < cfg->numAttrs; i++)
        fe_put_launch_attr(c, cfg->attrs[i].id, &cfg->attrs[i].val);
    return cudaSuccess;
}

void fe_put_launch_attr(struct apigen_call *c, cudaLaunchAttributeID id,
                        const cudaLaunchAttributeValue *v)
{
    cudart_wire_put_launch_attr(c, id, v, fe_event_wire);
}

int fe_get_launch_attr(struct apigen_call *c, cudaLaunchAttributeID want,
                       cudaLaunchAttributeValue *v)
{
    uint32_t id;
    memset(v, 0, sizeof(*v));
    apigen_get_u32(c, &id);
    if (c->rc == 0 && id != (uint32_t)want)
        c->rc = GVS_E_PROTO;
    if (c->rc < 0)
        return c->rc;
    /* The backend sends events as 0: they come back NULL. */
    cudart_wire_get_launch_attr_value(c, id, v, NULL, NULL);
    return c->rc;
}
