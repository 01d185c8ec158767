/*
 * Device output: what the worker's CUDA runtime writes on stdout (the
 * device printf buffer, flushed at synchronization points) and stderr
 * (device assert messages) goes to the client as DEVICE_OUTPUT
 * notifications, which its frontend writes on its own stdout and
 * stderr.
 *
 * CUDA writes through the stdio streams `stdout` and `stderr` (not file
 * descriptors 1 and 2), so the worker points those two variables at
 * pipes; gvsd's own log, written on descriptor 2, is untouched.  A
 * thread forwards whatever the pipes hold as it comes, and every
 * blocking op drains them before its reply leaves, so output produced
 * before a synchronizing call returns reaches the client first.  The
 * streams mark each write, so that a flush with nothing written since
 * the last one makes no system call.
 */
#ifndef REMOTE_BE_OUTPUT_H
#define REMOTE_BE_OUTPUT_H

#include <stdint.h>

#include "gvs/plugin.h"

/* Starts capturing for the session (once per worker, before CUDA starts).
 * On failure output is simply not captured: 0 or a negative GVS_E_*.
 * A host without notify (a test harness) gets no capture. */
int remote_be_output_open(const struct gvs_host_api *host,
                   struct gvs_session *session);

/* Sends everything written so far.  Thread-safe. */
void remote_be_output_flush(void);

/* How many writes CUDA made to the streams so far. */
uint64_t remote_be_output_writes(void);

/* Sends what is left, stops the thread, puts the streams back. */
void remote_be_output_close(void);

#endif
