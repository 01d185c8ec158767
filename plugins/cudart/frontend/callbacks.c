/*
 * Host callbacks (cudaLaunchHostFunc, cudaStreamAddCallback) run on the
 * client's notify thread through the remoting layer's callbacks
 * (gvs_remote.h): the backend holds the stream at the callback's place
 * until the layer reports that the program's function returned
 * (docs/cudart.md, "Host callbacks").
 */
#include "streams.h"

#include "cudart_fe_gen.h"
#include "gvs_remote.h"

/* Kinds of HOST_FUNC (api/10-streams.api). */
enum { KIND_HOST_FN = 0, KIND_STREAM_CALLBACK = 1 };

static void run_host_fn(const struct gvs_remote_callback *cb, int32_t status)
{
    (void)status;
    ((cudaHostFn_t)cb->fn)(cb->user);
}

static void run_stream_callback(const struct gvs_remote_callback *cb,
                                int32_t status)
{
    ((cudaStreamCallback_t)cb->fn)((cudaStream_t)cb->stream,
                                   (cudaError_t)status, cb->user);
}

uint64_t fe_callback_persistent(cudaHostFn_t fn, void *user)
{
    struct gvs_remote_callback cb = {
        .run = run_host_fn, .fn = (void (*)(void))fn, .user = user};
    return gvs_remote_callback_add(&cb);
}

cudaError_t fe_callback_host_fn(uint64_t id, cudaHostFn_t *fn, void **user)
{
    struct gvs_remote_callback cb;
    if (gvs_remote_callback_find(id, &cb) < 0 || cb.run != run_host_fn)
        return cudaErrorInvalidValue;
    *fn = (cudaHostFn_t)cb.fn;
    *user = cb.user;
    return cudaSuccess;
}

static cudaError_t enqueue(cudaStream_t stream, int per_thread,
                           const struct gvs_remote_callback *cb,
                           unsigned int kind, unsigned int flags)
{
    if (cb->fn == NULL)
        return cudaErrorInvalidValue;
    uint64_t id = gvs_remote_callback_add(cb);
    if (id == 0)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudart_rpc_HOST_FUNC(fe_stream_wire(stream, per_thread),
                                         id, kind, flags);
    if (e != cudaSuccess)
        gvs_remote_callback_drop(id);
    return e;
}

static cudaError_t launch_host_func(cudaStream_t stream, cudaHostFn_t fn,
                                    void *user, int per_thread)
{
    struct gvs_remote_callback cb = {
        .run = run_host_fn, .fn = (void (*)(void))fn, .user = user};
    return enqueue(stream, per_thread, &cb, KIND_HOST_FN, 0);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
                               void *userData)
{
    return cudart_fe_ret(launch_host_func(stream, fn, userData, 0));
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
                                    void *userData)
{
    return cudart_fe_ret(launch_host_func(stream, fn, userData, 1));
}

static cudaError_t add_callback(cudaStream_t stream, cudaStreamCallback_t fn,
                                void *user, unsigned int flags,
                                int per_thread)
{
    struct gvs_remote_callback cb = {.run = run_stream_callback,
                                     .fn = (void (*)(void))fn,
                                     .user = user,
                                     .stream = stream};
    return enqueue(stream, per_thread, &cb, KIND_STREAM_CALLBACK, flags);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream,
                                  cudaStreamCallback_t callback,
                                  void *userData, unsigned int flags)
{
    return cudart_fe_ret(
        add_callback(stream, callback, userData, flags, 0));
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
                                       cudaStreamCallback_t callback,
                                       void *userData, unsigned int flags)
{
    return cudart_fe_ret(
        add_callback(stream, callback, userData, flags, 1));
}
