/*
 * Frontend side of a gvs session, shared by every virtualized library in
 * one process (libgvs-client.so).  One connection per process, opened on
 * first use.
 *
 * Server choice, first match wins: $GVS_SERVER, the "server" key of the
 * config file (gvs_config_default_path()), GVS_DEFAULT_SERVER.
 *
 * Threads: every function may be called from any thread.  Each calling
 * thread is a lane (include/gvs/proto.h): its requests carry its lane id,
 * and a thread waiting for a reply never holds up other threads' calls.
 * A receiver thread, started with the connection, reads every frame:
 * replies are handed to the threads waiting for them, notifications
 * (GVS_F_NOTIFY) to the plugin's notify handler.
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

/* Server-initiated frames of plugin `plugin` go to fn, which runs on one
 * notify thread of the client, one frame at a time, in arrival order
 * (never on the receiver thread, so fn may make calls and wait for their
 * replies).  body is valid during the call only.  Register before the
 * first gvs_client_get, like gvs_client_register.  GVS_E_INVAL if the
 * plugin is not registered. */
typedef void (*gvs_notify_fn)(uint16_t op, struct gvs_buf *body, void *arg);
int gvs_client_on_notify(uint16_t plugin, gvs_notify_fn fn, void *arg);

/* A handler for notification `op` of `plugin` that runs on the receiver
 * thread itself, before the frames after it are read: what it does is
 * done before a reply that follows the notification on the connection
 * reaches its caller (output the server produced before it replied,
 * say).  It must neither make calls nor block for long.  It takes the op
 * from the plugin's gvs_client_on_notify handler.  Register before the
 * first gvs_client_get; GVS_E_INVAL if the plugin is not registered,
 * GVS_E_TOOBIG past GVS_MAX_INLINE_NOTIFY handlers. */
#define GVS_MAX_INLINE_NOTIFY 16
int gvs_client_on_notify_inline(uint16_t plugin, uint16_t op,
                                gvs_notify_fn fn, void *arg);

/* An inline notification whose body is a head of head_len bytes (at most
 * GVS_NOTIFY_HEAD_MAX) and then bytes that go straight to their place,
 * never through a buffer: the receiver reads the head and asks place
 * where the tail_len bytes after it go (NULL: they are read and
 * dropped); when place gave a place, landed says once the bytes are
 * there (ok 1) or that the connection broke while they came (ok 0).  A
 * body shorter than the head is dropped.  Both run where inline
 * handlers run, under the same rules; place's memory must stay until
 * landed.  Registered as gvs_client_on_notify_inline's, in its count. */
#define GVS_NOTIFY_HEAD_MAX 64
struct gvs_notify_into {
    size_t head_len;
    void *(*place)(uint16_t op, const void *head, size_t tail_len,
                   void *arg);
    void (*landed)(uint16_t op, void *dst, int ok, void *arg);
};
int gvs_client_on_notify_into(uint16_t plugin, uint16_t op,
                              const struct gvs_notify_into *into, void *arg);

/* The calling thread's lane id (>= 1, stable for the thread's life). */
uint32_t gvs_client_lane(void);

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

/* Sends a request without waiting for any reply (GVS_F_NOREPLY).  On a
 * connection whose writes are system calls (unix://, tcp://) the post
 * may be buffered and leave with the next request written, or within
 * microseconds from a flusher thread, at exit or before fork(); the
 * order of requests is kept (docs/protocol.md, GVS_COALESCE=0 disables
 * it).  A transport failure then surfaces on a later call. */
int gvs_client_post(struct gvs_client *c, uint16_t plugin, uint16_t op,
                    const struct iovec *iov, int n);

/* Batching and pipelining.  lock/unlock hold the sending side only, so
 * that several requests leave back to back (posts among them are
 * coalesced, see gvs_client_post).  send_locked sends one request;
 * unless flags has GVS_F_NOREPLY, its reply must then be collected with
 * gvs_client_wait, which needs no lock (release it before waiting).
 * With GVS_F_LATER the server orders it as a post: the caller goes on
 * and collects the reply whenever it needs it.
 * Replies may be collected in any order; one that arrives before its
 * wait is kept. */
void gvs_client_lock(struct gvs_client *c);
void gvs_client_unlock(struct gvs_client *c);
int gvs_client_send_locked(struct gvs_client *c, uint16_t plugin,
                           uint16_t op, uint32_t flags,
                           const struct iovec *iov, int n, uint64_t *id);
