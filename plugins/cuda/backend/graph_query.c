/* The rest of the graph API (cuda.api, "The rest of the graph API"):
 * node parameter queries, answered in the client's terms (a kernel as
 * the session's id of it with its arguments packed by its layout, a
 * host node as the client's callback id, graphs and events as their
 * ids); kernel node attributes; the devices' graph memory; conditional
 * handles. */
#include "graph.h"

#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"

#define FORM_PARAMS 0
#define FORM_EXTRA 1

/* The session's ids of what CUDA reports in each field (0 for none),
 * and the record whose layout packs the arguments: the kernel's, else
 * the function's; NULL when the session knows neither. */
static struct cuda_be_kernel *kernel_of(const CUDA_KERNEL_NODE_PARAMS_v2 *p,
                                        uint64_t *fid, uint64_t *kid)
{
    struct cuda_be_kernel *k = NULL, *f = NULL;
    *kid = p->kern != NULL ? cuda_be_kernel_id_of(p->kern, NULL, &k) : 0;
    *fid = p->func != NULL ? cuda_be_kernel_id_of(NULL, p->func, &f) : 0;
    return k != NULL ? k : f;
}

static CUresult put_kernel(struct apigen_call *c, CUgraphNode n)
{
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    uint8_t block[CUDA_BE_PARAM_MAX];
    const void *data = block;
    size_t len;
    uint64_t fid, kid;
    memset(&p, 0, sizeof(p));
    CUresult r = CUDA_DRV(cuGraphKernelNodeGetParams_v2)(n, &p);
    if (r != CUDA_SUCCESS)
        return r;
    struct cuda_be_kernel *k = kernel_of(&p, &fid, &kid);
    void **extra = p.extra;
    uint8_t form = p.kernelParams != NULL ? FORM_PARAMS : FORM_EXTRA;
    if (k == NULL || (form == FORM_PARAMS && k->status != CUDA_SUCCESS))
        return CUDA_ERROR_NOT_SUPPORTED;
    if (form == FORM_PARAMS) {
        memset(block, 0, k->param_bytes);
        for (uint32_t i = 0; i < k->nparams; i++)
            memcpy(block + k->params[i].offset, p.kernelParams[i],
                   k->params[i].size);
        len = k->param_bytes;
    } else if (extra != NULL && extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER &&
               extra[2] == CU_LAUNCH_PARAM_BUFFER_SIZE &&
               *(size_t *)extra[3] <= CUDA_BE_PARAM_MAX) {
        data = extra[1];
        len = *(size_t *)extra[3];
    } else {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    apigen_put_i32(c, CUDA_SUCCESS);
    apigen_put_u8(c, CU_GRAPH_NODE_TYPE_KERNEL);
    apigen_put_u64(c, fid);
    apigen_put_u64(c, kid);
    apigen_put_u32(c, p.gridDimX);
    apigen_put_u32(c, p.gridDimY);
    apigen_put_u32(c, p.gridDimZ);
    apigen_put_u32(c, p.blockDimX);
    apigen_put_u32(c, p.blockDimY);
    apigen_put_u32(c, p.blockDimZ);
    apigen_put_u32(c, p.sharedMemBytes);
    apigen_put_u8(c, form);
    apigen_put_blob(c, data, len);
    return CUDA_SUCCESS;
}

/* A copy side as the first byte it touches (positions folded in, as the
 * frontend sends them): device memory only. */
static int side(CUmemorytype type, CUdeviceptr dev, size_t x, size_t y,
                size_t z, size_t pitch, size_t height, uint64_t *out)
{
    if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED)
        return -1;
    *out = dev + x + ((uint64_t)z * height + y) * pitch;
    return 0;
}

/* A host side is the worker's mapping of shared host memory: the
 * client's address of its first byte, or -1. */
static int host_side(const void *host, size_t x, size_t y, size_t z, size_t pitch,
                     size_t height, uint64_t *out)
{
    const uint8_t *first = (const uint8_t *)host + x + ((uint64_t)z * height + y) * pitch;
    *out = host != NULL ? cuda_be_remote->shared_client(first) : 0;
    return *out != 0 ? 0 : -1;
}

