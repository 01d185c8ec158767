/* Stream attributes (10-streams.api, ops 150..152): values travel as
 * launch attributes do (launch_attr.c, common/launch_attr_wire.c). */
#include "kernels.h"

#include "cudart_be_gen.h"
#include "objects.h"

/* Decodes u64 stream, enters the lane and resolves it into *s. */
static cudaError_t get_stream(struct gvs_call *call, struct apigen_call *c,
                              cudaStream_t *s)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    if (c->rc < 0)
        return cudaSuccess;
    cudaError_t e = cudart_be_enter(call);
    return e == cudaSuccess ? be_stream(call, wire, s) : e;
}

int cudart_be_stream_get_attr(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    uint32_t id;
    cudaError_t e = get_stream(call, &c, &s);
    apigen_get_u32(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaLaunchAttributeValue v = {0};
    if (e == cudaSuccess)
        e = cudaStreamGetAttribute(s, (cudaStreamAttrID)id, &v);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        cudart_wire_put_launch_attr(&c, (cudaLaunchAttributeID)id, &v,
                                    NULL);
    return c.rc;
}

int cudart_be_stream_set_attr(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t s;
    cudaLaunchAttribute a;
    cudaError_t e = get_stream(call, &c, &s);
    if (c.rc == 0)
        be_get_launch_attr(&c, &a, &e);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaStreamSetAttribute(s, a.id, &a.val);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_stream_copy_attrs(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaStream_t dst, src;
    cudaError_t e = get_stream(call, &c, &dst);
    uint64_t wire;
    apigen_get_u64(&c, &wire);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = be_stream(call, wire, &src);
    if (e == cudaSuccess)
        e = cudaStreamCopyAttributes(dst, src);
    apigen_put_i32(&c, e);
    return c.rc;
}
