/* The rest of the graph API (cuda.api, "The rest of the graph API"):
 * node parameter queries, in the program's terms again (its kernel
 * handle and argument pointers, its host function and data, its graphs
 * and events); kernel node attributes; the devices' graph memory;
 * conditional handles.  What a query points into (a kernel's
 * arguments, an alloc node's access descriptors) is the thread's, valid
 * until its next query, where CUDA keeps it with the node. */
#include "graph.h"
#include "kernels.h"

#include <pthread.h>
#include <string.h>

#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* Most access descriptors the backend answers (cuda.api). */
#define MAX_ACCESS 64u

struct query_buf {
    _Alignas(16) uint8_t block[CUDA_FE_PARAM_MAX];
    size_t size;
    void *extra[5];
    void **args;
    uint32_t room;
    CUmemAccessDesc access[MAX_ACCESS];
    CUstreamBatchMemOpParams memops[CUDA_FE_MEMOPS_MAX];
};

static pthread_key_t query_key;
static pthread_once_t query_once = PTHREAD_ONCE_INIT;

static void query_free(void *p)
{
    struct query_buf *b = p;
    gvs_free(b->args);
    gvs_free(b);
}

static void query_init(void)
{
    (void)pthread_key_create(&query_key, query_free);
}

/* The thread's buffer with room for n arguments, or NULL. */
static struct query_buf *query_room(uint32_t n)
{
    pthread_once(&query_once, query_init);
    struct query_buf *b = pthread_getspecific(query_key);
    if (b == NULL) {
        if ((b = gvs_calloc(1, sizeof(*b))) == NULL)
            return NULL;
        if (pthread_setspecific(query_key, b) != 0) {
            gvs_free(b);
            return NULL;
        }
    }
    if (n <= b->room)
        return b;
    void **args = gvs_realloc(b->args, n * sizeof(*args));
    if (args == NULL)
        return NULL;
    b->args = args;
    b->room = n;
    return b;
}

/* Asks for node's parameters: CUDA_ERROR_INVALID_VALUE unless it is of
 * type want (as CUDA answers a query of another type).  On success the
 * reply's parameters are left in c for the caller, who ends c. */
static CUresult query(struct apigen_call *c, CUgraphNode node,
                      CUgraphNodeType want)
{
    uint8_t type = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(c, cuda_fe_id(node));
    r = cuda_fe_run(c, CUDA_OP_NODE_GET_PARAMS, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u8(c, &type);
    if (r == CUDA_SUCCESS && c->rc == 0 && type != (uint8_t)want) {
        r = CUDA_ERROR_INVALID_VALUE;
        c->get = NULL; /* the rest of the reply is dropped */
    }
    return r;
}

/* A query answered by one u64. */
static CUresult query_u64(CUgraphNode node, CUgraphNodeType want,
                          uint64_t *v)
{
    struct apigen_call c;
    *v = 0;
    CUresult r = query(&c, node, want);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, v);
    return cuda_fe_end(&c, r);
}

/* The kernel's arguments unpacked by its layout into the thread's
 * buffer, or its buffer as extra. */
