/* The first step of every op (be.h): the driver, and the lane's current
 * context made the calling thread's. */
#include "be.h"

#include <pthread.h>

#include "cuda_ops.h"

struct cuda_be_driver cuda_be_drv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static void load(void)
{
    loaded = cuda_be_driver_load() == 0;
}

/* The context this thread last made current for a lane. */
static _Thread_local CUcontext thread_ctx;

uintptr_t cuda_be_context_key(struct gvs_call *call)
{
    struct gvs_remote_lane *l = cuda_be_remote->lane(call);
    CUcontext ctx = NULL;
    if (l == NULL || l->context == 0 ||
        cuda_be_ctx(l->context, &ctx) != CUDA_SUCCESS)
        return 0;
    return (uintptr_t)ctx;
}

CUresult cuda_be_enter(struct gvs_call *call)
{
    pthread_once(&once, load);
    if (!loaded)
        return CUDA_ERROR_NO_DEVICE;
    struct gvs_remote_lane *l = cuda_be_remote->lane(call);
    int moved = cuda_be_remote->context_moved(CUDA_PLUGIN_ID);
    CUcontext ctx = NULL;
    if (l == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* The lane's capture mode is the thread's, whichever plugin put it
     * there (remote_be.h). */
    int *thread_mode = cuda_be_remote->thread_capture_mode();
    if (l->capture_mode != *thread_mode) {
        CUstreamCaptureMode m = (CUstreamCaptureMode)l->capture_mode;
        CUresult r = CUDA_DRV(cuThreadExchangeStreamCaptureMode)(&m);
        if (r != CUDA_SUCCESS)
            return r;
        *thread_mode = l->capture_mode;
    }
    /* A lane that never set a context has none, as a new thread. */
    if (l->context != 0) {
        CUresult r = cuda_be_ctx(l->context, &ctx);
        if (r != CUDA_SUCCESS)
            return r;
    }
    /* For the layer's view of device output (remote_be.h, device_code);
     * without a context nothing launches. */
    if (ctx != NULL &&
        (call->op == CUDA_OP_LAUNCH || call->op == CUDA_OP_cuGraphLaunch))
        cuda_be_remote->device_code((uintptr_t)ctx);
    if (ctx == thread_ctx && !moved)
        return CUDA_SUCCESS;
    CUresult r = CUDA_DRV(cuCtxSetCurrent)(ctx);
    if (r == CUDA_SUCCESS)
        thread_ctx = ctx;
    return r;
}
