/*
 * Graph memory: memory alloc and free nodes, and the device's graph
 * memory attributes.  An alloc node's address is device memory for the
 * program from the moment the node is made (the graph reserves it for
 * its lifetime), so it enters the allocation map then: cudaMemcpyDefault
 * and the graph's own memcpy nodes see it as the device's.
 */
#include "graphs.h"

#include <string.h>

#include <pthread.h>

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

/* The backend's bound on access descriptors (graph_mem.c). */
#define ACCESS_MAX 1024u

static cudaError_t put_alloc(struct apigen_call *c,
                             const struct cudaMemAllocNodeParams *p)
{
    if (p->accessDescCount > ACCESS_MAX ||
        (p->accessDescCount > 0 && p->accessDescs == NULL))
        return cudaErrorInvalidValue;
    apigen_put_i32(c, p->poolProps.allocType);
    apigen_put_i32(c, p->poolProps.handleTypes);
    apigen_put_i32(c, p->poolProps.location.type);
    apigen_put_i32(c, p->poolProps.location.id);
    apigen_put_u64(c, p->poolProps.maxSize);
    apigen_put_u32(c, p->poolProps.usage);
    apigen_put_u64(c, p->bytesize);
    apigen_put_u32(c, (uint32_t)p->accessDescCount);
    for (size_t i = 0; i < p->accessDescCount; i++) {
        apigen_put_i32(c, p->accessDescs[i].location.type);
        apigen_put_i32(c, p->accessDescs[i].location.id);
        apigen_put_i32(c, p->accessDescs[i].flags);
    }
    return cudaSuccess;
}

cudaError_t fe_graph_add_alloc(cudaGraphNode_t *out, cudaGraph_t graph,
                               const cudaGraphNode_t *deps, size_t n,
                               struct cudaMemAllocNodeParams *p)
{
    struct apigen_call c;
    uint64_t node = 0, dptr = 0;
    if (out == NULL || p == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_handle_wire(graph));
    e = fe_put_nodes(&c, deps, n);
    if (e == cudaSuccess)
        e = put_alloc(&c, p);
    if (e != cudaSuccess)
        return cudart_fe_end(&c, e);
    e = cudart_fe_run(&c, CUDART_OP_GRAPH_ADD_MEM_ALLOC, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &node);
        apigen_get_u64(&c, &dptr);
    }
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    p->dptr = (void *)(uintptr_t)dptr;
    *out = (cudaGraphNode_t)(uintptr_t)node;
    /* Already known: a graph freed and its range handed out again. */
    if (!fe_is_device_ptr(p->dptr) && fe_mem_track(p->dptr, p->bytesize) < 0)
        return cudaErrorMemoryAllocation;
    return cudaSuccess;
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode,
                                     cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies,
                                     size_t numDependencies,
                                     struct cudaMemAllocNodeParams *nodeParams)
{
    return cudart_fe_ret(fe_graph_add_alloc(pGraphNode, graph, pDependencies,
                                            numDependencies, nodeParams));
}

/* Access descriptors handed out, by node id: valid until the node is
 * asked again. */
static pthread_mutex_t access_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map access_out;

static struct cudaMemAccessDesc *access_keep(cudaGraphNode_t node, size_t n)
{
    struct cudaMemAccessDesc *v = gvs_calloc(n + 1, sizeof(*v));
    if (v == NULL)
        return NULL;
    pthread_mutex_lock(&access_lock);
    void *old = gvs_u64map_remove(&access_out, fe_handle_wire(node));
    if (gvs_u64map_put(&access_out, fe_handle_wire(node), v) < 0) {
        gvs_free(v);
        v = NULL;
    }
    pthread_mutex_unlock(&access_lock);
    gvs_free(old);
    return v;
}