static CUresult get_kernel(struct apigen_call *c,
                           CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
    uint64_t fid = 0, kid = 0;
    uint8_t form = 0;
    const uint8_t *data;
    size_t len;
    apigen_get_u64(c, &fid);
    apigen_get_u64(c, &kid);
    apigen_get_u32(c, &k->gridDimX);
    apigen_get_u32(c, &k->gridDimY);
    apigen_get_u32(c, &k->gridDimZ);
    apigen_get_u32(c, &k->blockDimX);
    apigen_get_u32(c, &k->blockDimY);
    apigen_get_u32(c, &k->blockDimZ);
    apigen_get_u32(c, &k->sharedMemBytes);
    apigen_get_u8(c, &form);
    apigen_get_blob(c, &data, &len);
    if (c->rc < 0)
        return CUDA_SUCCESS;
    const struct cuda_fe_kernel *kn =
        cuda_fe_kernel_find(kid != 0 ? kid : fid);
    struct query_buf *b = kn != NULL ? query_room(kn->nparams) : NULL;
    if (kn == NULL || form > CUDA_FE_FORM_EXTRA || len > CUDA_FE_PARAM_MAX ||
        (form == CUDA_FE_FORM_PARAMS && len != kn->param_bytes)) {
        c->rc = GVS_E_PROTO;
        return CUDA_SUCCESS;
    }
    if (b == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(b->block, data, len);
    b->size = len;
    /* The program's handles, in the fields the driver reports. */
    k->func = (CUfunction)(uintptr_t)fid;
    k->kern = (CUkernel)(uintptr_t)kid;
    k->ctx = NULL;
    if (form == CUDA_FE_FORM_EXTRA) {
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, b->block,
                         CU_LAUNCH_PARAM_BUFFER_SIZE, &b->size,
                         CU_LAUNCH_PARAM_END};
        memcpy(b->extra, extra, sizeof(extra));
        k->kernelParams = NULL;
        k->extra = b->extra;
        return CUDA_SUCCESS;
    }
    for (uint32_t i = 0; i < kn->nparams; i++)
        b->args[i] = b->block + kn->params[i].offset;
    k->kernelParams = b->args;
    k->extra = NULL;
    return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
                                       CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    struct apigen_call c;
    CUDA_KERNEL_NODE_PARAMS_v2 k;
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(&k, 0, sizeof(k));
    CUresult r = query(&c, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    if (r == CUDA_SUCCESS)
        r = get_kernel(&c, &k);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *nodeParams = k;
    return r;
}

CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode,
                                    CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS_v2 k;
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuGraphKernelNodeGetParams_v2(hNode, &k);
    if (r != CUDA_SUCCESS)
        return r;
    nodeParams->func = k.func;
    nodeParams->gridDimX = k.gridDimX;
    nodeParams->gridDimY = k.gridDimY;
    nodeParams->gridDimZ = k.gridDimZ;
    nodeParams->blockDimX = k.blockDimX;
    nodeParams->blockDimY = k.blockDimY;
    nodeParams->blockDimZ = k.blockDimZ;
    nodeParams->sharedMemBytes = k.sharedMemBytes;
    nodeParams->kernelParams = k.kernelParams;
    nodeParams->extra = k.extra;
    return CUDA_SUCCESS;
}

/* Positions folded in, unified where the program said so, host memory
 * shared with the backend by the program's address (cuda.api). */
CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode,
                                    CUDA_MEMCPY3D *nodeParams)
{
    struct apigen_call c;
    uint64_t v[9] = {0};
    uint8_t unified = 0;
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = query(&c, hNode, CU_GRAPH_NODE_TYPE_MEMCPY);
    for (int i = 0; r == CUDA_SUCCESS && i < 9; i++)
        apigen_get_u64(&c, &v[i]);
    if (r == CUDA_SUCCESS)
        apigen_get_u8(&c, &unified);
    r = cuda_fe_end(&c, r);
    /* A node copying host memory of the program's says what it was
     * given, not the device memory it copies through (graph_host.c). */
    if (r != CUDA_SUCCESS || cuda_fe_ghost_params(cuda_fe_id(hNode), nodeParams))
        return r;
    memset(nodeParams, 0, sizeof(*nodeParams));
    nodeParams->dstMemoryType = (unified & 1) ? CU_MEMORYTYPE_UNIFIED
                                              : CU_MEMORYTYPE_DEVICE;
    nodeParams->dstDevice = v[0];
    nodeParams->dstPitch = v[1];
    nodeParams->dstHeight = v[2];
    nodeParams->srcMemoryType = (unified & 2) ? CU_MEMORYTYPE_UNIFIED
                                              : CU_MEMORYTYPE_DEVICE;
    nodeParams->srcDevice = v[3];
    nodeParams->srcPitch = v[4];
    nodeParams->srcHeight = v[5];
    nodeParams->WidthInBytes = v[6];
    nodeParams->Height = v[7];
    nodeParams->Depth = v[8];
    if (unified & 4) {
        nodeParams->dstMemoryType = CU_MEMORYTYPE_HOST;
        nodeParams->dstHost = (void *)(uintptr_t)v[0];
        nodeParams->dstDevice = 0;
    }
    if (unified & 8) {
        nodeParams->srcMemoryType = CU_MEMORYTYPE_HOST;
        nodeParams->srcHost = (const void *)(uintptr_t)v[3];
        nodeParams->srcDevice = 0;
    }
    return CUDA_SUCCESS;
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode,
                                    CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    struct apigen_call c;
    uint64_t dst = 0, pitch = 0, w = 0, h = 0;
    uint32_t value = 0, elem = 0;
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = query(&c, hNode, CU_GRAPH_NODE_TYPE_MEMSET);
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(&c, &dst);
        apigen_get_u64(&c, &pitch);
        apigen_get_u32(&c, &value);
        apigen_get_u32(&c, &elem);
        apigen_get_u64(&c, &w);
        apigen_get_u64(&c, &h);
    }
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    nodeParams->dst = dst;
    nodeParams->pitch = pitch;
    nodeParams->value = value;
    nodeParams->elementSize = elem;
    nodeParams->width = w;
    nodeParams->height = h;
    return CUDA_SUCCESS;
}