static CUresult put_memcpy(struct apigen_call *c, CUgraphNode n)
{
    CUDA_MEMCPY3D p;
    uint64_t dst, src;
    memset(&p, 0, sizeof(p));
    CUresult r = CUDA_DRV(cuGraphMemcpyNodeGetParams)(n, &p);
    if (r != CUDA_SUCCESS)
        return r;
    int dst_host = p.dstMemoryType == CU_MEMORYTYPE_HOST,
        src_host = p.srcMemoryType == CU_MEMORYTYPE_HOST;
    if ((dst_host ? host_side(p.dstHost, p.dstXInBytes, p.dstY, p.dstZ, p.dstPitch,
                              p.dstHeight, &dst)
                  : side(p.dstMemoryType, p.dstDevice, p.dstXInBytes, p.dstY, p.dstZ,
                         p.dstPitch, p.dstHeight, &dst)) < 0 ||
        (src_host ? host_side(p.srcHost, p.srcXInBytes, p.srcY, p.srcZ, p.srcPitch,
                              p.srcHeight, &src)
                  : side(p.srcMemoryType, p.srcDevice, p.srcXInBytes, p.srcY, p.srcZ,
                         p.srcPitch, p.srcHeight, &src)) < 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    apigen_put_i32(c, CUDA_SUCCESS);
    apigen_put_u8(c, CU_GRAPH_NODE_TYPE_MEMCPY);
    apigen_put_u64(c, dst);
    apigen_put_u64(c, p.dstPitch);
    apigen_put_u64(c, p.dstHeight);
    apigen_put_u64(c, src);
    apigen_put_u64(c, p.srcPitch);
    apigen_put_u64(c, p.srcHeight);
    apigen_put_u64(c, p.WidthInBytes);
    apigen_put_u64(c, p.Height);
    apigen_put_u64(c, p.Depth);
    apigen_put_u8(c, (uint8_t)((p.dstMemoryType == CU_MEMORYTYPE_UNIFIED) |
                               (p.srcMemoryType == CU_MEMORYTYPE_UNIFIED) << 1 |
                               dst_host << 2 | src_host << 3));
    return CUDA_SUCCESS;
}

static CUresult put_memset(struct apigen_call *c, CUgraphNode n)
{
    CUDA_MEMSET_NODE_PARAMS p;
    memset(&p, 0, sizeof(p));
    CUresult r = CUDA_DRV(cuGraphMemsetNodeGetParams)(n, &p);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(c, CUDA_SUCCESS);
    apigen_put_u8(c, CU_GRAPH_NODE_TYPE_MEMSET);
    apigen_put_u64(c, p.dst);
    apigen_put_u64(c, p.pitch);
    apigen_put_u32(c, p.value);
    apigen_put_u32(c, p.elementSize);
    apigen_put_u64(c, p.width);
    apigen_put_u64(c, p.height);
    return CUDA_SUCCESS;
}

static CUresult put_mem_alloc(struct apigen_call *c, CUgraphNode n)
{
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof(p));
    CUresult r = CUDA_DRV(cuGraphMemAllocNodeGetParams)(n, &p);
    if (r == CUDA_SUCCESS && p.accessDescCount > CUDA_BE_MAX_ACCESS)
        r = CUDA_ERROR_NOT_SUPPORTED;
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(c, CUDA_SUCCESS);
    apigen_put_u8(c, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    apigen_put_i32(c, p.poolProps.allocType);
    apigen_put_i32(c, p.poolProps.handleTypes);
    apigen_put_i32(c, p.poolProps.location.type);
    apigen_put_i32(c, p.poolProps.location.id);
    apigen_put_u64(c, p.poolProps.maxSize);
    apigen_put_u32(c, p.poolProps.usage);
    apigen_put_u64(c, p.bytesize);
    apigen_put_u32(c, (uint32_t)p.accessDescCount);
    for (size_t i = 0; i < p.accessDescCount; i++) {
        apigen_put_i32(c, p.accessDescs[i].location.type);
        apigen_put_i32(c, p.accessDescs[i].location.id);
        apigen_put_i32(c, p.accessDescs[i].flags);
    }
    apigen_put_u64(c, p.dptr);
    return CUDA_SUCCESS;
}

/* The context as the session's id of it (0 where it has none), the
 * operations as a stream's travel. */
static CUresult put_memops(struct apigen_call *c, CUgraphNode n)
{
    CUDA_BATCH_MEM_OP_NODE_PARAMS p;
    memset(&p, 0, sizeof(p));
    CUresult r = CUDA_DRV(cuGraphBatchMemOpNodeGetParams)(n, &p);
    if (r == CUDA_SUCCESS &&
        (p.count > CUDA_BE_MEMOPS_MAX || (p.count > 0 && p.paramArray == NULL)))
        r = CUDA_ERROR_NOT_SUPPORTED;
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(c, CUDA_SUCCESS);
    apigen_put_u8(c, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    apigen_put_u64(c, cuda_be_ctx_id_of(p.ctx));
    apigen_put_u32(c, p.flags);
    apigen_put_u32(c, p.count);
    for (unsigned int i = 0; i < p.count; i++) {
        const CUstreamBatchMemOpParams *op = &p.paramArray[i];
        int wide = op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
                   op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64;
        int addressed = wide ||
                        op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
                        op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32;
        apigen_put_u32(c, (uint32_t)op->operation);
        apigen_put_u32(c, addressed ? op->waitValue.flags
                                    : op->memoryBarrier.flags);
        apigen_put_u64(c, addressed ? op->waitValue.address : 0);
        apigen_put_u64(c, !addressed ? 0
                          : wide     ? op->waitValue.value64
                                     : op->waitValue.value);
    }
    return CUDA_SUCCESS;
}

/* The node types answered with one u64. */
static CUresult get_u64(CUgraphNode n, CUgraphNodeType type, uint64_t *v)
{
    CUDA_HOST_NODE_PARAMS h = {0};
    CUgraph child = NULL;
    CUevent ev = NULL;
    CUdeviceptr p = 0;
    CUresult r;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_HOST:
        r = CUDA_DRV(cuGraphHostNodeGetParams)(n, &h);
        *v = cuda_be_host_node_id(&h);
        break;
    case CU_GRAPH_NODE_TYPE_GRAPH: {
        r = CUDA_DRV(cuGraphChildGraphNodeGetGraph)(n, &child);
        struct gvs_remote_graph *g =
            r == CUDA_SUCCESS ? cuda_be_remote->graph_of(child, 0) : NULL;
        if (r == CUDA_SUCCESS && g == NULL)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *v = g != NULL ? g->id : 0;
        break;
    }
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        r = type == CU_GRAPH_NODE_TYPE_EVENT_RECORD
                ? CUDA_DRV(cuGraphEventRecordNodeGetEvent)(n, &ev)
                : CUDA_DRV(cuGraphEventWaitNodeGetEvent)(n, &ev);
        *v = cuda_be_event_id_of(ev);
        break;
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        r = CUDA_DRV(cuGraphMemFreeNodeGetParams)(n, &p);
        *v = p;
        return r;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return r == CUDA_SUCCESS && *v == 0 ? CUDA_ERROR_NOT_SUPPORTED : r;
}

static CUresult put_params(struct apigen_call *c, CUgraphNode n,
                           CUgraphNodeType type)
{
    uint64_t v = 0;
    CUresult r;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return put_kernel(c, n);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return put_memcpy(c, n);
    case CU_GRAPH_NODE_TYPE_MEMSET:
        return put_memset(c, n);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        return put_mem_alloc(c, n);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        return put_memops(c, n);
    case CU_GRAPH_NODE_TYPE_EMPTY:
        apigen_put_i32(c, CUDA_SUCCESS);
        apigen_put_u8(c, (uint8_t)type);
        return CUDA_SUCCESS;
    default:
        r = get_u64(n, type, &v);
        if (r != CUDA_SUCCESS)
            return r;
        apigen_put_i32(c, CUDA_SUCCESS);
        apigen_put_u8(c, (uint8_t)type);
        apigen_put_u64(c, v);
        return CUDA_SUCCESS;
    }
}

/* Request: u64 node.  Reply: i32, the node's parameters. */
int cuda_be_node_get_params(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    cuda_be_remote->graphs_lock();
    struct gvs_remote_node *n = cuda_be_remote->node_get(id);
    if (r == CUDA_SUCCESS && n == NULL)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphNodeGetType)(n->n, &type);
    if (r == CUDA_SUCCESS)
        r = put_params(&c, n->n, type);
    cuda_be_remote->graphs_unlock();
    if (r != CUDA_SUCCESS)
        apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: u8 set, u64 node, u32 attribute, 64 bytes (set).  Reply: i32,
 * 64 bytes (get). */
int cuda_be_kernel_node_attribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t set;
    uint64_t id;
    CUlaunchAttribute a;
    CUresult r = CUDA_SUCCESS;
    memset(&a, 0, sizeof(a));
    apigen_get_u8(&c, &set);
    apigen_get_u64(&c, &id);
    if (c.rc == 0 && set > 1)
        c.rc = GVS_E_PROTO;
    if (c.rc == 0 && set)
        r = cuda_be_get_launch_attrs(&c, &a, 1);
    else
        apigen_get_u32(&c, (uint32_t *)&a.id);
    if (apigen_end(&c) < 0)
        return c.rc;
    /* An event CUDA answers has no id here. */
    if (!set && (a.id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
                 a.id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT ||
                 a.id == CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE))
        r = CUDA_ERROR_NOT_SUPPORTED;
    if (r == CUDA_SUCCESS)
        r = cuda_be_enter(call);
    CUgraphNode n = NULL;
    if (r == CUDA_SUCCESS)
        r = cuda_be_graph_node(id, &n);
    if (r == CUDA_SUCCESS)
        r = set ? CUDA_DRV(cuGraphKernelNodeSetAttribute)(n, a.id, &a.value)
                : CUDA_DRV(cuGraphKernelNodeGetAttribute)(n, a.id, &a.value);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS && !set)
        apigen_put_bytes(&c, &a.value, sizeof(a.value));
    return c.rc;
}

