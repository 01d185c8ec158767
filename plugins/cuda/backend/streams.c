/* Streams and events (cuda.api) as ids of the layer's handle table,
 * shared with the runtime plugin: a stream either API created is known
 * to the other. */
#include "be.h"

#include <pthread.h>

#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

static int32_t ptds_create(void **s)
{
    CUstream st = NULL;
    CUresult r = CUDA_DRV(cuStreamCreateWithPriority)(&st, CU_STREAM_DEFAULT,
                                                      0);
    *s = st;
    return r;
}

/* The lane's per-thread default stream in its current context: the
 * layer's, the runtime plugin's cudaStreamPerThread in a primary
 * context. */
static CUresult lane_stream(struct gvs_call *call, CUstream *out)
{
    struct gvs_remote_lane *rl = cuda_be_remote->lane(call);
    void *s = NULL;
    if (rl == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (rl->context == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct cuda_be_ctx *c = gvs_handles_get(cuda_be_remote->handles(),
                                            GVS_RH_CONTEXT, rl->context);
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult r = (CUresult)cuda_be_remote->ptds_stream(
        call, c->primary ? NULL : c->ctx, c->dev, ptds_create,
        CUDA_ERROR_OUT_OF_MEMORY, &s);
    *out = s;
    return r;
}

CUresult cuda_be_stream(struct gvs_call *call, uint64_t wire, CUstream *out)
{
    *out = NULL;
    if (wire == 0 || wire == (uint64_t)(uintptr_t)CU_STREAM_LEGACY)
        return CUDA_SUCCESS;
    if (wire == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)
        return lane_stream(call, out);
    void *s = gvs_handles_get(cuda_be_remote->handles(), GVS_RH_STREAM, wire);
    if (s == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = s;
    return CUDA_SUCCESS;
}

CUresult cuda_be_event(uint64_t wire, CUevent *out)
{
    void *e = gvs_handles_get(cuda_be_remote->handles(), GVS_RH_EVENT, wire);
    if (e == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = e;
    return CUDA_SUCCESS;
}

/* The events' ids by CUevent, for the driver's answers that name one
 * (a graph node's event). */
static pthread_mutex_t event_ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map event_ids;

uint64_t cuda_be_event_id_of(CUevent e)
{
    pthread_mutex_lock(&event_ids_lock);
    void *id = gvs_u64map_get(&event_ids, (uint64_t)(uintptr_t)e);
    pthread_mutex_unlock(&event_ids_lock);
    return (uint64_t)(uintptr_t)id;
}

int cuda_be_event_enter(CUevent e, uint64_t *id)
{
    struct gvs_handles *t = cuda_be_remote->handles();
    if (gvs_handles_add(t, GVS_RH_EVENT, e, id) < 0)
        return -1;
    pthread_mutex_lock(&event_ids_lock);
    int rc = gvs_u64map_put(&event_ids, (uint64_t)(uintptr_t)e,
                            (void *)(uintptr_t)*id);
    pthread_mutex_unlock(&event_ids_lock);
    if (rc < 0)
        gvs_handles_remove(t, GVS_RH_EVENT, *id);
    return rc < 0 ? -1 : 0;
}

/* A new stream or event of the driver's, entered in the table: its id,
 * or CUDA_ERROR_OUT_OF_MEMORY (the object destroyed again). */
static CUresult enter_object(uint16_t type, void *obj, CUresult r,
                             CUresult (*destroy)(void *), uint64_t *id)
{
    if (r == CUDA_SUCCESS &&
        (type == GVS_RH_EVENT
             ? cuda_be_event_enter(obj, id)
             : gvs_handles_add(cuda_be_remote->handles(), type, obj, id)) <
            0) {
        (void)destroy(obj);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    return r;
}

int cuda_be_destroy_object(struct gvs_call *call, uint16_t type,
                           CUresult (*destroy)(void *))
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (type == GVS_RH_STREAM)
        cuda_be_remote->shared_flush(call, &cuda_be_pinner);
    void *obj = NULL;
    if (r == CUDA_SUCCESS &&
        (obj = gvs_handles_remove(cuda_be_remote->handles(), type, id)) ==
            NULL)
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && type == GVS_RH_EVENT) {
        pthread_mutex_lock(&event_ids_lock);
        gvs_u64map_remove(&event_ids, (uint64_t)(uintptr_t)obj);
        pthread_mutex_unlock(&event_ids_lock);
    }
    if (r == CUDA_SUCCESS)
        r = destroy(obj);
    apigen_put_i32(&c, r);
    return c.rc;
}

static CUresult stream_destroy(void *s)
{
    return CUDA_DRV(cuStreamDestroy_v2)(s);
}

static CUresult event_destroy(void *e)
{
    return CUDA_DRV(cuEventDestroy_v2)(e);
}

/* Request: u32 flags, i32 priority.  Reply: i32, u64 id. */
int cuda_be_stream_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    int32_t prio;
    CUstream s = NULL;
    uint64_t id = 0;
    apigen_get_u32(&c, &flags);
    apigen_get_i32(&c, &prio);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (flags & CU_STREAM_NON_BLOCKING)
        cuda_be_remote->stream_unordered();
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamCreateWithPriority)(&s, flags, prio);
    r = enter_object(GVS_RH_STREAM, s, r, stream_destroy, &id);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

int cuda_be_stream_destroy(struct gvs_call *call)
{
    return cuda_be_destroy_object(call, GVS_RH_STREAM, stream_destroy);
}

/* Request: u32 flags.  Reply: i32, u64 id. */
int cuda_be_event_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    CUevent e = NULL;
    uint64_t id = 0;
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuEventCreate)(&e, flags);
    r = enter_object(GVS_RH_EVENT, e, r, event_destroy, &id);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

int cuda_be_event_destroy(struct gvs_call *call)
{
    return cuda_be_destroy_object(call, GVS_RH_EVENT, event_destroy);
}

/* A request of one u64 stream: -1 when it is malformed (c->rc says
 * how), else 0 with *r the first failure of entering the lane and
 * finding the stream. */
static int stream_request(struct gvs_call *call, struct apigen_call *c,
                          CUstream *s, CUresult *r)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    if (apigen_end(c) < 0)
        return -1;
    *r = cuda_be_enter(call);
    if (*r == CUDA_SUCCESS)
        *r = cuda_be_stream(call, wire, s);
    return 0;
}