CUresult cuGraphHostNodeGetParams(CUgraphNode hNode,
                                  CUDA_HOST_NODE_PARAMS *nodeParams)
{
    uint64_t id;
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = query_u64(hNode, CU_GRAPH_NODE_TYPE_HOST, &id);
    return r == CUDA_SUCCESS ? cuda_fe_host_node_params(id, nodeParams) : r;
}

/* The node's own graph, an id of the session's (which the program does
 * not destroy). */
CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
    uint64_t id;
    if (phGraph == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = query_u64(hNode, CU_GRAPH_NODE_TYPE_GRAPH, &id);
    if (r == CUDA_SUCCESS)
        *phGraph = (CUgraph)(uintptr_t)id;
    return r;
}

static CUresult node_event(CUgraphNode node, CUgraphNodeType type,
                           CUevent *out)
{
    uint64_t id;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = query_u64(node, type, &id);
    if (r == CUDA_SUCCESS)
        *out = (CUevent)(uintptr_t)id;
    return r;
}

CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
    return node_event(hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event_out);
}

CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
    return node_event(hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event_out);
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
    uint64_t p;
    if (dptr_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = query_u64(hNode, CU_GRAPH_NODE_TYPE_MEM_FREE, &p);
    if (r == CUDA_SUCCESS)
        *dptr_out = p;
    return r;
}

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
                                      CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
    struct apigen_call c;
    CUDA_MEM_ALLOC_NODE_PARAMS a;
    int32_t type = 0, handles = 0, ltype = 0, lid = 0;
    uint64_t max = 0, bytes = 0, dptr = 0;
    uint32_t usage = 0, n = 0;
    struct query_buf *b = NULL;
    if (params_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(&a, 0, sizeof(a));
    CUresult r = query(&c, hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (r == CUDA_SUCCESS) {
        apigen_get_i32(&c, &type);
        apigen_get_i32(&c, &handles);
        apigen_get_i32(&c, &ltype);
        apigen_get_i32(&c, &lid);
        apigen_get_u64(&c, &max);
        apigen_get_u32(&c, &usage);
        apigen_get_u64(&c, &bytes);
        apigen_get_u32(&c, &n);
        if (c.rc == 0 && n > MAX_ACCESS)
            c.rc = GVS_E_PROTO;
        if (c.rc == 0 && (b = query_room(0)) == NULL) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            c.get = NULL; /* the rest of the reply is dropped */
        }
    }
    for (uint32_t i = 0; b != NULL && i < n && c.rc == 0; i++) {
        int32_t t = 0, id = 0, f = 0;
        apigen_get_i32(&c, &t);
        apigen_get_i32(&c, &id);
        apigen_get_i32(&c, &f);
        b->access[i].location.type = (CUmemLocationType)t;
        b->access[i].location.id = id;
        b->access[i].flags = (CUmemAccess_flags)f;
    }
    if (b != NULL)
        apigen_get_u64(&c, &dptr);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    a.poolProps.allocType = (CUmemAllocationType)type;
    a.poolProps.handleTypes = (CUmemAllocationHandleType)handles;
    a.poolProps.location.type = (CUmemLocationType)ltype;
    a.poolProps.location.id = lid;
    a.poolProps.maxSize = max;
    a.poolProps.usage = (unsigned short)usage;
    a.accessDescs = n > 0 ? b->access : NULL;
    a.accessDescCount = n;
    a.bytesize = bytes;
    a.dptr = dptr;
    *params_out = a;
    return CUDA_SUCCESS;
}

