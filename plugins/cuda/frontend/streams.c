/* Streams and events (cuda.api): created and destroyed here, the rest
 * generated. */
#include "call.h"
#include "graph.h"

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs_remote.h"

uint64_t cuda_fe_stream_wire(CUstream s, int per_thread)
{
    if (s == NULL && per_thread)
        return (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
    return (uint64_t)(uintptr_t)s;
}

/* The maker of the stream of a wire value and its owner there: a
 * default stream is the current context's; 0 when unknown. */
static uint64_t stream_owner(uint64_t wire, uint16_t *api)
{
    if (wire <= (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD) {
        *api = CUDA_PLUGIN_ID;
        return (uint64_t)(uintptr_t)cuda_fe_ctx_current();
    }
    return gvs_remote_known_owner(GVS_REMOTE_KNOWN_STREAM, wire, api);
}

int cuda_fe_stream_device(uint64_t wire, CUdevice *dev)
{
    uint16_t api = 0;
    uint64_t o = stream_owner(wire, &api);
    if (o == 0)
        return -1;
    /* The runtime frontend's streams are of its device's primary context. */
    if (api != CUDA_PLUGIN_ID) {
        *dev = (CUdevice)(o - 1);
        return o - 1 <= (uint64_t)INT32_MAX ? 0 : -1;
    }
    return cuda_fe_ctx_device_of((CUcontext)(uintptr_t)o, dev);
}

/* PyTorch asks before its allocations and launches (1,193 times in 64
 * tokens of a GPT-2 decode).  While no capture has begun in this
 * process (the layer counts them, through either API), a stream of the
 * session, or the current context's default stream, is not capturing,
 * as the driver would answer; anything else is the backend's to say. */
static CUresult is_capturing(CUstream s, CUstreamCaptureStatus *status,
                             int per_thread)
{
    uint16_t api = 0;
    if (status != NULL && cuda_fe_initialized() && !gvs_remote_capturing() &&
        stream_owner(cuda_fe_stream_wire(s, per_thread), &api) != 0) {
        *status = CU_STREAM_CAPTURE_STATUS_NONE;
        return CUDA_SUCCESS;
    }
    return cuda_rpc_cuStreamIsCapturing(s, status, per_thread);
}

CUresult cuStreamIsCapturing(CUstream hStream,
                             CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus, 0);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream,
                                  CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus, 1);
}

/* A record cannot fail once the event and the stream are known to be of
 * one context, and no capture can make the record a node. */
int cuda_fe_may_post_record(CUevent event, CUstream stream, int per_thread)
{
    uint16_t eapi = 0, sapi = 0;
    if (gvs_remote_capturing())
        return 0;
    uint64_t o = gvs_remote_known_owner(GVS_REMOTE_KNOWN_EVENT,
                                        (uint64_t)(uintptr_t)event, &eapi);
    return o != 0 && eapi == CUDA_PLUGIN_ID &&
           o == stream_owner(cuda_fe_stream_wire(stream, per_thread), &sapi) &&
           sapi == CUDA_PLUGIN_ID;
}

int cuda_fe_may_post_record_flags(CUevent event, CUstream stream,
                                  unsigned int flags, int per_thread)
{
    return flags == 0 && cuda_fe_may_post_record(event, stream, per_thread);
}

/* A wait may name an event of another context, or of the runtime's. */
int cuda_fe_may_post_wait(CUstream stream, CUevent event, unsigned int flags,
                          int per_thread)
{
    uint16_t api = 0;
    return flags == 0 && !gvs_remote_capturing() &&
           gvs_remote_known_owner(GVS_REMOTE_KNOWN_EVENT,
                                  (uint64_t)(uintptr_t)event, &api) != 0 &&
           stream_owner(cuda_fe_stream_wire(stream, per_thread), &api) != 0;
}

