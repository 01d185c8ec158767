/*
 * What the cudart backend tests (backend_*.c) share: the plugin loaded as
 * gvsd loads it, one session on it, and its handlers called directly, the
 * test process standing for the worker.  Nothing but the cudaError_t
 * values below is cudart's: other plugins' backend tests use it too
 * (plugins/cuda/tests/backend_decode.c).
 *
 * A test opens the session with harness_open (or, to check the entry
 * point itself, harness_load, its own checks, then harness_start), builds
 * each request in a gvs_buf of its own, runs it with call or
 * call_noreply, reads the reply with result_of or gvs_buf_get_*, and ends
 * with harness_close.  One session per process; calls come from the
 * test's main thread.  The notify callback is the test's: it sees what
 * the plugin sends the client, from any thread of the plugin.  The
 * plugin's log lines and CHECK's failures go to descriptor 2.
 */
#ifndef GVS_CUDART_BACKEND_HARNESS_H
#define GVS_CUDART_BACKEND_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gvs/buf.h"
#include "gvs/plugin.h"

/* With a notify callback the remoting layer (gvs-remote.so, beside the
 * plugin and opened first, as gvsd does) captures stdout and stderr while
 * the session is open (to send them to the client): failures go straight
 * to descriptor 2.  Returns 1 from the enclosing function when cond
 * fails. */
#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            dprintf(2, "FAIL line %d: %s\n", __LINE__, #cond);                \
            return 1;                                                         \
        }                                                                     \
    } while (0)

/* As CHECK, printing both values when they differ. */
#define CHECK_EQ(a, b)                                                        \
    do {                                                                      \
        long long a_ = (long long)(a), b_ = (long long)(b);                   \
        if (a_ != b_) {                                                       \
            dprintf(2, "FAIL line %d: %s == %s (%lld, %lld)\n", __LINE__, #a, \
                    #b, a_, b_);                                              \
            return 1;                                                         \
        }                                                                     \
    } while (0)

/* cudaError_t values the tests expect, which include no CUDA header. */
#define SUCCESS 0
#define INVALID_VALUE 1
#define INVALID_HANDLE 400
#define NOT_SUPPORTED 801
/* An id or address no session hands out. */
#define BOGUS 0x123456789ull

/* struct gvs_host_api's notify. */
typedef int (*harness_notify_fn)(struct gvs_session *session,
                                 uint16_t plugin_id, uint16_t op,
                                 const void *body, size_t len);

/* The usage of the tests run on both backends, PLUGIN.so [--mock]: 1
 * with --mock (the plugin is the mock, whose results are known), 0
 * without, -1 on any other arguments. */
int harness_mock_arg(int argc, char **argv);

/* The plugin's descriptor, set by harness_start. */
extern const struct gvs_plugin *plugin;

/* dlopens the plugin at path as gvsd does, and the remoting layer's
 * gvs-remote.so in the same directory when there is one, and returns the
 * plugin's entry point, or NULL (the reason on descriptor 2).  Both stay
 * loaded until exit. */
gvs_plugin_entry_fn harness_load(const char *path);

/* Takes the plugin's descriptor from entry and opens the session (the
 * layer's first, whose interface the host's peer gives), whose host sends
 * notifications to notify.  With notify NULL the host has no client, and
 * stdout and stderr are left alone.  0 or -1. */
int harness_start(gvs_plugin_entry_fn entry, harness_notify_fn notify);

/* harness_load, then harness_start: 0 or -1. */
int harness_open(const char *path, harness_notify_fn notify);

void harness_close(void);

/* Runs op's handler on the request in `in` as request 1 of client thread
 * (lane) 1, marked as sent without waiting for a reply when noreply is
 * 1; the reply lands in `out`, reset first.  Returns the handler's
 * return (0 or a negative GVS_E_* code), or 1000 when the plugin has no
 * such op. */
int call_noreply(uint16_t op, struct gvs_buf *in, struct gvs_buf *out,
                 int noreply);

/* call_noreply on an op of the remoting layer's (1000 without it). */
int call_layer_noreply(uint16_t op, struct gvs_buf *in, struct gvs_buf *out,
                       int noreply);

/* call_noreply, the call marked as followed by one of the same op
 * (gvs_call.next_same). */
int call_followed(uint16_t op, struct gvs_buf *in, struct gvs_buf *out,
                  int noreply);

/* call_noreply(op, in, out, 0). */
int call(uint16_t op, struct gvs_buf *in, struct gvs_buf *out);

/* Whether the last call's handler answered otherwise: no reply would be
 * sent (gvs_call.answered). */
int harness_answered(void);

/* The session's data area (host->area), as the worker maps it. */
void *harness_area(size_t *len);

/* The reply's leading i32 (a cudaError_t), or -1000 when it has none. */
int32_t result_of(struct gvs_buf *out);

/* The result of op on the n u64 arguments v, put into `in`, or -1000
 * when the handler refused the request. */
int32_t on_u64s(uint16_t op, int n, const uint64_t *v, struct gvs_buf *in,
                struct gvs_buf *out);

/* on_u64s on the one argument v. */
int32_t on_u64(uint16_t op, uint64_t v, struct gvs_buf *in,
               struct gvs_buf *out);

#endif