/* The operations point into the thread's buffer; the context is the
 * session's id of it. */
CUresult cuGraphBatchMemOpNodeGetParams(
    CUgraphNode hNode, CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams_out)
{
    struct apigen_call c;
    struct query_buf *b = NULL;
    uint64_t ctx = 0;
    uint32_t flags = 0;
    unsigned int n = 0;
    if (nodeParams_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = query(&c, hNode, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    if (r == CUDA_SUCCESS && (b = query_room(0)) == NULL) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        c.get = NULL; /* the rest of the reply is dropped */
    }
    if (b != NULL) {
        apigen_get_u64(&c, &ctx);
        apigen_get_u32(&c, &flags);
        cuda_fe_get_memops(&c, b->memops, CUDA_FE_MEMOPS_MAX, &n);
    }
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    nodeParams_out->ctx = (CUcontext)(uintptr_t)ctx;
    nodeParams_out->count = n;
    nodeParams_out->paramArray = n > 0 ? b->memops : NULL;
    nodeParams_out->flags = flags;
    return CUDA_SUCCESS;
}

/* Kernel node attributes -------------------------------------------------
 * The value travels as its 64 bytes; an event in it is the program's
 * handle, the backend's id (as LAUNCH's attributes). */
static CUresult node_attr(int set, CUgraphNode node, CUkernelNodeAttrID attr,
                          CUkernelNodeAttrValue *v)
{
    struct apigen_call c;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (v == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)set);
    apigen_put_u64(&c, cuda_fe_id(node));
    apigen_put_u32(&c, (uint32_t)attr);
    if (set)
        apigen_put_bytes(&c, v, sizeof(*v));
    r = cuda_fe_run(&c, CUDA_OP_KERNEL_NODE_ATTRIBUTE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS && !set)
        apigen_get_bytes(&c, v, sizeof(*v));
    return cuda_fe_end(&c, r);
}

CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode,
                                       CUkernelNodeAttrID attr,
                                       CUkernelNodeAttrValue *value_out)
{
    return node_attr(0, hNode, attr, value_out);
}

CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode,
                                       CUkernelNodeAttrID attr,
                                       const CUkernelNodeAttrValue *value)
{
    CUkernelNodeAttrValue v;
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    v = *value;
    return node_attr(1, hNode, attr, &v);
}

/* Graph memory of a device -------------------------------------------- */

static CUresult mem_attr(int set, CUdevice dev, CUgraphMem_attribute attr,
                         void *value)
{
    struct apigen_call c;
    uint64_t v = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)set);
    apigen_put_i32(&c, dev);
    apigen_put_i32(&c, (int32_t)attr);
    if (set)
        apigen_put_u64(&c, *(const cuuint64_t *)value);
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_MEM_ATTRIBUTE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS && !set)
        apigen_get_u64(&c, &v);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS && !set)
        *(cuuint64_t *)value = v;
    return r;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice device,
                                      CUgraphMem_attribute attr, void *value)
{
    return mem_attr(0, device, attr, value);
}

CUresult cuDeviceSetGraphMemAttribute(CUdevice device,
                                      CUgraphMem_attribute attr, void *value)
{
    return mem_attr(1, device, attr, value);
}

/* Conditional handles: CUDA's value, which kernels set on the device.
 * The handle's context is the caller's, another is not remoted yet. */
CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out,
                                        CUgraph hGraph, CUcontext ctx,
                                        unsigned int defaultLaunchValue,
                                        unsigned int flags)
{
    struct apigen_call c;
    uint64_t h = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (pHandle_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (ctx != NULL && ctx != cuda_fe_ctx_current())
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(hGraph));
    apigen_put_u32(&c, defaultLaunchValue);
    apigen_put_u32(&c, flags);
    r = cuda_fe_run(&c, CUDA_OP_COND_HANDLE_CREATE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &h);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *pHandle_out = h;
    return r;
}