/* Request: u64 stream.  Reply: i32, i32 status, u64 capture id, u64
 * number of dependencies.  The graph and the dependencies themselves
 * are not asked for: graphs are not remoted yet. */
int cuda_be_stream_capture_info(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    size_t n = 0;
    CUresult r;
    if (stream_request(call, &c, &s, &r) < 0)
        return c.rc;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamGetCaptureInfo_v3)(s, &status, &id, NULL, NULL,
                                                NULL, &n);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        apigen_put_i32(&c, (int32_t)status);
        apigen_put_u64(&c, id);
        apigen_put_u64(&c, n);
    }
    return c.rc;
}

/* Request: u8 set, u64 stream, i32 attribute, 64 bytes (set).  Reply:
 * i32, 64 bytes (get).  No stream attribute holds a handle. */
int cuda_be_stream_attribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t set;
    uint64_t wire;
    int32_t attr;
    CUstream s = NULL;
    CUstreamAttrValue v;
    memset(&v, 0, sizeof(v));
    apigen_get_u8(&c, &set);
    apigen_get_u64(&c, &wire);
    apigen_get_i32(&c, &attr);
    if (c.rc == 0 && set)
        c.rc = gvs_buf_get_bytes(c.get, &v, sizeof(v));
    if (apigen_end(&c) < 0)
        return c.rc;
    if (set > 1)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, wire, &s);
    if (r == CUDA_SUCCESS)
        r = set ? CUDA_DRV(cuStreamSetAttribute)(s, (CUstreamAttrID)attr, &v)
                : CUDA_DRV(cuStreamGetAttribute)(s, (CUstreamAttrID)attr, &v);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS && !set)
        apigen_put_bytes(&c, &v, sizeof(v));
    return c.rc;
}

/* Request: u64 stream.  Reply: i32, u64 the id of its context: one the
 * session retained or created (a stream's context always is). */
int cuda_be_stream_get_ctx(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id = 0;
    CUstream s = NULL;
    CUcontext ctx = NULL;
    CUresult r;
    if (stream_request(call, &c, &s, &r) < 0)
        return c.rc;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuStreamGetCtx)(s, &ctx);
    if (r == CUDA_SUCCESS && (id = cuda_be_ctx_id_of(ctx)) == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}
