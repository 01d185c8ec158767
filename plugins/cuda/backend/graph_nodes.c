/* Graph nodes' parameters off the wire (cuda.api, "CUDA graphs") into
 * the driver's CUgraphNodeParams, for adding a node and for setting a
 * node's parameters in its graph or in an executable graph. */
#include "graph.h"

#include <string.h>

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"

#define FORM_PARAMS 0
#define FORM_EXTRA 1

/* Kernel: the block is copied aligned into nb, the argument pointers
 * point into it (the driver copies the arguments when it takes them). */
static CUresult get_kernel(struct apigen_call *c, struct cuda_be_node_buf *nb,
                           CUDA_KERNEL_NODE_PARAMS_v3 *k)
{
    uint64_t id;
    uint8_t named, form;
    const uint8_t *params;
    size_t plen;
    apigen_get_u64(c, &id);
    apigen_get_u8(c, &named);
    apigen_get_u32(c, &k->gridDimX);
    apigen_get_u32(c, &k->gridDimY);
    apigen_get_u32(c, &k->gridDimZ);
    apigen_get_u32(c, &k->blockDimX);
    apigen_get_u32(c, &k->blockDimY);
    apigen_get_u32(c, &k->blockDimZ);
    apigen_get_u32(c, &k->sharedMemBytes);
    apigen_get_u8(c, &form);
    apigen_get_blob(c, &params, &plen);
    if (c->rc == 0 &&
        (named > 1 || form > FORM_EXTRA || plen > CUDA_BE_PARAM_MAX))
        c->rc = GVS_E_RANGE;
    if (c->rc < 0)
        return CUDA_SUCCESS;
    /* In the field the program set, as the driver keeps it: a library's
     * kernel named as the kernel runs in the current context (ctx NULL);
     * the driver takes a kernel where it takes a function. */
    struct cuda_be_kernel *kn = cuda_be_kernel_get(0, id);
    if (kn == NULL && (kn = cuda_be_kernel_get(1, id)) != NULL && named)
        k->kern = (CUkernel)kn->handle;
    else if (kn != NULL)
        k->func = (CUfunction)kn->handle;
    else
        return CUDA_ERROR_INVALID_HANDLE;
    if (form == FORM_PARAMS && kn->status != CUDA_SUCCESS)
        return kn->status;
    if (form == FORM_PARAMS && plen != kn->param_bytes) {
        c->rc = GVS_E_PROTO;
        return CUDA_SUCCESS;
    }
    memcpy(nb->block, params, plen);
    nb->size = plen;
    if (form == FORM_EXTRA) {
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, nb->block,
                         CU_LAUNCH_PARAM_BUFFER_SIZE, &nb->size,
                         CU_LAUNCH_PARAM_END};
        memcpy(nb->extra, extra, sizeof(extra));
        k->extra = nb->extra;
        return CUDA_SUCCESS;
    }
    nb->args = gvs_calloc(kn->nparams + 1, sizeof(void *));
    if (nb->args == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < kn->nparams; i++)
        nb->args[i] = nb->block + kn->params[i].offset;
    k->kernelParams = nb->args;
    return CUDA_SUCCESS;
}

/* The rows a box of depth slices of height rows spans, slice_rows rows
 * a slice (which must hold height), from its first row to its last; 0
 * when that overflows or the box is empty. */
static uint64_t box_rows(uint64_t slice_rows, uint64_t height,
                         uint64_t depth)
{
    uint64_t rows;
    if (height == 0 || depth == 0 || (depth > 1 && slice_rows < height) ||
        __builtin_mul_overflow(depth - 1, slice_rows, &rows) ||
        __builtin_add_overflow(rows, height, &rows))
        return 0;
    return rows;
}

/* A side in host memory shared with the backend: all its rows in one
 * region the session shared, put into the node as the worker's mapping. */
