/* User objects (cuda.api): the driver holds the references on the
 * backend; the destructor is the program's, recorded in the layer
 * (gvs_remote.h) and run by the notify thread when USER_OBJECT_DESTROY
 * comes (notify.c). */
#include "graph.h"

#include "cuda_fe_gen.h"
#include "gvs_remote.h"

CUresult cuUserObjectCreate(CUuserObject *object_out, void *ptr,
                            CUhostFn destroy, unsigned int initialRefcount,
                            unsigned int flags)
{
    unsigned long long object = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (object_out == NULL || destroy == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t id = gvs_remote_destructor_add(destroy, ptr);
    if (id == 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r =
        cuda_rpc_USER_OBJECT_CREATE(&object, id, initialRefcount, flags);
    if (r != CUDA_SUCCESS) {
        gvs_remote_destructor_forget(id);
        return r;
    }
    *object_out = (CUuserObject)(uintptr_t)object;
    return CUDA_SUCCESS;
}

CUresult cuUserObjectRetain(CUuserObject object, unsigned int count)
{
    return cuda_rpc_USER_OBJECT_REF(cuda_fe_id(object), count, 0, 0, 0);
}

CUresult cuUserObjectRelease(CUuserObject object, unsigned int count)
{
    return cuda_rpc_USER_OBJECT_REF(cuda_fe_id(object), count, 1, 0, 0);
}

CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object,
                                 unsigned int count, unsigned int flags)
{
    return cuda_rpc_USER_OBJECT_REF(cuda_fe_id(object), count, 2,
                                    cuda_fe_id(graph), flags);
}

CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object,
                                  unsigned int count)
{
    return cuda_rpc_USER_OBJECT_REF(cuda_fe_id(object), count, 3,
                                    cuda_fe_id(graph), 0);
}
