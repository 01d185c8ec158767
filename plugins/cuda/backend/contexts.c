/* Contexts (cuda.api): the primary contexts the session retained and the
 * contexts it created, as ids of the layer's handle table.  A context
 * keeps its id for the session's life: the driver hands out the same
 * primary context again after a release, and the client may still hold
 * its id. */
#include "be.h"

#include <pthread.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

/* The id of each context the session knows, by its CUcontext. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map ids;

CUresult cuda_be_ctx(uint64_t wire, CUcontext *out)
{
    if (wire == 0) {
        *out = NULL;
        return CUDA_SUCCESS;
    }
    struct cuda_be_ctx *c =
        gvs_handles_get(cuda_be_remote->handles(), GVS_RH_CONTEXT, wire);
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c->ctx;
    return CUDA_SUCCESS;
}

uint64_t cuda_be_ctx_id_of(CUcontext ctx)
{
    pthread_mutex_lock(&lock);
    uint64_t *known = gvs_u64map_get(&ids, (uint64_t)(uintptr_t)ctx);
    uint64_t id = known != NULL ? *known : 0;
    pthread_mutex_unlock(&lock);
    return id;
}

/* The id of ctx, entered in the table if it is new; 0 when out of
 * memory. */
static uint64_t ctx_id(CUcontext ctx, CUdevice dev, int primary)
{
    uint64_t id = 0;
    pthread_mutex_lock(&lock);
    uint64_t *known = gvs_u64map_get(&ids, (uint64_t)(uintptr_t)ctx);
    if (known != NULL) {
        id = *known;
        goto out;
    }
    struct cuda_be_ctx *c = gvs_malloc(sizeof(*c));
    uint64_t *slot = gvs_malloc(sizeof(*slot));
    if (c == NULL || slot == NULL ||
        gvs_handles_add(cuda_be_remote->handles(), GVS_RH_CONTEXT, c, &id) <
            0) {
        gvs_free(c);
        gvs_free(slot);
        goto out;
    }
    *c = (struct cuda_be_ctx){ctx, dev, primary};
    *slot = id;
    if (gvs_u64map_put(&ids, (uint64_t)(uintptr_t)ctx, slot) < 0) {
        gvs_free(gvs_handles_remove(cuda_be_remote->handles(), GVS_RH_CONTEXT,
                                    id));
        gvs_free(slot);
        id = 0;
    }
out:
    pthread_mutex_unlock(&lock);
    return id;
}

/* Request: i32 dev.  Reply: i32.  reset: cuDevicePrimaryCtxReset_v2,
 * else cuDevicePrimaryCtxRelease_v2, which destroys the context once
 * its last retain goes.  A failure posted in the context before a reset
 * dies with it: the program saw it at the call natively, and the reset
 * answers success. */
static int primary_release(struct gvs_call *call, int reset)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t dev;
    unsigned int flags;
    int active = 0;
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    cuda_be_remote->context_ending(call, &cuda_be_pinner);
    if (r == CUDA_SUCCESS)
        r = reset ? CUDA_DRV(cuDevicePrimaryCtxReset_v2)(dev)
                  : CUDA_DRV(cuDevicePrimaryCtxRelease_v2)(dev);
    if (r == CUDA_SUCCESS &&
        (reset || CUDA_DRV(cuDevicePrimaryCtxGetState)(dev, &flags,
                                                       &active) !=
                      CUDA_SUCCESS ||
         !active))
        cuda_be_remote->ptds_lost(NULL, dev);
    if (r == CUDA_SUCCESS && reset)
        cuda_be_remote->latch_clear(call);
    apigen_put_i32(&c, r);
    return c.rc;
}

int cuda_be_cudeviceprimaryctxrelease_v2(struct gvs_call *call)
{
    return primary_release(call, 0);
}

int cuda_be_cudeviceprimaryctxreset_v2(struct gvs_call *call)
{
    return primary_release(call, 1);
}

