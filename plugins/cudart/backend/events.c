/* Events, in the session's handle table (objects.h). */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "objects.h"

cudaError_t be_event(uint64_t wire, cudaEvent_t *out)
{
    struct gvs_handles *t = be_handles();
    void *e = t != NULL ? gvs_handles_get(t, BE_H_EVENT, wire) : NULL;
    *out = e;
    return e != NULL ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

/* Decodes a request that is one u64 event and resolves it.  Returns
 * c->rc (negative: malformed); *e is the result so far. */
static int event_request(struct apigen_call *c, cudaEvent_t *ev,
                         cudaError_t *e)
{
    uint64_t wire;
    apigen_get_u64(c, &wire);
    if (apigen_end(c) < 0)
        return c->rc;
    *e = be_event(wire, ev);
    return 0;
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
    cudaError_t e = ev != NULL ? cudaEventDestroy(ev)
                               : cudaErrorInvalidResourceHandle;
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 event, u64 stream, u32 flags.  Reply: i32. */
int cudart_be_event_record(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t event, stream;
    uint32_t flags;
    apigen_get_u64(&c, &event);
    apigen_get_u64(&c, &stream);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaEvent_t ev;
    cudaStream_t s;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_event(event, &ev);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    if (e == cudaSuccess)
        e = cudaEventRecordWithFlags(ev, s, flags);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_event_query(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaEvent_t ev;
    cudaError_t e;
    if (event_request(&c, &ev, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaEventQuery(ev);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_event_synchronize(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaEvent_t ev;
    cudaError_t e;
    if (event_request(&c, &ev, &e) < 0)
        return c.rc;
    if (e == cudaSuccess)
        e = cudaEventSynchronize(ev);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u64 start, u64 end.  Reply: i32, u32 bits of the float. */
int cudart_be_event_elapsed_time(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t start, end;
    apigen_get_u64(&c, &start);
    apigen_get_u64(&c, &end);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaEvent_t a, b;
    float ms = 0;
    uint32_t bits;
    cudaError_t e = be_event(start, &a);
    if (e == cudaSuccess)
        e = be_event(end, &b);
    if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, a, b);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        memcpy(&bits, &ms, sizeof(bits));
        apigen_put_u32(&c, bits);
    }
    return c.rc;
}
