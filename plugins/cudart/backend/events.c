/* Events, in the session's handle table (objects.h). */
#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/u64map.h"
#include "objects.h"

/* CUDA's event -> its id, for the queries that answer an event (a graph
 * node's). */
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map ids;

uint64_t be_event_id(cudaEvent_t ev)
{
    pthread_mutex_lock(&ids_lock);
    void *id = gvs_u64map_get(&ids, (uint64_t)(uintptr_t)ev);
    pthread_mutex_unlock(&ids_lock);
    return (uint64_t)(uintptr_t)id;
}

static int ids_put(cudaEvent_t ev, uint64_t id)
{
    pthread_mutex_lock(&ids_lock);
    int rc = gvs_u64map_put(&ids, (uint64_t)(uintptr_t)ev,
                            (void *)(uintptr_t)id);
    pthread_mutex_unlock(&ids_lock);
    return rc;
}

cudaError_t be_event(uint64_t wire, cudaEvent_t *out)
{
    struct gvs_handles *t = be_handles();
    void *e = t != NULL ? gvs_handles_get(t, BE_H_EVENT, wire) : NULL;
    *out = e;
    return e != NULL ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

/* Request: u32 flags.  Reply: i32, u64 event id. */
int cudart_be_event_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct gvs_handles *t = be_handles();
    cudaEvent_t ev = NULL;
    uint64_t id = 0;
    cudaError_t e = t != NULL ? cudart_be_enter(call)
                              : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&ev, flags);
    if (e == cudaSuccess && gvs_handles_add(t, BE_H_EVENT, ev, &id) < 0) {
        (void)cudaEventDestroy(ev);
        e = cudaErrorMemoryAllocation;
    } else if (e == cudaSuccess && ids_put(ev, id) < 0) {
        gvs_handles_remove(t, BE_H_EVENT, id);
        (void)cudaEventDestroy(ev);
        e = cudaErrorMemoryAllocation;
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, id);
    return c.rc;
}

int cudart_be_event_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t wire;
    apigen_get_u64(&c, &wire);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct gvs_handles *t = be_handles();
    cudaEvent_t ev = t != NULL ? gvs_handles_remove(t, BE_H_EVENT, wire)
                               : NULL;
    if (ev != NULL) {
        pthread_mutex_lock(&ids_lock);
        gvs_u64map_remove(&ids, (uint64_t)(uintptr_t)ev);
        pthread_mutex_unlock(&ids_lock);
    }
    cudaError_t e = ev != NULL ? cudaEventDestroy(ev)
                               : cudaErrorInvalidResourceHandle;
    apigen_put_i32(&c, e);
    return c.rc;
}
