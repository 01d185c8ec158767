/*
 * Graph node queries (NODE_GET_PARAMS) and kernel node attributes.  What
 * comes back is in the program's terms: a kernel as the host stub the
 * program registered, its arguments in memory of ours that stays valid
 * until the node is asked again; a host node as the program's function
 * and data; graphs and events as their handles.
 */
#include "graphs.h"

#include <string.h>

#include <pthread.h>

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "kernels.h"
#include "streams.h"

cudaError_t fe_node_query(struct apigen_call *c, cudaGraphNode_t node,
                          enum cudaGraphNodeType type)
{
    uint8_t got = 0;
    cudaError_t e = cudart_fe_begin(c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(c, fe_handle_wire(node));
    apigen_put_u8(c, (uint8_t)type);
    e = cudart_fe_run(c, CUDART_OP_NODE_GET_PARAMS, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u8(c, &got);
    if (e == cudaSuccess && c->rc == 0 && got != (uint8_t)type)
        c->rc = GVS_E_PROTO;
    return e;
}

/* Kernel nodes' arguments handed out, by node id: argv points into the
 * block that follows it. */
static pthread_mutex_t args_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map args_out;

static void **args_keep(cudaGraphNode_t node, const struct fe_func *f,
                        const uint8_t *block)
{
    size_t head = (f->nparams * sizeof(void *) + 15) & ~(size_t)15;
    void **argv = gvs_malloc(head + f->param_bytes + 1);
    if (argv == NULL)
        return NULL;
    uint8_t *copy = (uint8_t *)argv + head;
    memcpy(copy, block, f->param_bytes);
    for (uint32_t i = 0; i < f->nparams; i++)
        argv[i] = copy + f->params[i].offset;
    pthread_mutex_lock(&args_lock);
    void *old = gvs_u64map_remove(&args_out, fe_handle_wire(node));
    if (gvs_u64map_put(&args_out, fe_handle_wire(node), argv) < 0) {
        gvs_free(argv);
        argv = NULL;
    }
    pthread_mutex_unlock(&args_lock);
    gvs_free(old);
    return argv;
}

static cudaError_t kernel_params(cudaGraphNode_t node,
                                 struct cudaKernelNodeParams *out)
{
    struct apigen_call c;
    struct cudaKernelNodeParams p = {0};
    uint32_t module = 0, index = 0;
    const uint8_t *block = NULL;
    size_t len = 0;
    struct fe_func *f = NULL;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = fe_node_query(&c, node, cudaGraphNodeTypeKernel);
    if (e == cudaSuccess) {
        apigen_get_u32(&c, &module);
        apigen_get_u32(&c, &index);
        apigen_get_u32(&c, &p.gridDim.x);
        apigen_get_u32(&c, &p.gridDim.y);
        apigen_get_u32(&c, &p.gridDim.z);
        apigen_get_u32(&c, &p.blockDim.x);
        apigen_get_u32(&c, &p.blockDim.y);
        apigen_get_u32(&c, &p.blockDim.z);
        apigen_get_u32(&c, &p.sharedMemBytes);
        apigen_get_blob(&c, &block, &len);
        f = c.rc == 0 ? fe_func_remote(module, index) : NULL;
        if (c.rc == 0 && (f == NULL || len != f->param_bytes))
            c.rc = GVS_E_PROTO;
        if (c.rc == 0) {
            p.func = f->host != NULL ? (void *)f->host : (void *)f;
            p.kernelParams = args_keep(node, f, block);
            if (p.kernelParams == NULL)
                e = cudaErrorMemoryAllocation;
        }
    }
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = p;
    return e;
}

cudaError_t cudaGraphKernelNodeGetParams(
    cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams)
{
    return cudart_fe_ret(kernel_params(node, pNodeParams));
}

static void get_end(struct apigen_call *c, struct cudaPitchedPtr *p,
                    struct cudaPos *pos)
{
    uint64_t v[7];
    for (int i = 0; i < 7; i++)
        apigen_get_u64(c, &v[i]);
    *p = (struct cudaPitchedPtr){(void *)(uintptr_t)v[0], (size_t)v[1],
                                 (size_t)v[2], (size_t)v[3]};
    *pos = (struct cudaPos){(size_t)v[4], (size_t)v[5], (size_t)v[6]};
}

static cudaError_t memcpy_params(cudaGraphNode_t node,
                                 struct cudaMemcpy3DParms *out)
{
    struct apigen_call c;
    struct cudaMemcpy3DParms p = {0};
    uint64_t w, h, d;
    int32_t kind;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = fe_node_query(&c, node, cudaGraphNodeTypeMemcpy);
    if (e == cudaSuccess) {
        get_end(&c, &p.dstPtr, &p.dstPos);
        get_end(&c, &p.srcPtr, &p.srcPos);
        apigen_get_u64(&c, &w);
        apigen_get_u64(&c, &h);
        apigen_get_u64(&c, &d);
        apigen_get_i32(&c, &kind);
        p.extent = (struct cudaExtent){(size_t)w, (size_t)h, (size_t)d};
        p.kind = (enum cudaMemcpyKind)kind;
    }
    e = cudart_fe_end(&c, e);
    /* A node copying host memory of the program's says what it was
     * given, not the device memory it copies through (graph_host.c). */
    if (e == cudaSuccess && !fe_ghost_params(fe_handle_wire(node), out))
        *out = p;
    return e;
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node,
                                         struct cudaMemcpy3DParms *pNodeParams)
{
    return cudart_fe_ret(memcpy_params(node, pNodeParams));
}

static cudaError_t memset_params(cudaGraphNode_t node,
                                 struct cudaMemsetParams *out)
{
    struct apigen_call c;
    uint64_t dst = 0, pitch = 0, width = 0, height = 0;
    uint32_t value = 0, elem = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = fe_node_query(&c, node, cudaGraphNodeTypeMemset);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &dst);
        apigen_get_u64(&c, &pitch);
        apigen_get_u32(&c, &value);
        apigen_get_u32(&c, &elem);
        apigen_get_u64(&c, &width);
        apigen_get_u64(&c, &height);
    }
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = (struct cudaMemsetParams){(void *)(uintptr_t)dst, (size_t)pitch,
                                         value, elem, (size_t)width,
                                         (size_t)height};
    return e;
}

cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node,
                                         struct cudaMemsetParams *pNodeParams)
{
    return cudart_fe_ret(memset_params(node, pNodeParams));
}

/* The node types answered by one u64. */
static cudaError_t query_u64(cudaGraphNode_t node, enum cudaGraphNodeType type,
                             uint64_t *v)
{
    struct apigen_call c;
    cudaError_t e = fe_node_query(&c, node, type);
    if (e == cudaSuccess)
        apigen_get_u64(&c, v);
    return cudart_fe_end(&c, e);
}

static cudaError_t host_params(cudaGraphNode_t node,
                               struct cudaHostNodeParams *out)
{
    struct cudaHostNodeParams p = {0};
    uint64_t id = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = query_u64(node, cudaGraphNodeTypeHost, &id);
    if (e == cudaSuccess)
        e = fe_callback_host_fn(id, &p.fn, &p.userData);
    if (e == cudaSuccess)
        *out = p;
    return e;
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
                                       struct cudaHostNodeParams *pNodeParams)
{
    return cudart_fe_ret(host_params(node, pNodeParams));
}

static cudaError_t handle_of(cudaGraphNode_t node, enum cudaGraphNodeType type,
                             void **out)
{
    uint64_t v = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = query_u64(node, type, &v);
    if (e == cudaSuccess)
        *out = (void *)(uintptr_t)v;
    return e;
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node,
                                            cudaGraph_t *pGraph)
{
    return cudart_fe_ret(
        handle_of(node, cudaGraphNodeTypeGraph, (void **)pGraph));
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node,
                                             cudaEvent_t *event_out)
{
    return cudart_fe_ret(
        handle_of(node, cudaGraphNodeTypeEventRecord, (void **)event_out));
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node,
                                           cudaEvent_t *event_out)
{
    return cudart_fe_ret(
        handle_of(node, cudaGraphNodeTypeWaitEvent, (void **)event_out));
}

/* Kernel node attributes -------------------------------------------------- */

static cudaError_t get_attr(cudaGraphNode_t node, cudaKernelNodeAttrID attr,
                            cudaKernelNodeAttrValue *out)
{
    struct apigen_call c;
    cudaLaunchAttributeValue v;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(node));
    apigen_put_u32(&c, (uint32_t)attr);
    e = cudart_fe_run(&c, CUDART_OP_KERNEL_NODE_GET_ATTR, APIGEN_DEVICE);
    if (e == cudaSuccess)
        fe_get_launch_attr(&c, attr, &v);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = v;
    return e;
}

cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t hNode,
                                            cudaKernelNodeAttrID attr,
                                            cudaKernelNodeAttrValue *value_out)
{
    return cudart_fe_ret(get_attr(hNode, attr, value_out));
}

static cudaError_t set_attr(cudaGraphNode_t node, cudaKernelNodeAttrID attr,
                            const cudaKernelNodeAttrValue *v)
{
    struct apigen_call c;
    if (v == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(node));
    fe_put_launch_attr(&c, attr, v);
    e = cudart_fe_run(&c, CUDART_OP_KERNEL_NODE_SET_ATTR, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaGraphKernelNodeSetAttribute(
    cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
    const cudaKernelNodeAttrValue *value)
{
    return cudart_fe_ret(set_attr(hNode, attr, value));
}

cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t hDst,
                                              cudaGraphNode_t hSrc)
{
    return cudart_fe_ret(cudart_rpc_KERNEL_NODE_COPY_ATTRS(
        fe_handle_wire(hDst), fe_handle_wire(hSrc)));
}
