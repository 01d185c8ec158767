/* User objects (cuda.api): the layer's records, whose destructor sends
 * the client USER_OBJECT_DESTROY; the driver holds the references. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"

/* Request: u64 callback, u32 references, u32 flags.  Reply: i32, u64
 * object. */
int cuda_be_user_object_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t callback, id = 0;
    uint32_t refs, flags;
    CUuserObject o = NULL;
    apigen_get_u64(&c, &callback);
    apigen_get_u32(&c, &refs);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    void *u = r == CUDA_SUCCESS
                  ? cuda_be_remote->user_object_new(
                        CUDA_PLUGIN_ID, CUDA_OP_USER_OBJECT_DESTROY, callback,
                        &id)
                  : NULL;
    if (r == CUDA_SUCCESS && u == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuUserObjectCreate)(
            &o, u, cuda_be_remote->user_object_destructor, refs, flags);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->user_object_set(u, o);
    else if (u != NULL)
        cuda_be_remote->user_object_drop(u);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* Request: u64 object, u32 count, u32 which, u64 graph, u32 flags
 * (cuda.api).  Reply: i32. */
int cuda_be_user_object_ref(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, gid;
    uint32_t count, which, flags;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &count);
    apigen_get_u32(&c, &which);
    apigen_get_u64(&c, &gid);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 3)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    CUuserObject o = cuda_be_remote->user_object_get(id);
    cuda_be_remote->graphs_lock();
    struct gvs_remote_graph *g =
        which >= 2 ? cuda_be_remote->graph_get(gid) : NULL;
    if (r == CUDA_SUCCESS && (o == NULL || (which >= 2 && g == NULL)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        switch (which) {
        case 0:
            r = CUDA_DRV(cuUserObjectRetain)(o, count);
            break;
        case 1:
            r = CUDA_DRV(cuUserObjectRelease)(o, count);
            break;
        case 2:
            r = CUDA_DRV(cuGraphRetainUserObject)(g->g, o, count, flags);
            break;
        default:
            r = CUDA_DRV(cuGraphReleaseUserObject)(g->g, o, count);
            break;
        }
    }
    cuda_be_remote->graphs_unlock();
    apigen_put_i32(&c, r);
    return c.rc;
}