static cudaError_t alloc_params(cudaGraphNode_t node,
                                struct cudaMemAllocNodeParams *out)
{
    struct apigen_call c;
    struct cudaMemAllocNodeParams p;
    struct cudaMemAccessDesc *acc = NULL;
    int32_t type = 0, handles = 0, ltype = 0, id = 0;
    uint64_t dptr = 0, max = 0, bytes = 0;
    uint32_t usage = 0, n = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    memset(&p, 0, sizeof(p));
    cudaError_t e = fe_node_query(&c, node, cudaGraphNodeTypeMemAlloc);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &dptr);
        apigen_get_i32(&c, &type);
        apigen_get_i32(&c, &handles);
        apigen_get_i32(&c, &ltype);
        apigen_get_i32(&c, &id);
        apigen_get_u64(&c, &max);
        apigen_get_u32(&c, &usage);
        apigen_get_u64(&c, &bytes);
        apigen_get_u32(&c, &n);
        if (c.rc == 0 && n > ACCESS_MAX)
            c.rc = GVS_E_PROTO;
        if (c.rc == 0 && (acc = access_keep(node, n)) == NULL)
            e = cudaErrorMemoryAllocation;
        for (uint32_t i = 0; acc != NULL && c.rc == 0 && i < n; i++) {
            int32_t t, f;
            apigen_get_i32(&c, &t);
            apigen_get_i32(&c, &acc[i].location.id);
            apigen_get_i32(&c, &f);
            acc[i].location.type = (enum cudaMemLocationType)t;
            acc[i].flags = (enum cudaMemAccessFlags)f;
        }
    }
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    p.poolProps.allocType = (enum cudaMemAllocationType)type;
    p.poolProps.handleTypes = (enum cudaMemAllocationHandleType)handles;
    p.poolProps.location.type = (enum cudaMemLocationType)ltype;
    p.poolProps.location.id = id;
    p.poolProps.maxSize = (size_t)max;
    p.poolProps.usage = (unsigned short)usage;
    p.accessDescs = n > 0 ? acc : NULL;
    p.accessDescCount = n;
    p.bytesize = (size_t)bytes;
    p.dptr = (void *)(uintptr_t)dptr;
    *out = p;
    return cudaSuccess;
}

cudaError_t cudaGraphMemAllocNodeGetParams(
    cudaGraphNode_t node, struct cudaMemAllocNodeParams *params_out)
{
    return cudart_fe_ret(alloc_params(node, params_out));
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode,
                                    cudaGraph_t graph,
                                    const cudaGraphNode_t *pDependencies,
                                    size_t numDependencies, void *dptr)
{
    struct fe_node_params p = {.type = cudaGraphNodeTypeMemFree,
                               .dptr = dptr};
    return cudart_fe_ret(fe_graph_add_node(pGraphNode, graph, pDependencies,
                                           numDependencies, &p));
}

static cudaError_t free_params(cudaGraphNode_t node, void *out)
{
    struct apigen_call c;
    uint64_t v = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = fe_node_query(&c, node, cudaGraphNodeTypeMemFree);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &v);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess) {
        void *p = (void *)(uintptr_t)v;
        memcpy(out, &p, sizeof(p));
    }
    return e;
}

cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node,
                                          void *dptr_out)
{
    return cudart_fe_ret(free_params(node, dptr_out));
}

/* Every graph memory attribute is a 64-bit value. */
cudaError_t cudaDeviceGetGraphMemAttribute(int device,
                                           enum cudaGraphMemAttributeType attr,
                                           void *value)
{
    unsigned long long v = 0;
    if (value == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = cudart_rpc_cudaDeviceGetGraphMemAttribute(device, attr, &v);
    if (e == cudaSuccess)
        memcpy(value, &v, sizeof(v));
    return cudart_fe_ret(e);
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device,
                                           enum cudaGraphMemAttributeType attr,
                                           void *value)
{
    unsigned long long v;
    if (value == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    memcpy(&v, value, sizeof(v));
    return cudart_fe_ret(
        cudart_rpc_cudaDeviceSetGraphMemAttribute(device, attr, v));
}
