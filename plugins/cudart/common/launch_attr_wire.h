/*
 * Launch attribute values on the wire, encoded and decoded by this one
 * file on both halves: the frontend sends them with launches and
 * attribute settings, the backend answers attribute queries with them.
 * Each attribute travels as u32 id, then the fields its id gives meaning
 * to, never as the raw union: events become wire ids, and padding or a
 * field of another member carries nothing.  An id this build does not
 * know travels without a value.
 *
 * Compiled into the frontend, the backend and the mock backend, all
 * built with hidden visibility.  On the frontend include it after fe.h.
 */
#ifndef CUDART_LAUNCH_ATTR_WIRE_H
#define CUDART_LAUNCH_ATTR_WIRE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "apigen_rt.h"

/* Turns an event field into its wire id (the frontend's handles). */
typedef uint64_t (*cudart_wire_event_put)(cudaEvent_t ev);

/* Decodes an event field's wire id into *ev; ctx is the caller's. */
typedef void (*cudart_wire_event_get)(struct apigen_call *c, cudaEvent_t *ev,
                                      void *ctx);

/* A dim3-like triple: u32 x, y, z. */
void cudart_wire_put_dim(struct apigen_call *c, unsigned x, unsigned y,
                         unsigned z);
void cudart_wire_get_dim(struct apigen_call *c, unsigned *x, unsigned *y,
                         unsigned *z);

/* Appends u32 id, then v's fields for it.  Event fields go through
 * event_wire, or as 0 when it is NULL (the backend's answers: those
 * attributes belong to launches, never asked for their attributes). */
void cudart_wire_put_launch_attr(struct apigen_call *c,
                                 cudaLaunchAttributeID id,
                                 const cudaLaunchAttributeValue *v,
                                 cudart_wire_event_put event_wire);

/* Decodes the fields of an attribute whose id was already read into the
 * union member the id names; the rest of *v is left as it is (callers
 * zero it first).  Event fields go through get_event(c, ev, ctx), or are
 * skipped, leaving NULL, when it is NULL.  Failures show in c->rc. */
void cudart_wire_get_launch_attr_value(struct apigen_call *c, uint32_t id,
                                       cudaLaunchAttributeValue *v,
                                       cudart_wire_event_get get_event,
                                       void *ctx);

#endif
