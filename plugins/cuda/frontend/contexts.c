/* Contexts (call.h): the primary contexts and created contexts, as the
 * backend's ids, and each thread's context stack, kept here so that
 * cuCtxGetCurrent, which NVIDIA's runtime calls before almost every
 * call, costs nothing. */
#include "call.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "exports.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "gvs_remote.h"

/* What is known of each context: its device, whether it is primary. */
struct ctx_info {
    CUdevice dev;
    int primary;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map known;

/* The thread's stack, top last, and what its lane has on the backend. */
static _Thread_local CUcontext *stack;
static _Thread_local size_t depth, cap;
static _Thread_local uint64_t lane_ctx;
/* The stack's only entry was put there for the runtime frontend's device
 * (cuda_fe_ctx_current), not by a driver call of the program. */
static _Thread_local int adopted;

static uint64_t id_of(CUcontext ctx)
{
    return (uint64_t)(uintptr_t)ctx;
}

/* 0 and the context's facts, or -1 if it is not one of the session's. */
static int info_of(CUcontext ctx, struct ctx_info *out)
{
    pthread_mutex_lock(&lock);
    struct ctx_info *i = gvs_u64map_get(&known, id_of(ctx));
    if (i != NULL)
        *out = *i;
    pthread_mutex_unlock(&lock);
    return i != NULL ? 0 : -1;
}

static CUresult remember(uint64_t id, CUdevice dev, int primary)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&lock);
    if (gvs_u64map_get(&known, id) == NULL) {
        struct ctx_info *i = gvs_malloc(sizeof(*i));
        if (i == NULL)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else if (*i = (struct ctx_info){dev, primary},
                 gvs_u64map_put(&known, id, i) < 0) {
            gvs_free(i);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static void forget(CUcontext ctx)
{
    pthread_mutex_lock(&lock);
    gvs_free(gvs_u64map_remove(&known, id_of(ctx)));
    pthread_mutex_unlock(&lock);
}

static CUresult push(CUcontext ctx);
static CUcontext primary_of(CUdevice dev);

static CUresult call_id(uint16_t op, struct apigen_call *c, uint64_t *id);

/* The runtime device this thread last asked the backend about. */
static _Thread_local int asked_dev = -1;

/* dev's primary context, which gvs's runtime frontend holds on the
 * backend (its plugin made it current there for the thread), where ask:
 * learnt from the backend the first time (RUNTIME_PRIMARY_CTX), once per
 * thread and device, so that no request being built is ever interrupted
 * (cuda_fe_begin asks first). */
static CUcontext runtime_primary(CUdevice dev, int ask)
{
    CUcontext p = primary_of(dev);
    struct apigen_call c;
    uint64_t id = 0;
    if (p != NULL || !ask || asked_dev == dev)
        return p;
    asked_dev = dev;
    if (cuda_fe_begin(&c) != CUDA_SUCCESS)
        return NULL;
    apigen_put_i32(&c, dev);
    if (call_id(CUDA_OP_RUNTIME_PRIMARY_CTX, &c, &id) != CUDA_SUCCESS ||
        remember(id, dev, 1) != CUDA_SUCCESS)
        return NULL;
    return (CUcontext)(uintptr_t)id;
}

/* NVIDIA's runtime makes its device's primary context current on each
 * thread it serves, and a library's runtime in the same process, or the
 * program's own driver calls, use the context they find.  Where gvs's
 * runtime frontend serves the program, the thread's device is the
 * layer's (gvs_remote_runtime_device): with no context of the program's
 * own, that device's primary context is the thread's, as natively. */
static void adopt_runtime_device(int ask)
{
    if (depth > 1 || (depth == 1 && !adopted))
        return;
    int dev = gvs_remote_runtime_device();
    CUcontext p = dev >= 0 ? runtime_primary(dev, ask) : NULL;
    if (p == NULL)
        return;
    if (depth == 1)
        stack[0] = p;
    else if (push(p) == CUDA_SUCCESS)
        adopted = 1;
}

CUcontext cuda_fe_ctx_current(void)
{
    adopt_runtime_device(1);
    return depth > 0 ? stack[depth - 1] : NULL;
}

CUcontext cuda_fe_ctx_current_locked(void)
{
    adopt_runtime_device(0);
    return depth > 0 ? stack[depth - 1] : NULL;
}

int cuda_fe_ctx_sync_locked(struct gvs_client *cl)
{
    uint64_t cur = id_of(cuda_fe_ctx_current_locked());
    if (cur == lane_ctx)
        return 0;
    int rc = gvs_remote_set_context_locked(cl, cur);
    if (rc == 0)
        lane_ctx = cur;
    return rc;
}

int cuda_fe_ctx_device_of(CUcontext ctx, CUdevice *dev)
{
    struct ctx_info i;
    if (ctx == NULL || info_of(ctx, &i) < 0)
        return -1;
    *dev = i.dev;
    return 0;
}

CUresult cuda_fe_ctx_device(CUdevice *dev)
{
    struct ctx_info i;
    CUcontext cur = cuda_fe_ctx_current();
    if (cur == NULL || info_of(cur, &i) < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = i.dev;
    return CUDA_SUCCESS;
}

/* Runs in the child's only thread. */
void cuda_fe_ctx_fork_child(void)
{
    depth = 0;
    lane_ctx = 0;
    asked_dev = -1;
    gvs_u64map_clear(&known);
}

/* A thread's stack goes when the thread does. */
static pthread_key_t stack_key;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;

static void stack_free(void *s)
{
    gvs_free(s);
}

static void stack_key_init(void)
{
    (void)pthread_key_create(&stack_key, stack_free);
}

static CUresult push(CUcontext ctx)
{
    adopted = 0;
    if (depth == cap) {
        size_t n = cap ? cap * 2 : 8;
        CUcontext *s = gvs_realloc(stack, n * sizeof(*s));
        if (s == NULL)
            return CUDA_ERROR_OUT_OF_MEMORY;
        pthread_once(&stack_once, stack_key_init);
        (void)pthread_setspecific(stack_key, s);
        stack = s;
        cap = n;
    }
    stack[depth++] = ctx;
    return CUDA_SUCCESS;
}

/* A round trip whose reply is i32 result, u64 id. */
static CUresult call_id(uint16_t op, struct apigen_call *c, uint64_t *id)
{
    CUresult r = cuda_fe_run(c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(c, id);
    return cuda_fe_end(c, r);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(&c, dev);
    r = call_id(CUDA_OP_PRIMARY_CTX_RETAIN, &c, &id);
    if (r == CUDA_SUCCESS)
        r = remember(id, dev, 1);
    if (r == CUDA_SUCCESS)
        *pctx = (CUcontext)(uintptr_t)id;
    return r;
}

/* The primary context of dev as this process knows it, or NULL. */
static CUcontext primary_of(CUdevice dev)
{
    CUcontext found = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < known.n && found == NULL; i++) {
        const struct ctx_info *in = known.e[i].val;
        if (in->primary && in->dev == dev)
            found = (CUcontext)(uintptr_t)known.e[i].key;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    gvs_remote_primary_changed();
    return cuda_rpc_cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    gvs_remote_primary_changed();
    return cuda_rpc_cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

/* NVIDIA's runtime asks before nearly every call: answered from the
 * layer's table while the context is known active (gvs_remote.h). */
CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
                                    int *active)
{
    unsigned f;
    if (cuda_fe_initialized() && flags != NULL && active != NULL &&
        gvs_remote_primary_state(dev, &f)) {
        *flags = f;
        *active = 1;
        return CUDA_SUCCESS;
    }
    uint64_t asked = gvs_remote_primary_epoch();
    CUresult r = cuda_rpc_cuDevicePrimaryCtxGetState(dev, flags, active);
    if (r == CUDA_SUCCESS)
        gvs_remote_primary_keep(dev, *flags, *active, asked);
    return r;
}

/* The forms of CUDA 10 and before, the same calls. */
CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    return cuDevicePrimaryCtxReset_v2(dev);
}

CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

/* The runtime's per-context state goes first, as the driver runs its
 * destructors before the context is torn down. */
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    gvs_remote_primary_changed();
    CUcontext p = primary_of(dev);
    if (p != NULL) {
        cuda_fe_ctx_storage_release(p);
        gvs_remote_known_forget_owner(CUDA_PLUGIN_ID, (uint64_t)(uintptr_t)p);
    }
    return cuda_rpc_cuDevicePrimaryCtxReset_v2(dev);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    *pctx = cuda_fe_ctx_current();
    return CUDA_SUCCESS;
}

static CUresult check(CUcontext ctx)
{
    struct ctx_info i;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    return info_of(ctx, &i) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* NULL pops the top; otherwise the top is replaced, or pushed on an
 * empty stack (the driver's documented behaviour). */
CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (ctx == NULL) {
        if (!cuda_fe_initialized())
            return CUDA_ERROR_NOT_INITIALIZED;
        if (depth > 0)
            depth--;
        adopted = 0;
        return CUDA_SUCCESS;
    }
    CUresult r = check(ctx);
    if (r != CUDA_SUCCESS)
        return r;
    if (depth == 0)
        return push(ctx);
    stack[depth - 1] = ctx;
    adopted = 0;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult r = check(ctx);
    return r == CUDA_SUCCESS ? push(ctx) : r;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    adopted = 0;
    if (pctx != NULL)
        *pctx = stack[depth];
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    if (device == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    return cuda_fe_ctx_device(device);
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    struct ctx_info i;
    if (ctx == NULL)
        return cuCtxGetDevice(device);
    CUresult r = check(ctx);
    if (r == CUDA_SUCCESS && device == NULL)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && info_of(ctx, &i) == 0)
        *device = i.dev;
    return r;
}

/* The backend's id, unique in the session as the driver's are in a
 * process. */
CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    if (ctxId == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (ctx == NULL && (ctx = cuda_fe_ctx_current()) == NULL)
        return cuda_fe_initialized() ? CUDA_ERROR_INVALID_CONTEXT
                                     : CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = check(ctx);
    if (r == CUDA_SUCCESS)
        *ctxId = id_of(ctx);
    return r;
}

static CUresult synchronize(CUcontext ctx)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, id_of(ctx));
    r = cuda_fe_run(&c, CUDA_OP_CTX_SYNCHRONIZE, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

CUresult cuCtxSynchronize(void)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (cuda_fe_ctx_current() == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    return synchronize(NULL);
}

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    if (ctx == NULL)
        return cuCtxSynchronize();
    CUresult r = check(ctx);
    return r == CUDA_SUCCESS ? synchronize(ctx) : r;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u32(&c, flags);
    apigen_put_i32(&c, dev);
    r = call_id(CUDA_OP_CTX_CREATE, &c, &id);
    if (r == CUDA_SUCCESS)
        r = remember(id, dev, 0);
    if (r == CUDA_SUCCESS)
        r = push((CUcontext)(uintptr_t)id);
    if (r == CUDA_SUCCESS)
        *pctx = (CUcontext)(uintptr_t)id;
    return r;
}

/* Execution affinity and CIG parameters are not forwarded. */
CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                        int numParams, unsigned int flags, CUdevice dev)
{
    if (numParams != 0 || paramsArray != NULL)
        return CUDA_ERROR_NOT_SUPPORTED;
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                        unsigned int flags, CUdevice dev)
{
    if (ctxCreateParams != NULL && (ctxCreateParams->numExecAffinityParams != 0 ||
                                    ctxCreateParams->cigParams != NULL))
        return CUDA_ERROR_NOT_SUPPORTED;
    return cuCtxCreate_v2(pctx, flags, dev);
}

static _Atomic uint64_t destroyed;

uint64_t cuda_fe_ctx_epoch(void)
{
    return atomic_load(&destroyed) + gvs_remote_primary_epoch();
}

/* The runtime's state of the context goes first; the context leaves this
 * thread's stack (other threads find it invalid from now). */
CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    struct apigen_call c;
    struct ctx_info i;
    CUresult r = check(ctx);
    if (r != CUDA_SUCCESS)
        return r;
    if (info_of(ctx, &i) == 0 && i.primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    cuda_fe_ctx_storage_release(ctx);
    gvs_remote_known_forget_owner(CUDA_PLUGIN_ID, (uint64_t)(uintptr_t)ctx);
    atomic_fetch_add(&destroyed, 1);
    r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, id_of(ctx));
    r = cuda_fe_run(&c, CUDA_OP_CTX_DESTROY, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    forget(ctx);
    size_t k = 0;
    for (size_t j = 0; j < depth; j++)
        if (stack[j] != ctx)
            stack[k++] = stack[j];
    depth = k;
    return CUDA_SUCCESS;
}
