/*
 * Host functions and stream callbacks (cuLaunchHostFunc,
 * cuStreamAddCallback and their _ptsz twins): the program's function runs
 * on the client's notify thread, in stream order, through the remoting
 * layer's callbacks (gvs_remote.h; docs/driver.md, "Host functions and
 * callbacks").  It runs with the context that was current where it was
 * enqueued, as the driver's callback thread has its stream's context,
 * so that a driver call it makes names the right one.
 */
#include "call.h"

#include "cuda_ops.h"
#include "gvs_remote.h"

/* Kinds of HOST_FUNC (cuda.api). */
enum { KIND_HOST_FN = 0, KIND_STREAM_CALLBACK = 1 };

/* The context the callback was enqueued in, made the notify thread's
 * for the call: whether it was pushed. */
static int push(const struct gvs_remote_callback *cb)
{
    return cb->context != NULL &&
           cuCtxPushCurrent_v2((CUcontext)cb->context) == CUDA_SUCCESS;
}

static void pop(int pushed)
{
    CUcontext ctx;
    if (pushed)
        (void)cuCtxPopCurrent_v2(&ctx);
}

static void run_host_fn(const struct gvs_remote_callback *cb, int32_t status)
{
    int pushed = push(cb);
    (void)status;
    ((CUhostFn)cb->fn)(cb->user);
    pop(pushed);
}

static void run_stream_callback(const struct gvs_remote_callback *cb,
                                int32_t status)
{
    int pushed = push(cb);
    ((CUstreamCallback)cb->fn)((CUstream)cb->stream, (CUresult)status,
                               cb->user);
    pop(pushed);
}

CUresult cuda_fe_host_node(CUhostFn fn, void *user, uint64_t *id)
{
    if (fn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct gvs_remote_callback cb = {
        .run = run_host_fn,
        .fn = (void (*)(void))fn,
        .user = user,
        .context = cuda_fe_ctx_current(),
    };
    *id = gvs_remote_callback_add(&cb);
    return *id != 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuda_fe_host_node_params(uint64_t id, CUDA_HOST_NODE_PARAMS *out)
{
    struct gvs_remote_callback cb;
    if (gvs_remote_callback_find(id, &cb) < 0 || cb.run != run_host_fn)
        return CUDA_ERROR_INVALID_VALUE;
    out->fn = (CUhostFn)cb.fn;
    out->userData = cb.user;
    return CUDA_SUCCESS;
}

static CUresult enqueue(CUstream stream, int per_thread, void (*fn)(void),
                        void *user, uint32_t kind, uint32_t flags)
{
    struct apigen_call c;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (fn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct gvs_remote_callback cb = {
        .run = kind == KIND_HOST_FN ? run_host_fn : run_stream_callback,
        .fn = fn,
        .user = user,
        .stream = stream,
        .context = cuda_fe_ctx_current(),
    };
    uint64_t id = gvs_remote_callback_add(&cb);
    if (id == 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = cuda_fe_begin(&c);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, cuda_fe_stream_wire(stream, per_thread));
        apigen_put_u64(&c, id);
        apigen_put_u32(&c, kind);
        apigen_put_u32(&c, flags);
        r = cuda_fe_end(&c, cuda_fe_run(&c, CUDA_OP_HOST_FUNC,
                                        APIGEN_DEVICE));
    }
    if (r != CUDA_SUCCESS)
        gvs_remote_callback_drop(id);
    return r;
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return enqueue(hStream, 0, (void (*)(void))fn, userData, KIND_HOST_FN,
                   0);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn,
                               void *userData)
{
    return enqueue(hStream, 1, (void (*)(void))fn, userData, KIND_HOST_FN,
                   0);
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                             void *userData, unsigned int flags)
{
    return enqueue(hStream, 0, (void (*)(void))callback, userData,
                   KIND_STREAM_CALLBACK, flags);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream,
                                  CUstreamCallback callback, void *userData,
                                  unsigned int flags)
{
    return enqueue(hStream, 1, (void (*)(void))callback, userData,
                   KIND_STREAM_CALLBACK, flags);
}
