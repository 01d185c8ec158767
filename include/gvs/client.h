/*
 * Frontend side of a gvs session, shared by every virtualized library in
 * one process (libgvs-client.so).  One connection per process, opened on
 * first use.
 *
 * Server choice, first match wins: $GVS_SERVER, the "server" key of the
 * config file (gvs_config_default_path()), GVS_DEFAULT_SERVER.
 *
 * Thread safety: every function may be called from any thread.  A call
 * holds the connection from sending its request to reading its reply.
 */
#ifndef GVS_CLIENT_H
#define GVS_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "gvs/buf.h"

#define GVS_DEFAULT_SERVER "unix:///run/gvs/gvsd.sock"

struct gvs_client;

/* A frontend plugin announces itself before its first call (typically
 * from a constructor); the handshake lists every registered plugin.
 * GVS_E_TOOBIG past GVS_MAX_PLUGINS. */
struct gvs_client_plugin {
    uint16_t id;
    const char *name;
    uint64_t table_hash;
};
int gvs_client_register(const struct gvs_client_plugin *p);

/* Returns the process's connected client, connecting and handshaking on
 * the first call.  On failure returns a negative GVS_E_* code, and the
 * first failure prints one line on stderr naming the server tried and
 * the reason.  A failed or broken connection stays failed: later calls
 * return the same code at once, never block. */
int gvs_client_get(struct gvs_client **out);

/* The server URI in use (or tried). */
const char *gvs_client_server(void);

/* One round trip: sends request (plugin, op, body = iov[0..n-1]) and
 * receives its reply body into `reply` (reset first; the caller owns it,
 * with a max of at least the largest reply it expects).  A reply frame
 * whose id does not match, or a closed connection, marks the client
 * broken and returns GVS_E_PROTO / GVS_E_CLOSED. */
int gvs_client_call(struct gvs_client *c, uint16_t plugin, uint16_t op,
                    const struct iovec *iov, int n, struct gvs_buf *reply);

/* Sends a request without waiting for any reply (GVS_F_NOREPLY). */
int gvs_client_post(struct gvs_client *c, uint16_t plugin, uint16_t op,
                    const struct iovec *iov, int n);

/* Pipelining: hold the connection, send several requests, then read
 * their replies in order.  Between lock and unlock only the *_locked
 * functions may be used on c. */
void gvs_client_lock(struct gvs_client *c);
void gvs_client_unlock(struct gvs_client *c);
int gvs_client_send_locked(struct gvs_client *c, uint16_t plugin,
                           uint16_t op, uint32_t flags,
                           const struct iovec *iov, int n, uint64_t *id);
int gvs_client_recv_locked(struct gvs_client *c, uint64_t id,
                           struct gvs_buf *reply);

/* Counters for tests and `GVS_STATS=1` (printed to stderr at exit). */
struct gvs_client_stats {
    uint64_t round_trips; /* requests whose reply was waited for */
    uint64_t posts;       /* requests sent without waiting */
    uint64_t bytes_sent;
    uint64_t bytes_received;
};
void gvs_client_get_stats(struct gvs_client_stats *out);

#endif