void cuda_be_reply_id(struct apigen_call *c, CUresult r, uint64_t id)
{
    apigen_put_i32(c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_u64(c, id);
}

/* Request: i32 dev.  Reply: i32, u64 id.  keep: the retain stays
 * (PRIMARY_CTX_RETAIN).  Else the op names the context the runtime
 * holds (RUNTIME_PRIMARY_CTX), released again at once; but where the
 * runtime plugin has not made it yet (it starts a device at its first
 * call there, not at cudaSetDevice as NVIDIA's runtime does) the retain
 * stays, as the runtime's would have. */
static int primary_ctx_id(struct gvs_call *call, int keep)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t dev;
    CUcontext ctx = NULL;
    uint64_t id = 0;
    unsigned int flags;
    int active = 0;
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && !keep &&
        CUDA_DRV(cuDevicePrimaryCtxGetState)(dev, &flags, &active) !=
            CUDA_SUCCESS)
        active = 0;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuDevicePrimaryCtxRetain)(&ctx, dev);
    if (r == CUDA_SUCCESS && (id = ctx_id(ctx, dev, 1)) == 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if ((r == CUDA_SUCCESS && active) || (ctx != NULL && id == 0))
        (void)CUDA_DRV(cuDevicePrimaryCtxRelease_v2)(dev);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

int cuda_be_primary_ctx_retain(struct gvs_call *call)
{
    return primary_ctx_id(call, 1);
}

int cuda_be_runtime_primary_ctx(struct gvs_call *call)
{
    return primary_ctx_id(call, 0);
}

/* Request: u32 flags, i32 dev.  Reply: i32, u64 id.  The new context is
 * current on the handler's thread, as cuCtxCreate leaves it; the
 * frontend pushes it on the client thread's stack. */
int cuda_be_ctx_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    int32_t dev;
    CUcontext ctx = NULL;
    uint64_t id = 0;
    apigen_get_u32(&c, &flags);
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuCtxCreate_v2)(&ctx, flags, dev);
    if (r == CUDA_SUCCESS && (id = ctx_id(ctx, dev, 0)) == 0) {
        (void)CUDA_DRV(cuCtxDestroy_v2)(ctx);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* The next call of any lane on this thread makes its own current. */
    if (r == CUDA_SUCCESS)
        (void)cuda_be_remote->context_moved(GVS_REMOTE_CONTEXT_LOST);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* Request: u64 id.  Reply: i32.  A primary context is not destroyed
 * (CUDA_ERROR_INVALID_CONTEXT, as the driver answers). */
int cuda_be_ctx_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    struct cuda_be_ctx *ctx = NULL;
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&lock);
        ctx = gvs_handles_get(cuda_be_remote->handles(), GVS_RH_CONTEXT, id);
        if (ctx == NULL || ctx->primary)
            r = CUDA_ERROR_INVALID_CONTEXT;
        else {
            gvs_handles_remove(cuda_be_remote->handles(), GVS_RH_CONTEXT, id);
            gvs_free(gvs_u64map_remove(&ids, (uint64_t)(uintptr_t)ctx->ctx));
        }
        pthread_mutex_unlock(&lock);
    }
    if (r == CUDA_SUCCESS) {
        cuda_be_remote->context_ending(call, &cuda_be_pinner);
        r = CUDA_DRV(cuCtxDestroy_v2)(ctx->ctx);
        cuda_be_remote->ptds_lost(ctx->ctx, ctx->dev);
        gvs_free(ctx);
        (void)cuda_be_remote->context_moved(GVS_REMOTE_CONTEXT_LOST);
    }
    apigen_put_i32(&c, r);
    return c.rc;
}

/* The context a CTX_SYNCHRONIZE on this thread waited for (NULL: none)
 * and the launches it covers, from the handler to its after_blocking
 * (remote_be.h, settled). */
static _Thread_local CUcontext settle_ctx;
static _Thread_local uint64_t settle_begin;

/* Request: u64 id, 0 for the lane's current context.  Reply: i32. */
int cuda_be_ctx_synchronize(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    CUcontext ctx = NULL, saved = NULL;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    uint64_t begin = cuda_be_remote->settle_begin();
    if (r == CUDA_SUCCESS && id == 0) {
        (void)CUDA_DRV(cuCtxGetCurrent)(&ctx);
        r = CUDA_DRV(cuCtxSynchronize)();
    } else if (r == CUDA_SUCCESS && (r = cuda_be_ctx(id, &ctx)) ==
                                        CUDA_SUCCESS) {
        (void)CUDA_DRV(cuCtxGetCurrent)(&saved);
        r = CUDA_DRV(cuCtxSetCurrent)(ctx);
        if (r == CUDA_SUCCESS)
            r = CUDA_DRV(cuCtxSynchronize)();
        (void)CUDA_DRV(cuCtxSetCurrent)(saved);
    }
    settle_ctx = r == CUDA_SUCCESS ? ctx : NULL;
    settle_begin = begin;
    apigen_put_i32(&c, r);
    return c.rc;
}

/* A posted call's failure (an event record or stream wait the frontend
 * proved could not fail at once): the lane's next synchronizing call's,
 * as a kernel's is. */
void cuda_be_posted_failure(struct gvs_call *call, int r)
{
    cuda_be_remote->latch(call, CUDA_PLUGIN_ID, (int32_t)r);
}

/* What the synchronization made visible reaches the client first: the
 * device's printf output, a failure posted earlier.  Not in the reply of
 * a HOSTMEM_SHARE, which the layer takes (a failure there only means
 * memory of the client's own): the failure waits for the lane's next
 * synchronizing call. */
void cuda_be_after_blocking(struct gvs_call *call)
{
    cuda_be_remote->output_flush();
    if (call->op == CUDA_OP_CTX_SYNCHRONIZE && settle_ctx != NULL)
        cuda_be_remote->settled(call, (uintptr_t)settle_ctx, settle_begin,
                                CUDA_SUCCESS);
    settle_ctx = NULL;
    if (call->op != CUDA_OP_HOSTMEM_SHARE)
        cuda_be_remote->report_latched(call, CUDA_PLUGIN_ID, CUDA_SUCCESS);
}

void cuda_be_contexts_free(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ids.n; i++) {
        uint64_t *id = ids.e[i].val;
        struct cuda_be_ctx *c = gvs_handles_remove(cuda_be_remote->handles(),
                                                   GVS_RH_CONTEXT, *id);
        /* Only a driver that was loaded made it. */
        if (c != NULL && !c->primary)
            (void)CUDA_DRV(cuCtxDestroy_v2)(c->ctx);
        gvs_free(c);
        gvs_free(id);
    }
    gvs_u64map_clear(&ids);
    pthread_mutex_unlock(&lock);
}
