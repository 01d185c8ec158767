/*
 * Contracts of the frontend's device files beyond the first slice:
 * visible.c (the client's CUDA_VISIBLE_DEVICES), devices.c (PCI ids,
 * device choice, shared memory configuration), peer.c, notifications.c
 * (async notifications and log callbacks).
 */
#ifndef CUDART_FE_DEVICES_H
#define CUDART_FE_DEVICES_H

#include "fe.h"

/* notifications.c: an ASYNC_NOTIFICATION (u64 callback, u64 handle, i32
 * type, u64 info) or LOGS_MESSAGE (u64 callback, i32 level, blob
 * message) notification: runs the program's registered function.  A
 * malformed body, or a callback since unregistered, is ignored. */
void fe_async_notification(struct gvs_buf *body);
void fe_logs_message(struct gvs_buf *body);

#endif
