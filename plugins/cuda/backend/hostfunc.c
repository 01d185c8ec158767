/* Host functions and stream callbacks (cuda.api, HOST_FUNC) run on the
 * client through the remoting layer's callbacks (remote_be.h): each is
 * enqueued as a function of ours whose data is the layer's record of the
 * client's callback id.  One enqueued into a capturing stream becomes a
 * node of the capture's graph, whose record is kept for every run and
 * goes with the graph (callback_give). */
#include "be.h"


/* Kinds of HOST_FUNC (cuda.api, remote_be.h). */
enum { KIND_HOST_FN = 0, KIND_STREAM_CALLBACK = 1 };

static void CUDA_CB run_host_fn(void *arg)
{
    cuda_be_remote->callback_run(arg, CUDA_SUCCESS);
}

static void CUDA_CB run_stream_callback(CUstream stream, CUresult status,
                                        void *arg)
{
    (void)stream;
    cuda_be_remote->callback_run(arg, status);
}

CUresult cuda_be_host_node(uint64_t id, CUDA_HOST_NODE_PARAMS_v2 *out)
{
    struct gvs_remote_callback *cb = cuda_be_remote->callback_new(id, 1);
    if (cb == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = (CUDA_HOST_NODE_PARAMS_v2){run_host_fn, cb};
    return CUDA_SUCCESS;
}

uint64_t cuda_be_host_node_id(const CUDA_HOST_NODE_PARAMS *h)
{
    if (h->fn != run_host_fn || h->userData == NULL)
        return 0;
    return cuda_be_remote->callback_id(h->userData);
}

static int32_t object_create(void **object, void *ptr,
                             void (*destroy)(void *ptr))
{
    return CUDA_DRV(cuUserObjectCreate)((CUuserObject *)object, ptr, destroy,
                                        1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
}

static int32_t object_move(void *graph, void *object)
{
    return CUDA_DRV(cuGraphRetainUserObject)(graph, object, 1,
                                             CU_GRAPH_USER_OBJECT_MOVE);
}

static int32_t object_release(void *object)
{
    return CUDA_DRV(cuUserObjectRelease)(object, 1);
}

static const struct gvs_remote_user_objects user_objects = {
    object_create, object_move, object_release};

void cuda_be_host_give(struct gvs_remote_callback **record, CUgraph g)
{
    if (*record != NULL)
        cuda_be_remote->callback_give(*record, g, &user_objects);
    *record = NULL;
}

/* The graph s captures into, NULL when it captures none. */
static CUgraph capture_graph(CUstream s)
{
    CUstreamCaptureStatus st;
    cuuint64_t id;
    CUgraph g = NULL;
    size_t n;
    if (CUDA_DRV(cuStreamGetCaptureInfo_v3)(s, &st, &id, &g, NULL, NULL,
                                            &n) != CUDA_SUCCESS ||
        st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return NULL;
    return g;
}

/* HOST_FUNC's enqueueing (remote_be.h, host_func); the flags are the
 * driver's to check. */
static int32_t enqueue(struct gvs_call *call, uint64_t wire, uint32_t kind,
                       uint32_t flags, struct gvs_remote_callback *cb)
{
    CUstream s = NULL;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, wire, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (kind == KIND_STREAM_CALLBACK)
        return CUDA_DRV(cuStreamAddCallback)(s, run_stream_callback, cb,
                                             flags);
    CUgraph g = capture_graph(s);
    if (g != NULL)
        cuda_be_remote->callback_keep(cb);
    r = CUDA_DRV(cuLaunchHostFunc)(s, run_host_fn, cb);
    if (r == CUDA_SUCCESS && g != NULL)
        cuda_be_remote->callback_give(cb, g, &user_objects);
    return r;
}

int cuda_be_host_func(struct gvs_call *call)
{
    return cuda_be_remote->host_func(call, CUDA_SUCCESS,
                                     CUDA_ERROR_OUT_OF_MEMORY, enqueue);
}
