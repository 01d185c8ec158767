/*
 * Host callbacks (cudaLaunchHostFunc, cudaStreamAddCallback) run here, on
 * the client's notify thread: the backend holds the stream at the
 * callback's place until we report that the program's function returned
 * (docs/cudart.md, "Host callbacks").
 */
#include "streams.h"

#include <pthread.h>

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

/* Kinds of HOST_FUNC (api/10-streams.api). */
enum { KIND_HOST_FN = 0, KIND_STREAM_CALLBACK = 1 };

struct callback {
    unsigned kind;
    cudaHostFn_t fn;
    cudaStreamCallback_t cb;
    void *user;
    cudaStream_t stream; /* as the program named it, for cb */
};

/* Callbacks enqueued and not yet run, by id. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map pending;
static uint64_t last_id;

/* A forked child has a new session, where none of these will run. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (size_t i = 0; i < pending.n; i++)
        gvs_free(pending.e[i].val);
    gvs_u64map_clear(&pending);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void callbacks_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static struct callback *take(uint64_t id)
{
    pthread_mutex_lock(&lock);
    struct callback *c = gvs_u64map_remove(&pending, id);
    pthread_mutex_unlock(&lock);
    return c;
}

/* A graph's callback runs as often as the graph: its record stays. */
static struct callback *find(uint64_t id)
{
    pthread_mutex_lock(&lock);
    struct callback *c = gvs_u64map_get(&pending, id);
    pthread_mutex_unlock(&lock);
    return c;
}

uint64_t fe_callback_persistent(cudaHostFn_t fn, void *user)
{
    struct callback *c = gvs_calloc(1, sizeof(*c));
    uint64_t id = 0;
    if (c == NULL)
        return 0;
    *c = (struct callback){.kind = KIND_HOST_FN, .fn = fn, .user = user};
    pthread_mutex_lock(&lock);
    if (gvs_u64map_put(&pending, last_id + 1, c) == 0)
        id = ++last_id;
    pthread_mutex_unlock(&lock);
    if (id == 0)
        gvs_free(c);
    return id;
}

cudaError_t fe_callback_host_fn(uint64_t id, cudaHostFn_t *fn, void **user)
{
    pthread_mutex_lock(&lock);
    struct callback *c = gvs_u64map_get(&pending, id);
    if (c != NULL && c->kind == KIND_HOST_FN) {
        *fn = c->fn;
        *user = c->user;
    }
    pthread_mutex_unlock(&lock);
    return c != NULL && c->kind == KIND_HOST_FN ? cudaSuccess
                                                : cudaErrorInvalidValue;
}

/* The record is in the table before the request leaves: the backend may
 * run the callback before its reply reaches us. */
static cudaError_t enqueue(cudaStream_t stream, int per_thread,
                           struct callback *c, unsigned int flags)
{
    uint64_t id;
    pthread_mutex_lock(&lock);
    id = ++last_id;
    int rc = gvs_u64map_put(&pending, id, c);
    pthread_mutex_unlock(&lock);
    if (rc < 0) {
        gvs_free(c);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t e = cudart_rpc_HOST_FUNC(fe_stream_wire(stream, per_thread),
                                         id, c->kind, flags);
    if (e != cudaSuccess)
        gvs_free(take(id));
    return e;
}

static cudaError_t launch_host_func(cudaStream_t stream, cudaHostFn_t fn,
                                    void *user, int per_thread)
{
    if (fn == NULL)
        return cudaErrorInvalidValue;
    struct callback *c = gvs_calloc(1, sizeof(*c));
    if (c == NULL)
        return cudaErrorMemoryAllocation;
    *c = (struct callback){.kind = KIND_HOST_FN, .fn = fn, .user = user};
    return enqueue(stream, per_thread, c, 0);
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

static cudaError_t add_callback(cudaStream_t stream, cudaStreamCallback_t cb,
                                void *user, unsigned int flags,
                                int per_thread)
{
    if (cb == NULL)
        return cudaErrorInvalidValue;
    struct callback *c = gvs_calloc(1, sizeof(*c));
    if (c == NULL)
        return cudaErrorMemoryAllocation;
    *c = (struct callback){.kind = KIND_STREAM_CALLBACK,
                           .cb = cb,
                           .user = user,
                           .stream = stream};
    return enqueue(stream, per_thread, c, flags);
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

/* CALLBACK_DONE is posted: the backend's waiting callback thread needs no
 * answer, and this thread must not wait behind other lanes' work. */
static void report_done(uint64_t id)
{
    struct apigen_call c;
    if (cudart_fe_begin(&c) != cudaSuccess)
        return;
    apigen_put_u64(&c, id);
    (void)cudart_fe_post(&c, CUDART_OP_CALLBACK_DONE, 0);
}

void fe_callback_run(struct gvs_buf *body)
{
    uint64_t id;
    int32_t status;
    uint8_t keep;
    if (gvs_buf_get_u64(body, &id) < 0 || gvs_buf_get_i32(body, &status) < 0 ||
        gvs_buf_get_u8(body, &keep) < 0 || gvs_buf_expect_end(body) < 0)
        return;
    struct callback *c = keep ? find(id) : take(id);
    if (c != NULL && c->kind == KIND_HOST_FN)
        c->fn(c->user);
    else if (c != NULL)
        c->cb(c->stream, (cudaError_t)status, c->user);
    if (!keep)
        gvs_free(c);
    /* Even for an id we do not know: the stream must not stay held. */
    report_done(id);
}
