/*
 * User objects.  CUDA holds the references on the backend; the
 * destructor is the program's, recorded in the layer (gvs_remote.h) by
 * the id the object carries, and run by the notify thread when the
 * backend sends USER_OBJECT_DESTROY.
 */
#include "graphs.h"

#include "cudart_fe_gen.h"
#include "gvs_remote.h"

static cudaError_t create(cudaUserObject_t *out, void *ptr,
                          cudaHostFn_t destroy, unsigned refs, unsigned flags)
{
    unsigned long long object = 0;
    if (out == NULL || destroy == NULL)
        return cudaErrorInvalidValue;
    uint64_t id = gvs_remote_destructor_add(destroy, ptr);
    if (id == 0)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudart_rpc_USER_OBJECT_CREATE(&object, id, refs, flags);
    if (e != cudaSuccess) {
        gvs_remote_destructor_forget(id);
        return e;
    }
    *out = (cudaUserObject_t)(uintptr_t)object;
    return cudaSuccess;
}

cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr,
                                 cudaHostFn_t destroy,
                                 unsigned int initialRefcount,
                                 unsigned int flags)
{
    return cudart_fe_ret(
        create(object_out, ptr, destroy, initialRefcount, flags));
}

cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count)
{
    return cudart_fe_ret(
        cudart_rpc_USER_OBJECT_REF(fe_handle_wire(object), count, 0));
}

cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count)
{
    return cudart_fe_ret(
        cudart_rpc_USER_OBJECT_REF(fe_handle_wire(object), count, 1));
}

cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph,
                                      cudaUserObject_t object,
                                      unsigned int count, unsigned int flags)
{
    return cudart_fe_ret(cudart_rpc_GRAPH_USER_OBJECT(
        fe_handle_wire(graph), fe_handle_wire(object), count, flags, 0));
}

cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph,
                                       cudaUserObject_t object,
                                       unsigned int count)
{
    return cudart_fe_ret(cudart_rpc_GRAPH_USER_OBJECT(
        fe_handle_wire(graph), fe_handle_wire(object), count, 0, 1));
}

void fe_user_object_destroy(struct gvs_buf *body)
{
    gvs_remote_destructor_run(body);
}
