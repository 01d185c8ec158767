/*
 * Graph node queries (NODE_GET_PARAMS) and kernel node attributes
 * (40-graphs.api).  Parameters go back in the client's terms: a kernel
 * as the module and index the session loaded it under, its arguments as
 * the packed parameter block; a host node as the client's callback id;
 * graphs and events as their ids.
 */
#include "graphs.h"

#include <string.h>

#include <cuda.h>

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "kernels.h"
#include "objects.h"

/* The session's kernel that CUDA reports for a node: by its library
 * kernel handle, or by the function of it on this device. */
static cudaError_t find_kernel(struct be_session *s, CUkernel kern,
                               CUfunction func, uint32_t *mod, uint32_t *idx,
                               const struct be_func **out)
{
    pthread_mutex_lock(&s->mods_lock);
    uint32_t nmods = s->nmods;
    pthread_mutex_unlock(&s->mods_lock);
    for (uint32_t m = 0; m < nmods; m++) {
        struct be_module *bm = be_module_get(s, m);
        for (uint32_t i = 0; bm != NULL && i < bm->nfuncs; i++) {
            const struct be_func *f = &bm->funcs[i];
            cudaFunction_t fn = NULL;
            if (f->kernel == NULL || f->status != cudaSuccess)
                continue;
            if ((kern == NULL || (CUkernel)f->kernel != kern) &&
                (cudaGetFuncBySymbol(&fn, (const void *)f->kernel) !=
                     cudaSuccess ||
                 (CUfunction)fn != func))
                continue;
            *mod = m;
            *idx = i;
            *out = f;
            return cudaSuccess;
        }
    }
    return cudaErrorNotSupported;
}

typedef CUresult (*kernel_params_fn)(CUgraphNode node,
                                     CUDA_KERNEL_NODE_PARAMS_v2 *p);

/* The node's parameters as the driver keeps them: the runtime's query
 * answers only for kernels registered with the runtime itself, which the
 * backend's (loaded as libraries) are not. */
static cudaError_t kernel_params(cudaGraphNode_t n,
                                 CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    void *fn;
    memset(p, 0, sizeof(*p));
    cudaError_t e = be_driver_entry("cuGraphKernelNodeGetParams", 12000, &fn);
    if (e != cudaSuccess)
        return e;
    CUresult r = ((kernel_params_fn)fn)((CUgraphNode)n, p);
    return r == CUDA_SUCCESS ? cudaSuccess
           : r == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidValue
                                          : cudaErrorInvalidDeviceFunction;
}

static cudaError_t put_kernel(struct gvs_call *call, struct apigen_call *c,
                              cudaGraphNode_t n)
{
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    const struct be_func *f = NULL;
    uint32_t mod = 0, idx = 0;
    uint8_t block[BE_PARAM_MAX];
    cudaError_t e = kernel_params(n, &p);
    if (e == cudaSuccess)
        e = find_kernel(call->state, p.kern, p.func, &mod, &idx, &f);
    if (e == cudaSuccess && f->nparams > 0 && p.kernelParams == NULL)
        e = cudaErrorNotSupported;
    if (e != cudaSuccess)
        return e;
    memset(block, 0, f->param_bytes);
    for (uint32_t i = 0; i < f->nparams; i++)
        memcpy(block + f->params[i].offset, p.kernelParams[i],
               f->params[i].size);
    apigen_put_i32(c, cudaSuccess);
    apigen_put_u8(c, cudaGraphNodeTypeKernel);
    apigen_put_u32(c, mod);
    apigen_put_u32(c, idx);
    apigen_put_u32(c, p.gridDimX);
    apigen_put_u32(c, p.gridDimY);
    apigen_put_u32(c, p.gridDimZ);
    apigen_put_u32(c, p.blockDimX);
    apigen_put_u32(c, p.blockDimY);
    apigen_put_u32(c, p.blockDimZ);
    apigen_put_u32(c, p.sharedMemBytes);
    apigen_put_blob(c, block, f->param_bytes);
    return cudaSuccess;
}

/* Shared host memory by the client's address, as it named it. */
static void put_end(struct apigen_call *c, const struct cudaPitchedPtr *p,
                    const struct cudaPos *pos)
{
    uint64_t client = p->ptr != NULL ? be_remote->shared_client(p->ptr) : 0;
    apigen_put_u64(c, client != 0 ? client : (uint64_t)(uintptr_t)p->ptr);
    apigen_put_u64(c, p->pitch);
    apigen_put_u64(c, p->xsize);
    apigen_put_u64(c, p->ysize);
    apigen_put_u64(c, pos->x);
    apigen_put_u64(c, pos->y);
    apigen_put_u64(c, pos->z);
}

/* Arrays have no way back to their ids here. */
static cudaError_t put_memcpy(struct apigen_call *c, cudaGraphNode_t n)
{
    struct cudaMemcpy3DParms p = {0};
    cudaError_t e = cudaGraphMemcpyNodeGetParams(n, &p);
    if (e == cudaSuccess && (p.srcArray != NULL || p.dstArray != NULL))
        e = cudaErrorNotSupported;
    if (e != cudaSuccess)
        return e;
    apigen_put_i32(c, cudaSuccess);
    apigen_put_u8(c, cudaGraphNodeTypeMemcpy);
    put_end(c, &p.dstPtr, &p.dstPos);
    put_end(c, &p.srcPtr, &p.srcPos);
    apigen_put_u64(c, p.extent.width);
    apigen_put_u64(c, p.extent.height);
    apigen_put_u64(c, p.extent.depth);
    apigen_put_i32(c, p.kind);
    return cudaSuccess;
}

