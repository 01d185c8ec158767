#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* The device this thread last made current through us, -1 before the
 * first.  A lane's calls run on whichever of the session's threads is
 * free (server/executor.c), so a call may come to a thread that never
 * ran one: CUDA would start it on device 0, but with no context current
 * until a runtime call that initializes one, and the calls that act on
 * the current context alone (cudaCtxResetPersistingL2Cache) would find
 * none.  The first call on a thread makes the lane's device current. */
static _Thread_local int thread_device = -1;

struct be_lane *be_lane(struct gvs_call *call)
{
    struct gvs_remote_lane *rl = be_remote->lane(call);
    if (rl == NULL)
        return NULL;
    /* A lane's own requests never overlap: its slot needs no lock. */
    if (rl->slot[CUDART_PLUGIN_ID] == NULL)
        rl->slot[CUDART_PLUGIN_ID] = gvs_calloc(1, sizeof(struct be_lane));
    return rl->slot[CUDART_PLUGIN_ID];
}

/* The count of launches a cudaDeviceSynchronize on this thread waits
 * for, from its entry to its after_blocking (remote_be.h, settled); and
 * whether it entered. */
static _Thread_local uint64_t settle_begin;
static _Thread_local int settling;

/* The layer's name for a lane's context (remote_be.h, device_code): a
 * device's contexts are one here, the runtime's primary one. */
static uintptr_t lane_key(const struct be_lane *l)
{
    return (uintptr_t)l->device + 1;
}

uintptr_t be_lane_key(struct gvs_call *call)
{
    struct be_lane *l = be_lane(call);
    return l != NULL ? lane_key(l) : 0;
}

/* Launches and whole-device synchronizations, for the layer's view of
 * device output. */
static void note_device_code(const struct gvs_call *call,
                             const struct be_lane *l)
{
    if (call->op == CUDART_OP_LAUNCH || call->op == CUDART_OP_LAUNCH_EX ||
        call->op == CUDART_OP_cudaGraphLaunch)
        be_remote->device_code(lane_key(l));
    settling = call->op == CUDART_OP_cudaDeviceSynchronize;
    if (settling)
        settle_begin = be_remote->settle_begin();
}

void be_lane_settled(struct gvs_call *call)
{
    struct be_lane *l = be_lane(call);
    if (settling && l != NULL && call->op == CUDART_OP_cudaDeviceSynchronize)
        be_remote->settled(call, lane_key(l), settle_begin, cudaSuccess);
    settling = 0;
}

/* The driver plugin's handlers on the same thread move its current
 * context: the device is made current again after one ran. */
cudaError_t cudart_be_enter(struct gvs_call *call)
{
    struct be_lane *l = be_lane(call);
    int moved = be_remote->context_moved(CUDART_PLUGIN_ID);
    if (l == NULL)
        return cudaErrorMemoryAllocation;
    note_device_code(call, l);
    /* The lane's capture mode is the layer's, the thread's too. */
    int mode = be_remote->lane(call)->capture_mode;
    int *thread_mode = be_remote->thread_capture_mode();
    if (mode != *thread_mode) {
        enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)mode;
        cudaError_t e = cudaThreadExchangeStreamCaptureMode(&m);
        if (e != cudaSuccess)
            return e;
        *thread_mode = mode;
    }
    /* Natively a thread's first call that acts on the current context
     * alone finds none; every other call of a device makes one current. */
    if (call->op == CUDART_OP_cudaCtxResetPersistingL2Cache && !l->context_current)
        return cudaErrorDeviceUninitialized;
    l->context_current = 1;
    if (thread_device < 0) {
        /* Where even that fails (no driver), the call itself says so;
         * the failure left as the thread's last error is cleared (the
         * thread ran nothing before). */
        if (cudaSetDevice(l->device) == cudaSuccess)
            thread_device = l->device;
        else
            (void)cudaGetLastError();
        return cudaSuccess;
    }
    if (l->device == thread_device && !moved)
        return cudaSuccess;
    cudaError_t e = cudaSetDevice(l->device);
    if (e == cudaSuccess)
        thread_device = l->device;
    return e;
}

static void lane_free(struct gvs_remote_lane *rl, void *arg)
{
    (void)arg;
    struct be_lane *l = rl->slot[CUDART_PLUGIN_ID];
    if (l == NULL)
        return;
    gvs_free(l);
    rl->slot[CUDART_PLUGIN_ID] = NULL;
}

void be_lanes_free(struct be_session *s)
{
    be_remote->lanes_each(lane_free, s);
}

/* Request: i32 device.  Reply (when one is waited for): i32 result.  The
 * device is checked when a call makes it current. */
int cudart_be_cudasetdevice(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t device;
    apigen_get_i32(&c, &device);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct be_lane *l = be_lane(call);
    if (l == NULL)
        return GVS_E_NOMEM;
    l->device = device;
    l->context_current = 1;
    apigen_put_i32(&c, cudaSuccess);
    return c.rc;
}
