/*
 * Graph memory: memory alloc nodes (the free node is a node type of
 * graph_nodes.c) and the device's graph memory attributes
 * (40-graphs.api).
 */
#include "graphs.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

int be_get_mem_alloc(struct apigen_call *c, struct cudaMemAllocNodeParams *p,
                     struct cudaMemAccessDesc *acc)
{
    int32_t type, handles, ltype;
    uint64_t max, bytes;
    uint32_t usage, n;
    *p = (struct cudaMemAllocNodeParams){0};
    apigen_get_i32(c, &type);
    apigen_get_i32(c, &handles);
    apigen_get_i32(c, &ltype);
    apigen_get_i32(c, &p->poolProps.location.id);
    apigen_get_u64(c, &max);
    apigen_get_u32(c, &usage);
    apigen_get_u64(c, &bytes);
    apigen_get_u32(c, &n);
    if (c->rc == 0 && (n > BE_MAX_ACCESS || usage > 0xffff ||
                       max > SIZE_MAX || bytes > SIZE_MAX))
        c->rc = GVS_E_RANGE;
    for (uint32_t i = 0; c->rc == 0 && i < n; i++) {
        int32_t t, f;
        apigen_get_i32(c, &t);
        apigen_get_i32(c, &acc[i].location.id);
        apigen_get_i32(c, &f);
        acc[i].location.type = (enum cudaMemLocationType)t;
        acc[i].flags = (enum cudaMemAccessFlags)f;
    }
    if (c->rc < 0)
        return c->rc;
    p->poolProps.allocType = (enum cudaMemAllocationType)type;
    p->poolProps.handleTypes = (enum cudaMemAllocationHandleType)handles;
    p->poolProps.location.type = (enum cudaMemLocationType)ltype;
    p->poolProps.maxSize = (size_t)max;
    p->poolProps.usage = (unsigned short)usage;
    p->bytesize = (size_t)bytes;
    p->accessDescs = n > 0 ? acc : NULL;
    p->accessDescCount = n;
    return 0;
}

void be_put_mem_alloc(struct apigen_call *c,
                      const struct cudaMemAllocNodeParams *p)
{
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
}

int cudart_be_graph_add_mem_alloc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, nid = 0;
    uint32_t ndeps;
    cudaError_t e = cudaSuccess;
    struct cudaMemAllocNodeParams p;
    struct cudaMemAccessDesc *acc = gvs_calloc(BE_MAX_ACCESS, sizeof(*acc));
    if (acc == NULL)
        return GVS_E_NOMEM;
    apigen_get_u64(&c, &id);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(id);
    if (g == NULL)
        e = cudaErrorInvalidValue;
    cudaGraphNode_t *deps = be_get_nodes(&c, g, &ndeps, &e), node = NULL;
    if (c.rc == 0)
        be_get_mem_alloc(&c, &p, acc);
    if (apigen_end(&c) == 0) {
        if (e == cudaSuccess)
            e = cudart_be_enter(call);
        /* Counted from the node's making: the graph holds its address
         * range, and the memory while it runs, until freed or destroyed
         * (docs/cudart.md, "Memory quota"). */
        if (e == cudaSuccess)
            e = be_quota_take(p.bytesize);
        if (e == cudaSuccess) {
            e = cudaGraphAddMemAllocNode(&node, g->g, deps, ndeps, &p);
            if (e == cudaSuccess && (nid = be_remote->node_id(g, node)) == 0) {
                (void)cudaGraphDestroyNode(node);
                e = cudaErrorMemoryAllocation;
            }
            be_quota_settle(call, e, BE_QUOTA_PTR,
                            (uint64_t)(uintptr_t)p.dptr,
                            (uint64_t)(uintptr_t)g->g, p.bytesize,
                            p.bytesize);
        }
        apigen_put_i32(&c, e);
        if (e == cudaSuccess) {
            be_remote->graph_range_add((uint64_t)(uintptr_t)p.dptr,
                                       p.bytesize);
            apigen_put_u64(&c, nid);
            apigen_put_u64(&c, (uint64_t)(uintptr_t)p.dptr);
        }
    }
    be_remote->graphs_unlock();
    gvs_free(deps);
    gvs_free(acc);
    return c.rc;
}

/* Only the high watermarks can be set (to 0): CUDA checks that, and
 * reads a 64-bit value for both. */
int cudart_be_cudadevicesetgraphmemattribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t device, attr;
    uint64_t value;
    apigen_get_i32(&c, &device);
    apigen_get_i32(&c, &attr);
    apigen_get_u64(&c, &value);
    if (apigen_end(&c) < 0)
        return c.rc;
    apigen_put_i32(&c, cudaDeviceSetGraphMemAttribute(
                           device, (enum cudaGraphMemAttributeType)attr,
                           &value));
    return c.rc;
}
