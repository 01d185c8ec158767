/*
 * User objects (40-graphs.api, ops 440..443): the layer's (remote_be.h,
 * "User objects"), the destructor the client's, run when the layer sends
 * USER_OBJECT_DESTROY.
 */
#include "graphs.h"

#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"

int cudart_be_user_object_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t callback;
    uint32_t refs, flags;
    apigen_get_u64(&c, &callback);
    apigen_get_u32(&c, &refs);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    uint64_t id = 0;
    void *u = be_remote->user_object_new(
        CUDART_PLUGIN_ID, CUDART_OP_USER_OBJECT_DESTROY, callback, &id);
    cudaUserObject_t o = NULL;
    cudaError_t e = u != NULL ? cudaUserObjectCreate(
                                    &o, u, be_remote->user_object_destructor,
                                    refs, flags)
                              : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        be_remote->user_object_set(u, o);
    else if (u != NULL)
        be_remote->user_object_drop(u);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}

int cudart_be_user_object_ref(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t count, release;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &count);
    apigen_get_u32(&c, &release);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (release > 1)
        return GVS_E_PROTO;
    cudaUserObject_t o = (cudaUserObject_t)be_remote->user_object_get(id);
    cudaError_t e = o == NULL ? cudaErrorInvalidValue
                    : release ? cudaUserObjectRelease(o, count)
                              : cudaUserObjectRetain(o, count);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_graph_user_object(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t gid, id;
    uint32_t count, flags, release;
    apigen_get_u64(&c, &gid);
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &count);
    apigen_get_u32(&c, &flags);
    apigen_get_u32(&c, &release);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (release > 1)
        return GVS_E_PROTO;
    cudaUserObject_t o = (cudaUserObject_t)be_remote->user_object_get(id);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(gid);
    cudaError_t e = o == NULL || g == NULL ? cudaErrorInvalidValue
                    : release ? cudaGraphReleaseUserObject(g->g, o, count)
                              : cudaGraphRetainUserObject(g->g, o, count,
                                                          flags);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    return c.rc;
}