/* Request: u8 set, i32 device, i32 attribute, u64 value (set).  Reply:
 * i32, u64 value (get).  CUDA reads and writes a 64-bit value for every
 * attribute. */
int cuda_be_graph_mem_attribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t set;
    int32_t dev, attr;
    cuuint64_t v = 0;
    apigen_get_u8(&c, &set);
    apigen_get_i32(&c, &dev);
    apigen_get_i32(&c, &attr);
    if (c.rc == 0 && set)
        apigen_get_u64(&c, &v);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (set > 1)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = set ? CUDA_DRV(cuDeviceSetGraphMemAttribute)(
                      dev, (CUgraphMem_attribute)attr, &v)
                : CUDA_DRV(cuDeviceGetGraphMemAttribute)(
                      dev, (CUgraphMem_attribute)attr, &v);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS && !set)
        apigen_put_u64(&c, v);
    return c.rc;
}

/* Request: u64 graph, u32 default value, u32 flags.  Reply: i32, u64
 * the handle (CUDA's value, which kernels set on the device). */
int cuda_be_cond_handle_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t value, flags;
    CUgraphConditionalHandle h = 0;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &value);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    CUcontext ctx = NULL;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuCtxGetCurrent)(&ctx);
    cuda_be_remote->graphs_lock();
    struct gvs_remote_graph *g = cuda_be_remote->graph_get(id);
    if (r == CUDA_SUCCESS && g == NULL)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuGraphConditionalHandleCreate)(&h, g->g, ctx, value,
                                                     flags);
    cuda_be_remote->graphs_unlock();
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_u64(&c, h);
    return c.rc;
}