/* Request id's reply will not come: the server said so otherwise (a
 * word in shared memory), and its entry goes.  0, or GVS_E_INVAL for an
 * id not awaited, already waited for, or whose reply has come after
 * all (the caller then waits for it). */
int gvs_client_withdraw(struct gvs_client *c, uint64_t id);
/* Waits for request id's reply and moves its body into reply (reset
 * first).  GVS_E_TOOBIG if it does not fit reply's maximum (the
 * connection stays usable), GVS_E_CLOSED / GVS_E_PROTO when broken. */
int gvs_client_wait(struct gvs_client *c, uint64_t id, struct gvs_buf *reply);

/* What the connection can do: enum gvs_conn_cap (gvs/comm.h), 0 while
 * there is none.  With GVS_CONN_CAP_FDS the client and gvsd are on one
 * host and can share memory.  Takes no lock: callable with or without
 * gvs_client_lock. */
unsigned gvs_client_caps(struct gvs_client *c);

/* The connection's data area in this process (gvs_conn_area), while
 * the client is ready: *base, *len; GVS_E_NOTSUP without
 * GVS_CONN_CAP_AREA.  Takes no lock. */
int gvs_client_area(struct gvs_client *c, void **base, size_t *len);

/* Caller holds the lock: passes descriptor fd (still the caller's) with
 * tag, ahead of the request that names the tag, which the server's
 * plugin then takes with host->recv_fd.  GVS_E_NOTSUP without
 * GVS_CONN_CAP_FDS; a failed pass breaks the connection. */
int gvs_client_send_fd_locked(struct gvs_client *c, int fd, uint64_t tag);

/* Counters for tests and `GVS_STATS=1` (printed to stderr at exit). */
struct gvs_client_stats {
    uint64_t round_trips; /* requests whose reply was waited for */
    uint64_t posts;       /* requests sent without waiting (GVS_F_LATER too) */
    uint64_t bytes_sent;
    uint64_t bytes_received;
};
void gvs_client_get_stats(struct gvs_client_stats *out);
/* Writes of requests to the connection since the process (or forked
 * child) started, each a system call on unix:// and tcp://: fewer than
 * the requests when posts were coalesced.  Kept out of gvs_client_stats,
 * whose size programs that look it up with dlsym rely on. */
uint64_t gvs_client_writes(void);
/* Replies read by the thread that waited for them (leader/follower:
 * it found nobody else reading) rather than handed over by the
 * receiver thread. */
uint64_t gvs_client_own_reads(void);

/* Replies that end in bulk bytes (a device-to-host chunk: a result and a
 * length, then the data), received by the receiver thread straight into
 * the caller's memory instead of into a reply buffer to be copied out.
 *
 * gvs_client_expect_into announces that request id's reply should be
 * head_len bytes followed by tail_len bytes that go to tail.  Call it as
 * soon as the request is sent: a reply the receiver began to read before
 * the announcement is kept whole, and the wait copies its tail out.
 * From the call until the wait for id returns, tail is the receiver's:
 * the caller neither reads, writes nor frees it, and must collect the
 * reply with gvs_client_wait_into even when it no longer wants it.
 * GVS_E_INVAL when id's reply is not awaited, already announced or
 * already waited for, or tail is NULL with tail_len > 0; the client's
 * error once the connection has broken.
 *
 * gvs_client_wait_into is gvs_client_wait for such a reply.  A body of
 * exactly head_len + tail_len bytes has its first head_len bytes moved
 * into reply and its last tail_len bytes in tail, and *into is set to 1
 * (GVS_E_TOOBIG when the head does not fit reply's maximum).  Any other
 * body (a failure's shorter reply, or whatever a faulty server sends)
 * goes into reply whole as with gvs_client_wait, tail is not written,
 * and *into is 0.  So nothing but exactly tail_len bytes at tail is ever
 * written, whatever the server sends; the caller decodes reply and
 * checks that it agrees with *into (into may be NULL).  When the wait
 * fails, *into is 0 and tail may hold some or all of the bytes. */
int gvs_client_expect_into(struct gvs_client *c, uint64_t id,
                           size_t head_len, void *tail, size_t tail_len);
int gvs_client_wait_into(struct gvs_client *c, uint64_t id,
                         struct gvs_buf *reply, int *into);

#endif
