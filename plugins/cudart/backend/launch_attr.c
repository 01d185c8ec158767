/* Launch configurations and attributes off the wire (the frontend's
 * launch_attr.c encodes them; common/launch_attr_wire.c decodes the
 * values).  Each field is decoded into the union member its id names;
 * the rest of the value stays zeroed, so an id this build does not know
 * reaches CUDA with a zero value and CUDA answers for it. */
#include "kernels.h"

#include <string.h>

#include "gvs/err.h"
#include "objects.h"

/* An event field: unknown ids make the whole call fail as CUDA would for
 * a bad handle (ctx is the caller's cudaError_t). */
static void get_event(struct apigen_call *c, cudaEvent_t *ev, void *ctx)
{
    cudaError_t *e = ctx;
    uint64_t wire;
    apigen_get_u64(c, &wire);
    if (c->rc == 0 && be_event(wire, ev) != cudaSuccess)
        *e = cudaErrorInvalidResourceHandle;
}

int be_get_launch_attr(struct apigen_call *c, cudaLaunchAttribute *out,
                       cudaError_t *e)
{
    uint32_t id;
    memset(out, 0, sizeof(*out));
    apigen_get_u32(c, &id);
    out->id = (cudaLaunchAttributeID)id;
    cudart_wire_get_launch_attr_value(c, id, &out->val, get_event, e);
    return c->rc;
}

int be_get_launch_config(struct apigen_call *c, cudaLaunchConfig_t *cfg,
                         cudaLaunchAttribute *attrs, uint64_t *stream,
                         cudaError_t *e)
{
    uint64_t shmem;
    uint32_t n;
    memset(cfg, 0, sizeof(*cfg));
    cudart_wire_get_dim(c, &cfg->gridDim.x, &cfg->gridDim.y,
                        &cfg->gridDim.z);
    cudart_wire_get_dim(c, &cfg->blockDim.x, &cfg->blockDim.y,
                        &cfg->blockDim.z);
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
