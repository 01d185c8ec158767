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
    uint8_t form;
    const uint8_t *params;
    size_t plen;
    apigen_get_u64(c, &id);
    apigen_get_u32(c, &k->gridDimX);
    apigen_get_u32(c, &k->gridDimY);
    apigen_get_u32(c, &k->gridDimZ);
    apigen_get_u32(c, &k->blockDimX);
    apigen_get_u32(c, &k->blockDimY);
    apigen_get_u32(c, &k->blockDimZ);
    apigen_get_u32(c, &k->sharedMemBytes);
    apigen_get_u8(c, &form);
    apigen_get_blob(c, &params, &plen);
    if (c->rc == 0 && (form > FORM_EXTRA || plen > CUDA_BE_PARAM_MAX))
        c->rc = GVS_E_RANGE;
    if (c->rc < 0)
        return CUDA_SUCCESS;
    struct cuda_be_kernel *kn = cuda_be_kernel_get(0, id);
    if (kn != NULL) {
        k->func = (CUfunction)kn->handle;
    } else if ((kn = cuda_be_kernel_get(1, id)) != NULL) {
        /* A library's kernel, in the current context (ctx NULL). */
        k->kern = (CUkernel)kn->handle;
    } else {
        return CUDA_ERROR_INVALID_HANDLE;
    }
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

/* Memcpy: device memory on both sides, checked to be so. */
static CUresult get_memcpy(struct apigen_call *c, CUDA_MEMCPY_NODE_PARAMS *m)
{
    CUDA_MEMCPY3D *p = &m->copyParams;
    uint64_t dst, dpitch, dheight, src, spitch, sheight, w, h, d;
    apigen_get_u64(c, &dst);
    apigen_get_u64(c, &dpitch);
    apigen_get_u64(c, &dheight);
    apigen_get_u64(c, &src);
    apigen_get_u64(c, &spitch);
    apigen_get_u64(c, &sheight);
    apigen_get_u64(c, &w);
    apigen_get_u64(c, &h);
    apigen_get_u64(c, &d);
    if (c->rc < 0)
        return CUDA_SUCCESS;
    p->dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p->dstDevice = dst;
    p->dstPitch = dpitch;
    p->dstHeight = dheight;
    p->srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p->srcDevice = src;
    p->srcPitch = spitch;
    p->srcHeight = sheight;
    p->WidthInBytes = w;
    p->Height = h;
    p->Depth = d;
    /* Every row of the box lies in the rectangle of rows it spans. */
    uint64_t drows = box_rows(dheight, h, d), srows = box_rows(sheight, h, d);
    if (w == 0 || drows == 0 || srows == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_be_check_device_rect(dst, dpitch, w, drows);
    return r == CUDA_SUCCESS ? cuda_be_check_device_rect(src, spitch, w, srows)
                             : r;
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
    if (m->elementSize != 1 && m->elementSize != 2 && m->elementSize != 4)
        return CUDA_ERROR_INVALID_VALUE;
    if (w > UINT64_MAX / m->elementSize)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bytes = w * m->elementSize;
    return cuda_be_check_device_rect(dst, h > 1 ? pitch : bytes, bytes, h);
}

CUresult cuda_be_get_node_params(struct apigen_call *c,
                                 struct cuda_be_node_buf *nb,
                                 CUgraphNodeParams *p)
{
    uint8_t type;
    uint64_t id;
    memset(p, 0, sizeof(*p));
    nb->args = NULL;
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
    case CU_GRAPH_NODE_TYPE_HOST:
        apigen_get_u64(c, &id);
        if (c->rc < 0)
            return CUDA_SUCCESS;
        return cuda_be_host_node(id, &p->host);
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
    default:
        c->rc = GVS_E_PROTO;
        return CUDA_SUCCESS;
    }
}

void cuda_be_node_buf_free(struct cuda_be_node_buf *nb)
{
    gvs_free(nb->args);
    nb->args = NULL;
}
