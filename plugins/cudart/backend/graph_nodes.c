/*
 * Graph nodes' parameters (40-graphs.api): decoded into CUDA's structures
 * with every id, device range and kernel layout checked, then used to
 * add a node or to set a node's parameters in its graph or in an
 * executable graph.
 */
#include "graphs.h"

#include <string.h>

#include "gvs/err.h"
#include "kernels.h"
#include "mem3d.h"
#include "objects.h"

struct node_params {
    uint8_t type;
    struct cudaKernelNodeParams kernel;
    uint64_t block[(BE_PARAM_MAX + 7) / 8]; /* aligned parameter block */
    void *argv_stack[BE_ARGV_ON_STACK];
    struct cudaMemcpy3DParms copy;
    struct cudaMemsetParams set;
    struct cudaHostNodeParams host;
    cudaGraph_t child;
    cudaEvent_t event;
    void *dptr; /* mem free */
};

static int get_kernel(struct gvs_call *call, struct apigen_call *c,
                      struct node_params *p, cudaError_t *e)
{
    const struct be_func *f;
    struct cudaKernelNodeParams *k = &p->kernel;
    const uint8_t *blob;
    size_t len;
    int rc = be_get_kernel(call, c, &f);
    if (rc < 0)
        return rc;
    apigen_get_u32(c, &k->gridDim.x);
    apigen_get_u32(c, &k->gridDim.y);
    apigen_get_u32(c, &k->gridDim.z);
    apigen_get_u32(c, &k->blockDim.x);
    apigen_get_u32(c, &k->blockDim.y);
    apigen_get_u32(c, &k->blockDim.z);
    apigen_get_u32(c, &k->sharedMemBytes);
    apigen_get_blob(c, &blob, &len);
    if (c->rc < 0)
        return c->rc;
    if (f->status != cudaSuccess) {
        *e = f->status;
        return 0;
    }
    if (len != f->param_bytes)
        return GVS_E_PROTO;
    memcpy(p->block, blob, len);
    k->func = (void *)f->kernel;
    k->kernelParams = be_kernel_argv(f, p->block, p->argv_stack);
    if (k->kernelParams == NULL)
        *e = cudaErrorMemoryAllocation;
    return 0;
}

static void get_memcpy(struct apigen_call *c, struct node_params *p,
                       cudaError_t *e)
{
    struct gvs_remote_side dst, src;
    struct gvs_remote_box b;
    gvs_remote_get_node_side(c, &dst);
    gvs_remote_get_node_side(c, &src);
    gvs_remote_get_box(c, &b);
    if (c->rc < 0 || *e != cudaSuccess)
        return;
    *e = gvs_remote_box_bytes(&b) == 0 ? cudaErrorInvalidValue
                               : be_copy_params(&dst, &src, &b, &p->copy);
}

/* The rows a memset node writes must lie in device memory. */
static void get_memset(struct apigen_call *c, struct node_params *p,
                       cudaError_t *e)
{
    struct cudaMemsetParams *s = &p->set;
    uint64_t dst, pitch, width, height;
    apigen_get_u64(c, &dst);
    apigen_get_u64(c, &pitch);
    apigen_get_u32(c, &s->value);
    apigen_get_u32(c, &s->elementSize);
    apigen_get_u64(c, &width);
    apigen_get_u64(c, &height);
    if (c->rc < 0 || *e != cudaSuccess)
        return;
    *s = (struct cudaMemsetParams){(void *)(uintptr_t)dst, (size_t)pitch,
                                   s->value, s->elementSize, (size_t)width,
                                   (size_t)height};
    struct gvs_remote_side side = {GVS_RSIDE_DEVICE, dst, pitch, height,
                                   0, 0, 0};
    struct gvs_remote_box b = {0, height, 1};
    if ((s->elementSize != 1 && s->elementSize != 2 && s->elementSize != 4) ||
        __builtin_mul_overflow(width, s->elementSize, &b.w) ||
        gvs_remote_box_bytes(&b) == 0)
        *e = cudaErrorInvalidValue;
    else
        *e = be_check_linear(&side, &b);
    if (*e == cudaErrorInvalidPitchValue)
        *e = cudaErrorInvalidValue;
}

/* Decodes u8 type and that type's parameters (40-graphs.api).  Returns
 * a negative GVS_E_* for a malformed request; CUDA-level refusals (an
 * unknown id, memory that is not the device's) go to *e. */
static int get_params(struct gvs_call *call, struct apigen_call *c,
                      struct node_params *p, cudaError_t *e)
{
    uint64_t id;
    apigen_get_u8(c, &p->type);
    if (c->rc < 0)
        return c->rc;
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        return get_kernel(call, c, p, e);
    case cudaGraphNodeTypeMemcpy:
        get_memcpy(c, p, e);
        break;
    case cudaGraphNodeTypeMemset:
        get_memset(c, p, e);
        break;
    case cudaGraphNodeTypeHost:
        apigen_get_u64(c, &id);
        if (c->rc == 0 && *e == cudaSuccess)
            *e = be_callback_node(call, id, &p->host);
        break;
    case cudaGraphNodeTypeGraph: {
        apigen_get_u64(c, &id);
        struct gvs_remote_graph *g = be_remote->graph_get(id);
        if (g == NULL)
            *e = cudaErrorInvalidValue;
        else
            p->child = g->g;
        break;
    }
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent:
        apigen_get_u64(c, &id);
        if (c->rc == 0 && *e == cudaSuccess)
            *e = be_event(id, &p->event);
        break;
    case cudaGraphNodeTypeMemFree:
        /* CUDA checks it against the graph's allocations and never
         * reads through it. */
        apigen_get_u64(c, &id);
        p->dptr = (void *)(uintptr_t)id;
        break;
    case cudaGraphNodeTypeEmpty:
        break;
    default:
        return GVS_E_PROTO;
    }
    return c->rc;
}