static CUresult shared_side(uint64_t first, uint64_t pitch, uint64_t width,
                            uint64_t rows, CUmemorytype *type, const void **host)
{
    uint64_t len;
    if (__builtin_mul_overflow(rows - 1, pitch, &len) ||
        __builtin_add_overflow(len, width, &len))
        return CUDA_ERROR_INVALID_VALUE;
    *host = cuda_be_remote->shared_host(first, len);
    *type = CU_MEMORYTYPE_HOST;
    return *host != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Memcpy: device memory, checked to be so, named unified where the
 * program did; or host memory shared with the backend. */
static CUresult get_memcpy(struct apigen_call *c, CUDA_MEMCPY_NODE_PARAMS *m)
{
    CUDA_MEMCPY3D *p = &m->copyParams;
    uint64_t dst, dpitch, dheight, src, spitch, sheight, w, h, d;
    uint8_t unified;
    apigen_get_u64(c, &dst);
    apigen_get_u64(c, &dpitch);
    apigen_get_u64(c, &dheight);
    apigen_get_u64(c, &src);
    apigen_get_u64(c, &spitch);
    apigen_get_u64(c, &sheight);
    apigen_get_u64(c, &w);
    apigen_get_u64(c, &h);
    apigen_get_u64(c, &d);
    apigen_get_u8(c, &unified);
    if (c->rc == 0 && unified > 15)
        c->rc = GVS_E_RANGE;
    if (c->rc < 0)
        return CUDA_SUCCESS;
    p->dstMemoryType = (unified & 1) ? CU_MEMORYTYPE_UNIFIED
                                     : CU_MEMORYTYPE_DEVICE;
    p->dstDevice = dst;
    p->dstPitch = dpitch;
    p->dstHeight = dheight;
    p->srcMemoryType = (unified & 2) ? CU_MEMORYTYPE_UNIFIED
                                     : CU_MEMORYTYPE_DEVICE;
    p->srcDevice = src;
    p->srcPitch = spitch;
    p->srcHeight = sheight;
    p->WidthInBytes = w;
    p->Height = h;
    p->Depth = d;
    /* The lane's context, the caller's (the frontend sends no other):
     * without one CUDA finds a side's by its address, which a graph
     * allocation's has not while the graph is not running. */
    CUresult cr = CUDA_DRV(cuCtxGetCurrent)(&m->copyCtx);
    if (cr != CUDA_SUCCESS)
        return cr;
    /* Every row of the box lies in the rectangle of rows it spans. */
    uint64_t drows = box_rows(dheight, h, d), srows = box_rows(sheight, h, d);
    if (w == 0 || drows == 0 || srows == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = (unified & 4) ? shared_side(dst, dpitch, w, drows, &p->dstMemoryType,
                                             (const void **)&p->dstHost)
                               : cuda_be_check_device_rect(dst, dpitch, w, drows);
    if (r == CUDA_SUCCESS)
        r = (unified & 8) ? shared_side(src, spitch, w, srows, &p->srcMemoryType, &p->srcHost)
                          : cuda_be_check_device_rect(src, spitch, w, srows);
    if (r == CUDA_SUCCESS && (unified & 4))
        p->dstDevice = 0;
    if (r == CUDA_SUCCESS && (unified & 8))
        p->srcDevice = 0;
    return r;
}

static CUresult get_memset(struct apigen_call *c,
                           CUDA_MEMSET_NODE_PARAMS_v2 *m)
{
    uint64_t dst, pitch, w, h;
    apigen_get_u64(c, &dst);
    apigen_get_u64(c, &pitch);
    apigen_get_u32(c, &m->value);
    apigen_get_u32(c, &m->elementSize);
    apigen_get_u64(c, &w);
    apigen_get_u64(c, &h);
    if (c->rc < 0)
        return CUDA_SUCCESS;
    m->dst = dst;
    m->pitch = pitch;
    m->width = w;
    m->height = h;
    CUresult cr = CUDA_DRV(cuCtxGetCurrent)(&m->ctx);
    if (cr != CUDA_SUCCESS)
        return cr;
    if (m->elementSize != 1 && m->elementSize != 2 && m->elementSize != 4)
        return CUDA_ERROR_INVALID_VALUE;
    if (w > UINT64_MAX / m->elementSize)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bytes = w * m->elementSize;
    return cuda_be_check_device_rect(dst, h > 1 ? pitch : bytes, bytes, h);
}

/* Memory alloc: the pool's properties and access descriptors, checked
 * by CUDA (which reads no pointer of them but the descriptors). */
static CUresult get_mem_alloc(struct apigen_call *c,
                              struct cuda_be_node_buf *nb,
                              CUDA_MEM_ALLOC_NODE_PARAMS_v2 *a)
{
    int32_t type, handles, ltype, lid;
    uint64_t max, bytes;
    uint32_t usage, n;
    apigen_get_i32(c, &type);
    apigen_get_i32(c, &handles);
    apigen_get_i32(c, &ltype);
    apigen_get_i32(c, &lid);
    apigen_get_u64(c, &max);
    apigen_get_u32(c, &usage);
    apigen_get_u64(c, &bytes);
    apigen_get_u32(c, &n);
    if (c->rc == 0 && (n > CUDA_BE_MAX_ACCESS || usage > 0xffff))
        c->rc = GVS_E_RANGE;
    for (uint32_t i = 0; c->rc == 0 && i < n; i++) {
        int32_t t, id, f;
        apigen_get_i32(c, &t);
        apigen_get_i32(c, &id);
        apigen_get_i32(c, &f);
        nb->access[i].location.type = (CUmemLocationType)t;
        nb->access[i].location.id = id;
        nb->access[i].flags = (CUmemAccess_flags)f;
    }
    if (c->rc < 0)
        return CUDA_SUCCESS;
    a->poolProps.allocType = (CUmemAllocationType)type;
    a->poolProps.handleTypes = (CUmemAllocationHandleType)handles;
    a->poolProps.location.type = (CUmemLocationType)ltype;
    a->poolProps.location.id = lid;
    a->poolProps.maxSize = max;
    a->poolProps.usage = (unsigned short)usage;
    a->accessDescs = n > 0 ? nb->access : NULL;
    a->accessDescCount = n;
    a->bytesize = bytes;
    return CUDA_SUCCESS;
}

/* Conditional: CUDA fills the bodies into nb. */
static CUresult get_conditional(struct apigen_call *c,
                                struct cuda_be_node_buf *nb,
                                CUDA_CONDITIONAL_NODE_PARAMS *k)
{
    uint64_t handle;
    uint32_t type, size;
    apigen_get_u64(c, &handle);
    apigen_get_u32(c, &type);
    apigen_get_u32(c, &size);
    if (c->rc == 0 && (size == 0 || size > CUDA_BE_COND_SIZE_MAX))
        c->rc = GVS_E_RANGE;
    if (c->rc < 0)
        return CUDA_SUCCESS;
    nb->bodies = gvs_calloc(size, sizeof(*nb->bodies));
    if (nb->bodies == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    k->handle = handle;
    k->type = (CUgraphConditionalNodeType)type;
    k->size = size;
    k->phGraph_out = nb->bodies;
    /* The node runs in the lane's context, the handle's. */
    return CUDA_DRV(cuCtxGetCurrent)(&k->ctx);
}

/* Batch memory operations: the context of an id, the operations
 * checked as a stream's (memops.c). */
static CUresult get_memops(struct apigen_call *c, struct cuda_be_node_buf *nb,
                           CUDA_BATCH_MEM_OP_NODE_PARAMS_v2 *m)
{
    uint64_t ctx;
    uint32_t count = 0;
    apigen_get_u64(c, &ctx);
    apigen_get_u32(c, &m->flags);
    if (c->rc < 0 || cuda_be_get_memops(c, &nb->memops, &count) < 0)
        return CUDA_SUCCESS;
    m->count = count;
    m->paramArray = nb->memops;
    CUresult r = cuda_be_ctx(ctx, &m->ctx);
    return r == CUDA_SUCCESS ? cuda_be_check_memops(nb->memops, count) : r;
}

CUresult cuda_be_graph_mem_take(const CUgraphNodeParams *p)
{
    if (p->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        return CUDA_SUCCESS;
    return cuda_be_remote->quota_take(p->alloc.bytesize) == 0
               ? CUDA_SUCCESS
               : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Counted from the node's making, as the runtime's are (docs/cudart.md,
 * "Memory quota"): the graph holds the address range, and the memory
 * while it runs, until the graph is destroyed. */
void cuda_be_graph_mem_settle(const CUgraphNodeParams *p, CUresult r,
                              void *cg)
{
    if (p->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        return;
    cuda_be_remote->quota_settle(r == CUDA_SUCCESS, GVS_RQ_PTR,
                                 p->alloc.dptr, cuda_be_quota_device(),
                                 (uint64_t)(uintptr_t)cg, p->alloc.bytesize,
                                 p->alloc.bytesize);
    if (r == CUDA_SUCCESS)
        cuda_be_remote->graph_range_add(p->alloc.dptr, p->alloc.bytesize);
}

void cuda_be_node_reply(struct apigen_call *c, CUresult r, uint64_t nid,
                        const CUgraphNodeParams *p)
{
    const CUDA_CONDITIONAL_NODE_PARAMS *k = &p->conditional;
    /* The bodies are the node's: ids, not the session's to destroy.  One
     * that gets none fails the call; the node stays (CUDA takes it back
     * only by destroying it). */
    for (uint32_t i = 0; r == CUDA_SUCCESS &&
                         p->type == CU_GRAPH_NODE_TYPE_CONDITIONAL &&
                         i < k->size;
         i++)
        if (cuda_be_remote->graph_of(k->phGraph_out[i], 0) == NULL)
            r = CUDA_ERROR_OUT_OF_MEMORY;
    cuda_be_reply_id(c, r, nid);
    if (r != CUDA_SUCCESS)
        return;
    if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        apigen_put_u64(c, p->alloc.dptr);
    if (p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
        return;
    apigen_put_u32(c, k->size);
    for (uint32_t i = 0; i < k->size; i++)
        apigen_put_u64(c, cuda_be_remote->graph_known(k->phGraph_out[i])->id);
}

CUresult cuda_be_get_node_params(struct apigen_call *c,
                                 struct cuda_be_node_buf *nb,
                                 CUgraphNodeParams *p)
{
    uint8_t type;
    uint64_t id;
    memset(p, 0, sizeof(*p));
    nb->args = NULL;
    nb->bodies = NULL;
    nb->host = NULL;
    nb->memops = NULL;
    apigen_get_u8(c, &type);
    if (c->rc < 0)
        return CUDA_SUCCESS;
    p->type = (CUgraphNodeType)type;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return get_kernel(c, nb, &p->kernel);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return get_memcpy(c, &p->memcpy);
    case CU_GRAPH_NODE_TYPE_MEMSET:
        return get_memset(c, &p->memset);
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        apigen_get_u64(c, &id);
        if (c->rc < 0)
            return CUDA_SUCCESS;
        /* eventWait and eventRecord are one CUevent at the same place. */
        return cuda_be_event(id, &p->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_HOST: {
        apigen_get_u64(c, &id);
        if (c->rc < 0)
            return CUDA_SUCCESS;
        CUresult r = cuda_be_host_node(id, &p->host);
        if (r == CUDA_SUCCESS)
            nb->host = p->host.userData;
        return r;
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: {
        apigen_get_u64(c, &id);
        if (c->rc < 0)
            return CUDA_SUCCESS;
        struct gvs_remote_graph *g = cuda_be_remote->graph_get(id);
        if (g == NULL)
            return CUDA_ERROR_INVALID_VALUE;
        p->graph.graph = g->g;
        return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        return get_mem_alloc(c, nb, &p->alloc);
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        apigen_get_u64(c, &id);
        p->free.dptr = id;
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        return get_conditional(c, nb, &p->conditional);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        return get_memops(c, nb, &p->memOp);
    default:
        c->rc = GVS_E_PROTO;
        return CUDA_SUCCESS;
    }
}

void cuda_be_node_buf_free(struct cuda_be_node_buf *nb)
{
    gvs_free(nb->args);
    nb->args = NULL;
    gvs_free(nb->bodies);
    nb->bodies = NULL;
    if (nb->host != NULL)
        cuda_be_remote->callback_free(nb->host);
    nb->host = NULL;
    gvs_free(nb->memops);
    nb->memops = NULL;
}