CUresult cuda_fe_create(uint16_t op, uint32_t flags, int has_prio, int prio,
                        uint64_t *id)
{
    struct apigen_call c;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u32(&c, flags);
    if (has_prio)
        apigen_put_i32(&c, prio);
    r = cuda_fe_run(&c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, id);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS && (op == CUDA_OP_STREAM_CREATE ||
                              op == CUDA_OP_EVENT_CREATE))
        gvs_remote_known_add(op == CUDA_OP_STREAM_CREATE
                                 ? GVS_REMOTE_KNOWN_STREAM
                                 : GVS_REMOTE_KNOWN_EVENT,
                             *id, CUDA_PLUGIN_ID,
                             (uint64_t)(uintptr_t)cuda_fe_ctx_current());
    return r;
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                    int priority)
{
    uint64_t id = 0;
    if (phStream == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r =
        cuda_fe_create(CUDA_OP_STREAM_CREATE, flags, 1, priority, &id);
    if (r == CUDA_SUCCESS)
        *phStream = (CUstream)(uintptr_t)id;
    return r;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    const uint64_t id = (uint64_t)(uintptr_t)hStream;
    gvs_remote_known_remove(GVS_REMOTE_KNOWN_STREAM, id);
    return cuda_fe_call_ids(CUDA_OP_STREAM_DESTROY, &id, 1, NULL);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    uint64_t id = 0;
    if (phEvent == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_create(CUDA_OP_EVENT_CREATE, Flags, 0, 0, &id);
    if (r == CUDA_SUCCESS)
        *phEvent = (CUevent)(uintptr_t)id;
    return r;
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    const uint64_t id = (uint64_t)(uintptr_t)hEvent;
    gvs_remote_known_remove(GVS_REMOTE_KNOWN_EVENT, id);
    return cuda_fe_call_ids(CUDA_OP_EVENT_DESTROY, &id, 1, NULL);
}

/* The capture state of a stream; its graph and dependencies, where
 * asked for, come in a query of their own (graphs.c). */
static CUresult capture_info(CUstream hStream, int per_thread,
                             CUstreamCaptureStatus *status, cuuint64_t *id,
                             CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *ndeps)
{
    struct apigen_call c;
    int32_t st = 0;
    uint64_t cid = 0, n = 0;
    if (status == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (graph != NULL || deps != NULL || edges != NULL)
        return cuda_fe_capture_graph(cuda_fe_stream_wire(hStream, per_thread),
                                     status, id, graph, deps, edges, ndeps);
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_stream_wire(hStream, per_thread));
    r = cuda_fe_run(&c, CUDA_OP_STREAM_CAPTURE_INFO, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_i32(&c, &st);
        apigen_get_u64(&c, &cid);
        apigen_get_u64(&c, &n);
    }
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    *status = (CUstreamCaptureStatus)st;
    if (id != NULL)
        *id = cid;
    if (ndeps != NULL)
        *ndeps = (size_t)n;
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream,
                                   CUstreamCaptureStatus *captureStatus_out,
                                   cuuint64_t *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   const CUgraphEdgeData **edgeData_out,
                                   size_t *numDependencies_out)
{
    return capture_info(hStream, 0, captureStatus_out, id_out, graph_out,
                        dependencies_out, edgeData_out, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(
    CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out, CUgraph *graph_out,
    const CUgraphNode **dependencies_out,
    const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return capture_info(hStream, 1, captureStatus_out, id_out, graph_out,
                        dependencies_out, edgeData_out, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream,
                                   CUstreamCaptureStatus *captureStatus_out,
                                   cuuint64_t *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   size_t *numDependencies_out)
{
    return capture_info(hStream, 0, captureStatus_out, id_out, graph_out,
                        dependencies_out, NULL, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v2_ptsz(
    CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out, CUgraph *graph_out,
    const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
    return capture_info(hStream, 1, captureStatus_out, id_out, graph_out,
                        dependencies_out, NULL, numDependencies_out);
}

static CUresult stream_attr(int set, CUstream s, int per_thread,
                            CUstreamAttrID attr, CUstreamAttrValue *v)
{
    struct apigen_call c;
    if (v == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)set);
    apigen_put_u64(&c, cuda_fe_stream_wire(s, per_thread));
    apigen_put_i32(&c, (int32_t)attr);
    if (set)
        apigen_put_bytes(&c, v, sizeof(*v));
    r = cuda_fe_run(&c, CUDA_OP_STREAM_ATTRIBUTE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS && !set)
        apigen_get_bytes(&c, v, sizeof(*v));
    return cuda_fe_end(&c, r);
}

CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr,
                              CUstreamAttrValue *value_out)
{
    return stream_attr(0, hStream, 0, attr, value_out);
}

CUresult cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                   CUstreamAttrValue *value_out)
{
    return stream_attr(0, hStream, 1, attr, value_out);
}

CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr,
                              const CUstreamAttrValue *value)
{
    CUstreamAttrValue v;
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    v = *value;
    return stream_attr(1, hStream, 0, attr, &v);
}

CUresult cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                   const CUstreamAttrValue *value)
{
    CUstreamAttrValue v;
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    v = *value;
    return stream_attr(1, hStream, 1, attr, &v);
}

/* The stream's context, as the session's id; never a green context. */
static CUresult stream_ctx(CUstream hStream, int per_thread, CUcontext *pctx,
                           CUgreenCtx *green)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_stream_wire(hStream, per_thread));
    r = cuda_fe_run(&c, CUDA_OP_STREAM_GET_CTX, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &id);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    *pctx = (CUcontext)(uintptr_t)id;
    if (green != NULL)
        *green = NULL;
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    return stream_ctx(hStream, 0, pctx, NULL);
}

CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    return stream_ctx(hStream, 1, pctx, NULL);
}

CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx,
                           CUgreenCtx *pGreenCtx)
{
    return stream_ctx(hStream, 0, pCtx, pGreenCtx);
}

CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx,
                                CUgreenCtx *pGreenCtx)
{
    return stream_ctx(hStream, 1, pCtx, pGreenCtx);
}
