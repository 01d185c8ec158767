/*
 * Host callbacks run on the client (docs/cudart.md, "Host callbacks"),
 * through the remoting layer's callbacks (remote_be.h): each one is
 * enqueued as a host function of ours whose data is the layer's record
 * of the client's callback id, and runs it there when CUDA calls it.
 *
 * A callback of a graph (a host node, or a host function captured from a
 * stream) runs each time the graph does: its record is kept, and goes
 * with the graph (remote_be.h, callback_give).
 */
#include "be.h"

#include "cudart_be_gen.h"
#include "objects.h"

/* Kinds of HOST_FUNC (api/10-streams.api, remote_be.h). */
enum { KIND_HOST_FN = 0, KIND_STREAM_CALLBACK = 1 };

static void CUDART_CB run_host_fn(void *arg)
{
    be_remote->callback_run(arg, cudaSuccess);
}

static void CUDART_CB run_stream_callback(cudaStream_t stream,
                                          cudaError_t status, void *arg)
{
    (void)stream;
    be_remote->callback_run(arg, status);
}

cudaError_t be_callback_node(struct gvs_call *call, uint64_t id,
                             struct cudaHostNodeParams *out)
{
    (void)call;
    struct gvs_remote_callback *cb = be_remote->callback_new(id, 1);
    if (cb == NULL)
        return cudaErrorMemoryAllocation;
    *out = (struct cudaHostNodeParams){run_host_fn, cb};
    return cudaSuccess;
}

uint64_t be_callback_node_id(const struct cudaHostNodeParams *p)
{
    if (p->fn != run_host_fn || p->userData == NULL)
        return 0;
    return be_remote->callback_id(p->userData);
}

/* A refusal here only makes the layer hold the record: it leaves
 * nothing behind for a later cudaGetLastError. */
static int32_t quiet(cudaError_t e)
{
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return e;
}

static int32_t object_create(void **object, void *ptr,
                             void (*destroy)(void *ptr))
{
    return quiet(cudaUserObjectCreate((cudaUserObject_t *)object, ptr,
                                      destroy, 1,
                                      cudaUserObjectNoDestructorSync));
}

static int32_t object_move(void *graph, void *object)
{
    return quiet(cudaGraphRetainUserObject(graph, object, 1,
                                           cudaGraphUserObjectMove));
}

static int32_t object_release(void *object)
{
    return cudaUserObjectRelease(object, 1);
}

static const struct gvs_remote_user_objects user_objects = {
    object_create, object_move, object_release};

void be_callback_give(struct cudaHostNodeParams *p, cudaGraph_t g)
{
    if (p->userData != NULL)
        be_remote->callback_give(p->userData, g, &user_objects);
    p->userData = NULL;
}

void be_callback_drop(struct cudaHostNodeParams *p)
{
    if (p->userData != NULL)
        be_remote->callback_free(p->userData);
    p->userData = NULL;
}

/* The graph s captures into, NULL when it captures none. */
static cudaGraph_t capture_graph(cudaStream_t s)
{
    enum cudaStreamCaptureStatus st;
    unsigned long long id;
    cudaGraph_t g = NULL;
    size_t n;
    if (cudaStreamGetCaptureInfo(s, &st, &id, &g, NULL, NULL, &n) !=
            cudaSuccess ||
        st != cudaStreamCaptureStatusActive)
        return NULL;
    return g;
}

/* HOST_FUNC's enqueueing (remote_be.h, host_func).  A host function
 * launched into a capturing stream becomes a node of the capture's
 * graph: its record is kept for every run of the graph, and goes with
 * it. */
static int32_t enqueue(struct gvs_call *call, uint64_t stream,
                       uint32_t kind, uint32_t flags,
                       struct gvs_remote_callback *cb)
{
    cudaStream_t s;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    if (e != cudaSuccess)
        return e;
    if (kind == KIND_STREAM_CALLBACK)
        return cudaStreamAddCallback(s, run_stream_callback, cb, flags);
    cudaGraph_t g = capture_graph(s);
    if (g != NULL)
        be_remote->callback_keep(cb);
    e = cudaLaunchHostFunc(s, run_host_fn, cb);
    if (e == cudaSuccess && g != NULL)
        be_remote->callback_give(cb, g, &user_objects);
    return e;
}

int cudart_be_host_func(struct gvs_call *call)
{
    return be_remote->host_func(call, cudaSuccess, cudaErrorMemoryAllocation,
                                enqueue);
}