static cudaError_t put_memset(struct apigen_call *c, cudaGraphNode_t n)
{
    struct cudaMemsetParams p = {0};
    cudaError_t e = cudaGraphMemsetNodeGetParams(n, &p);
    if (e != cudaSuccess)
        return e;
    apigen_put_i32(c, cudaSuccess);
    apigen_put_u8(c, cudaGraphNodeTypeMemset);
    apigen_put_u64(c, (uint64_t)(uintptr_t)p.dst);
    apigen_put_u64(c, p.pitch);
    apigen_put_u32(c, p.value);
    apigen_put_u32(c, p.elementSize);
    apigen_put_u64(c, p.width);
    apigen_put_u64(c, p.height);
    return cudaSuccess;
}

/* The rest answer one u64. */
static cudaError_t get_u64(struct gvs_remote_node *node, uint8_t type,
                           uint64_t *v)
{
    struct cudaHostNodeParams h = {0};
    cudaGraph_t child = NULL;
    cudaEvent_t ev = NULL;
    void *dptr = NULL;
    cudaError_t e;
    switch (type) {
    case cudaGraphNodeTypeHost:
        e = cudaGraphHostNodeGetParams(node->n, &h);
        *v = be_callback_node_id(&h);
        return e;
    case cudaGraphNodeTypeGraph: {
        e = cudaGraphChildGraphNodeGetGraph(node->n, &child);
        struct gvs_remote_graph *g =
            e == cudaSuccess ? be_remote->graph_of(child, 0) : NULL;
        if (e == cudaSuccess && g == NULL)
            e = cudaErrorMemoryAllocation;
        *v = g != NULL ? g->id : 0;
        return e;
    }
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent:
        e = type == cudaGraphNodeTypeEventRecord
                ? cudaGraphEventRecordNodeGetEvent(node->n, &ev)
                : cudaGraphEventWaitNodeGetEvent(node->n, &ev);
        *v = be_event_id(ev);
        return e;
    case cudaGraphNodeTypeMemFree:
        e = cudaGraphMemFreeNodeGetParams(node->n, &dptr);
        *v = (uint64_t)(uintptr_t)dptr;
        return e;
    default:
        return cudaErrorNotSupported;
    }
}

static cudaError_t put_params(struct gvs_call *call, struct apigen_call *c,
                              struct gvs_remote_node *node, uint8_t type)
{
    struct cudaMemAllocNodeParams a;
    uint64_t v = 0;
    cudaError_t e;
    switch (type) {
    case cudaGraphNodeTypeKernel:
        return put_kernel(call, c, node->n);
    case cudaGraphNodeTypeMemcpy:
        return put_memcpy(c, node->n);
    case cudaGraphNodeTypeMemset:
        return put_memset(c, node->n);
    case cudaGraphNodeTypeMemAlloc:
        e = cudaGraphMemAllocNodeGetParams(node->n, &a);
        if (e == cudaSuccess && a.accessDescCount > BE_MAX_ACCESS)
            e = cudaErrorNotSupported;
        if (e != cudaSuccess)
            return e;
        apigen_put_i32(c, cudaSuccess);
        apigen_put_u8(c, type);
        apigen_put_u64(c, (uint64_t)(uintptr_t)a.dptr);
        be_put_mem_alloc(c, &a);
        return cudaSuccess;
    default:
        e = get_u64(node, type, &v);
        if (e != cudaSuccess)
            return e;
        apigen_put_i32(c, cudaSuccess);
        apigen_put_u8(c, type);
        apigen_put_u64(c, v);
        return cudaSuccess;
    }
}

int cudart_be_node_get_params(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint8_t want;
    apigen_get_u64(&c, &id);
    apigen_get_u8(&c, &want);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(id);
    enum cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    cudaError_t e = n != NULL ? cudart_be_enter(call) : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaGraphNodeGetType(n->n, &type);
    if (e == cudaSuccess && type != want)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = put_params(call, &c, n, want);
    be_remote->graphs_unlock();
    if (e != cudaSuccess)
        apigen_put_i32(&c, e);
    return c.rc;
}

/* Kernel node attributes ------------------------------------------------ */

int cudart_be_kernel_node_get_attr(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t attr;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &attr);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaLaunchAttributeValue v;
    memset(&v, 0, sizeof(v));
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(id);
    cudaError_t e = n != NULL ? cudart_be_enter(call) : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaGraphKernelNodeGetAttribute(
            n->n, (cudaKernelNodeAttrID)attr, &v);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        cudart_wire_put_launch_attr(&c, (cudaLaunchAttributeID)attr, &v,
                                    NULL);
    return c.rc;
}

int cudart_be_kernel_node_set_attr(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    cudaLaunchAttribute a;
    cudaError_t e = cudaSuccess;
    apigen_get_u64(&c, &id);
    if (c.rc == 0)
        be_get_launch_attr(&c, &a, &e);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_node *n = be_remote->node_get(id);
    if (e == cudaSuccess)
        e = n != NULL ? cudart_be_enter(call) : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaGraphKernelNodeSetAttribute(n->n, a.id, &a.val);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_kernel_node_copy_attrs(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t dst, src;
    apigen_get_u64(&c, &dst);
    apigen_get_u64(&c, &src);
    if (apigen_end(&c) < 0)
        return c.rc;
    be_remote->graphs_lock();
    struct gvs_remote_node *d = be_remote->node_get(dst);
    struct gvs_remote_node *s = be_remote->node_get(src);
    cudaError_t e = d != NULL && s != NULL ? cudart_be_enter(call)
                                           : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaGraphKernelNodeCopyAttributes(d->n, s->n);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    return c.rc;
}
