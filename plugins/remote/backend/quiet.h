/*
 * Whether device code may have written output that the client has not
 * been sent yet (docs/remoting.md, "Synchronous copies").  CUDA writes a
 * kernel's device printf output only inside a synchronizing call after
 * the kernel ended; a copy the GPU alone answers (a word it writes)
 * makes no such call.  So the worker answers a synchronous copy that way
 * only while every kernel launched so far has ended and its output was
 * sent: no launch since a synchronization that waited for all of them
 * and whose output was flushed before its reply, all launches on the
 * context it waited for.  Such a synchronization is one of a whole
 * context, or, while the session has no non-blocking stream, the wait
 * of a synchronous copy on the legacy stream: that stream's work waits
 * for every blocking stream's before it (the per-thread default streams
 * the layer keeps are blocking ones).  Launches of more than one context
 * end all this for the session: the plugins' synchronizations wait for
 * one.
 */
#ifndef REMOTE_BE_QUIET_H
#define REMOTE_BE_QUIET_H

#include <stdint.h>

#include "gvs/plugin.h"

/* Before a launch of device code (a kernel, a graph) on the context key
 * (nonzero: the plugin's name for it, alike for each of its calls). */
void remote_be_device_code(uintptr_t key);

/* What a whole-context synchronization of key, about to start, will
 * have waited for: pass it to remote_be_settled. */
uint64_t remote_be_settle_begin(void);

/* After that synchronization's handler (call) wrote its reply and the
 * output it made visible was flushed: if the reply's result is success
 * (the plugin's code), the launches up to begin are quiet, if all were
 * key's. */
void remote_be_settled(struct gvs_call *call, uintptr_t key, uint64_t begin,
                       int32_t success);

/* After the wait of a synchronous copy on the legacy stream of context
 * key, enqueued when the count of launches was begin, and the output
 * flush after it: the launches up to begin are quiet, if all were key's
 * and no non-blocking stream was made. */
void remote_be_settled_legacy(uintptr_t key, uint64_t begin);

/* Before a non-blocking stream is made in the session. */
void remote_be_stream_unordered(void);

/* 1 when every launch so far is quiet. */
int remote_be_quiet(void);

#endif