/* Frees what CUDA did not take: a host node's record it took was given
 * to its graph already. */
static void params_free(struct node_params *p)
{
    if (p->type == cudaGraphNodeTypeKernel && p->kernel.kernelParams != NULL)
        be_kernel_argv_free(p->kernel.kernelParams, p->argv_stack);
    if (p->type == cudaGraphNodeTypeHost)
        be_callback_drop(&p->host);
}

static cudaError_t add(cudaGraphNode_t *out, cudaGraph_t g,
                       const cudaGraphNode_t *deps, size_t n,
                       const struct node_params *p)
{
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        return cudaGraphAddKernelNode(out, g, deps, n, &p->kernel);
    case cudaGraphNodeTypeMemcpy:
        return cudaGraphAddMemcpyNode(out, g, deps, n, &p->copy);
    case cudaGraphNodeTypeMemset:
        return cudaGraphAddMemsetNode(out, g, deps, n, &p->set);
    case cudaGraphNodeTypeHost:
        return cudaGraphAddHostNode(out, g, deps, n, &p->host);
    case cudaGraphNodeTypeGraph:
        return cudaGraphAddChildGraphNode(out, g, deps, n, p->child);
    case cudaGraphNodeTypeEventRecord:
        return cudaGraphAddEventRecordNode(out, g, deps, n, p->event);
    case cudaGraphNodeTypeWaitEvent:
        return cudaGraphAddEventWaitNode(out, g, deps, n, p->event);
    case cudaGraphNodeTypeMemFree:
        return cudaGraphAddMemFreeNode(out, g, deps, n, p->dptr);
    default:
        return cudaGraphAddEmptyNode(out, g, deps, n);
    }
}

static cudaError_t set(cudaGraphNode_t n, const struct node_params *p)
{
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        return cudaGraphKernelNodeSetParams(n, &p->kernel);
    case cudaGraphNodeTypeMemcpy:
        return cudaGraphMemcpyNodeSetParams(n, &p->copy);
    case cudaGraphNodeTypeMemset:
        return cudaGraphMemsetNodeSetParams(n, &p->set);
    case cudaGraphNodeTypeHost:
        return cudaGraphHostNodeSetParams(n, &p->host);
    case cudaGraphNodeTypeEventRecord:
        return cudaGraphEventRecordNodeSetEvent(n, p->event);
    case cudaGraphNodeTypeWaitEvent:
        return cudaGraphEventWaitNodeSetEvent(n, p->event);
    default:
        return cudaErrorInvalidValue;
    }
}

static cudaError_t exec_set(cudaGraphExec_t x, cudaGraphNode_t n,
                            const struct node_params *p)
{
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        return cudaGraphExecKernelNodeSetParams(x, n, &p->kernel);
    case cudaGraphNodeTypeMemcpy:
        return cudaGraphExecMemcpyNodeSetParams(x, n, &p->copy);
    case cudaGraphNodeTypeMemset:
        return cudaGraphExecMemsetNodeSetParams(x, n, &p->set);
    case cudaGraphNodeTypeHost:
        return cudaGraphExecHostNodeSetParams(x, n, &p->host);
    case cudaGraphNodeTypeGraph:
        return cudaGraphExecChildGraphNodeSetParams(x, n, p->child);
    case cudaGraphNodeTypeEventRecord:
        return cudaGraphExecEventRecordNodeSetEvent(x, n, p->event);
    case cudaGraphNodeTypeWaitEvent:
        return cudaGraphExecEventWaitNodeSetEvent(x, n, p->event);
    default:
        return cudaErrorInvalidValue;
    }
}

int be_add_node(struct gvs_call *call, struct apigen_call *c,
                struct gvs_remote_graph *g, const cudaGraphNode_t *deps,
                uint32_t ndeps, cudaGraphNode_t *out, cudaError_t *e)
{
    struct node_params p = {0};
    int rc = get_params(call, c, &p, e);
    if (rc == 0)
        rc = apigen_end(c);
    if (rc == 0 && *e == cudaSuccess)
        *e = cudart_be_enter(call);
    if (rc == 0 && *e == cudaSuccess &&
        (*e = add(out, g->g, deps, ndeps, &p)) == cudaSuccess &&
        p.type == cudaGraphNodeTypeHost)
        be_callback_give(&p.host, g->g);
    params_free(&p);
    return rc;
}

int be_set_node_params(struct gvs_call *call, struct apigen_call *c,
                       cudaGraphExec_t exec, struct gvs_remote_node *node,
                       cudaError_t *e)
{
    struct node_params p = {0};
    int rc = get_params(call, c, &p, e);
    if (rc == 0)
        rc = apigen_end(c);
    if (rc == 0 && *e == cudaSuccess)
        *e = cudart_be_enter(call);
    if (rc == 0 && *e == cudaSuccess &&
        (*e = exec != NULL ? exec_set(exec, node->n, &p)
                           : set(node->n, &p)) == cudaSuccess &&
        p.type == cudaGraphNodeTypeHost)
        be_callback_give(&p.host, exec != NULL ? NULL : node->graph->g);
    params_free(&p);
    return rc;
}
