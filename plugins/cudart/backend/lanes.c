#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* The device this thread last made current through us; CUDA starts
 * every thread on device 0. */
static _Thread_local int thread_device;
/* The capture mode this thread last took from a lane; CUDA starts every
 * thread in cudaStreamCaptureModeGlobal. */
static _Thread_local int thread_capture_mode;

static uint32_t slot_of(uint32_t id, uint32_t cap)
{
    return (id * 2654435761u) & (cap - 1);
}

/* Caller holds lanes_lock.  Doubles the table; 0 or GVS_E_NOMEM. */
static int grow(struct be_session *s)
{
    uint32_t cap = s->cap_lanes ? s->cap_lanes * 2 : 16;
    struct be_lane **t = gvs_calloc(cap, sizeof(*t));
    if (t == NULL)
        return GVS_E_NOMEM;
    for (uint32_t i = 0; i < s->cap_lanes; i++) {
        struct be_lane *l = s->lanes[i];
        if (l == NULL)
            continue;
        uint32_t j = slot_of(l->id, cap);
        while (t[j] != NULL)
            j = (j + 1) & (cap - 1);
        t[j] = l;
    }
    gvs_free(s->lanes);
    s->lanes = t;
    s->cap_lanes = cap;
    return 0;
}

static struct be_lane *lookup(struct be_session *s, uint32_t id)
{
    if (s->cap_lanes == 0)
        return NULL;
    uint32_t mask = s->cap_lanes - 1;
    for (uint32_t j = slot_of(id, s->cap_lanes);; j = (j + 1) & mask)
        if (s->lanes[j] == NULL || s->lanes[j]->id == id)
            return s->lanes[j];
}

static struct be_lane *add(struct be_session *s, uint32_t id)
{
    if (s->nlanes >= BE_MAX_LANES)
        return NULL;
    /* At most half full, so a probe always ends at a free slot. */
    if ((s->nlanes + 1) * 2 > s->cap_lanes && grow(s) < 0)
        return NULL;
    struct be_lane *l = gvs_calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->id = id;
    uint32_t j = slot_of(id, s->cap_lanes);
    while (s->lanes[j] != NULL)
        j = (j + 1) & (s->cap_lanes - 1);
    s->lanes[j] = l;
    s->nlanes++;
    return l;
}

struct be_lane *be_lane(struct gvs_call *call)
{
    struct be_session *s = call->state;
    pthread_mutex_lock(&s->lanes_lock);
    struct be_lane *l = lookup(s, call->lane);
    if (l == NULL)
        l = add(s, call->lane);
    pthread_mutex_unlock(&s->lanes_lock);
    return l;
}

cudaError_t cudart_be_enter(struct gvs_call *call)
{
    struct be_lane *l = be_lane(call);
    if (l == NULL)
        return cudaErrorMemoryAllocation;
    if (l->capture_mode != thread_capture_mode) {
        enum cudaStreamCaptureMode m =
            (enum cudaStreamCaptureMode)l->capture_mode;
        cudaError_t e = cudaThreadExchangeStreamCaptureMode(&m);
        if (e != cudaSuccess)
            return e;
        thread_capture_mode = l->capture_mode;
    }
    if (l->device == thread_device)
        return cudaSuccess;
    cudaError_t e = cudaSetDevice(l->device);
    if (e == cudaSuccess)
        thread_device = l->device;
    return e;
}

void be_lanes_free(struct be_session *s)
{
    for (uint32_t i = 0; i < s->cap_lanes; i++) {
        if (s->lanes[i] == NULL)
            continue;
        be_stage_free(s, s->lanes[i]);
        gvs_free(s->lanes[i]->stage);
        gvs_free(s->lanes[i]);
    }
    gvs_free(s->lanes);
    s->lanes = NULL;
    s->nlanes = s->cap_lanes = 0;
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
    apigen_put_i32(&c, cudaSuccess);
    return c.rc;
}
