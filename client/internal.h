/*
 * Private contracts between the files of libgvs-client.  The library is
 * built with hidden visibility; only the declarations of gvs/client.h are
 * given default visibility here, and the version script keeps every other
 * symbol (including the statically linked gvs core) out of the dynamic
 * symbol table.
 */
#ifndef GVS_CLIENT_INTERNAL_H
#define GVS_CLIENT_INTERNAL_H

#pragma GCC visibility push(default)
#include "gvs/client.h"
#pragma GCC visibility pop

#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "gvs/comm.h"
#include "gvs/config.h"
#include "gvs/proto.h"

enum client_state { CLIENT_IDLE, CLIENT_READY, CLIENT_FAILED };

/* Bound of the output buffer: posts up to it are written together. */
#define CLIENT_OUT_MAX ((size_t)64 << 10)

struct client_pending;

/* The process's only client.
 *
 * lock guards the sending side: conn's writes, next_id, the output
 * buffer (out_*, coalesce), opening the connection.  rlock is held by
 * whoever reads conn: the receiver thread, or a thread waiting for its
 * reply that found nobody reading (receiver.c, leader/follower); the
 * receiver closes conn, under lock and rlock, when the connection has
 * broken: so a holder of lock that sees CLIENT_READY may use conn, and
 * so may a holder of rlock that sees it not NULL.  wlock guards the
 * table of requests whose reply is awaited.  Lock order: rlock, lock,
 * wlock.
 *
 * state and err are atomic so that gvs_client_get can answer without the
 * lock; err is set once, before the state becomes CLIENT_FAILED. */
struct gvs_client {
    pthread_mutex_t lock;
    _Atomic int state;
    _Atomic int err;
    /* The process is exiting (client_exit ran): a connection lost now,
     * which the transport may end itself at exit, is not reported. */
    _Atomic int exiting;
    struct gvs_conn *conn;
    uint64_t next_id;
    char server[512];
    pthread_mutex_t rlock;
    long long hot_ns; /* the receiver's polling horizon
                       * (gvs_spin_hot_next), its own */
    /* Waiters polling to read their own reply: the receiver leaves the
     * reading to them.  On a line of its own, the one line the receiver
     * polls while they lead. */
    alignas(64) _Atomic int leaders;
    alignas(64) pthread_mutex_t wlock;
    struct client_pending *pending;
    _Atomic int npending; /* entries in pending, read without wlock by the
                           * receiver's spin */
    _Atomic unsigned caps; /* the connection's (gvs_conn_caps) while it is
                            * ready, read without the lock */
    /* Posts not yet written (outbuf.c).  out_state is the flusher's
     * futex word and out_posts counts posts buffered, for its spin; both
     * are read without lock. */
    int coalesce; /* this connection buffers posts */
    _Atomic uint32_t out_state;
    _Atomic uint32_t out_posts;
    size_t out_len;
    uint8_t out_buf[CLIENT_OUT_MAX];
};

/* client.c ---------------------------------------------------------- */

/* Marks the connection broken with err, unless it already is: the first
 * caller prints the one stderr line and shuts the connection down, which
 * wakes the receiver and any blocked sender.  Returns the client's
 * sticky error.  The caller holds lock or rlock. */
int client_break(struct gvs_client *c, int err);

/* receiver.c --------------------------------------------------------
 * The receiver thread and the replies it hands over. */

/* Starts the receiver of c->conn (detached, signals blocked) and, when
 * keepalive_ms is not 0, its keepalive thread: every keepalive_ms / 2 it
 * sends a posted PING if no request has left since it last looked, so
 * that gvsd hears from the client at least every keepalive_ms (its
 * idle_timeout_ms), and breaks the connection once gvsd has left its
 * data unacknowledged for ack_timeout_ms (gvs_conn_unanswered; 0: never):
 * gvsd's host or the network has gone, and waiting calls fail instead of
 * hanging.  The PINGs are not counted in the stats.  Both end with the
 * connection.  Caller holds lock. */
int client_receiver_start(struct gvs_client *c, unsigned keepalive_ms,
                          unsigned ack_timeout_ms);
/* Caller holds lock: request id, about to be sent, awaits a reply;
 * stat_slot is its operation's under GVS_STATS=ops (client_stats_slot),
 * so that the time until its reply is counted there.  GVS_E_NOMEM. */
int client_pending_add(struct gvs_client *c, uint64_t id, int stat_slot);
/* Caller holds lock: request id could not be sent after all. */
void client_pending_drop(struct gvs_client *c, uint64_t id);
/* fork(): the child forgets every awaited reply (their waiters are
 * threads of the parent).  Caller holds lock and wlock. */
void client_pending_fork_child(struct gvs_client *c);

/* notify.c ----------------------------------------------------------
 * Notifications, run on one notify thread per process in arrival order. */

/* Queues a notification; takes body (freed after the handler ran). */
int client_notify_push(uint16_t plugin, uint16_t op, struct gvs_buf *body);
/* Starts the notify thread unless it runs already.  Caller holds lock. */
int client_notify_start(void);
/* fork(): lock before, unlock in the parent; the child drops the queue
 * (its thread does not exist there) and unlocks. */
void client_notify_fork_prepare(void);
void client_notify_fork_parent(void);
void client_notify_fork_child(void);

/* outbuf.c ----------------------------------------------------------
 * Posts (GVS_F_NOREPLY) are coalesced into one write on connections
 * without GVS_CONN_CAP_CHEAP_WRITES, unless $GVS_COALESCE is 0.  Every
 * write leaves under lock, in request order: what is buffered goes out
 * ahead of, and in the same write as, the next request written.  A
 * failed write breaks the connection (client_break) and returns the
 * client's sticky error. */

/* Caller holds lock, on a connection just made: decides whether it
 * coalesces and starts the flusher thread if it must (once per process:
 * it wakes when a post lands in an empty buffer, polls briefly for more
 * (gvs_spin_ns) and writes what is there).  GVS_E_NOMEM. */
int client_out_open(struct gvs_client *c);
/* Caller holds lock and has seen CLIENT_READY: sends request h with
 * body iov[0..n-1] (h->len is set from them).  A post that fits in the
 * buffer is copied into it; anything else is written at once with what
 * is buffered.  GVS_E_INVAL / GVS_E_TOOBIG on a bad body (as
 * gvs_frame_sendv). */
int client_out_send(struct gvs_client *c, struct gvs_frame_hdr *h,
                    const struct iovec *iov, int n);
/* Caller holds lock: writes what is buffered (exit, fork, the flusher).
 * On a broken client the buffer is dropped and its error returned. */
int client_out_flush(struct gvs_client *c);
/* fork(): the child drops the parent's buffered posts (they belong to
 * the parent's session) and has no flusher yet.  Caller holds lock. */
void client_out_fork_child(struct gvs_client *c);

/* registry.c --------------------------------------------------------
 * Writers hold the client lock, before the connection is made; the
 * notify and receiver threads read after it. */

/* Adds a plugin; an identical re-registration is accepted.  GVS_E_INVAL
 * on a bad descriptor or a conflicting id, GVS_E_TOOBIG when full. */
int client_registry_add(const struct gvs_client_plugin *p);
/* Copies the registered plugins into a HELLO. */
void client_registry_fill(struct gvs_hello *h);
/* Sets a registered plugin's notify handler; GVS_E_INVAL if the plugin
 * is not registered. */
int client_registry_set_notify(uint16_t plugin, gvs_notify_fn fn, void *arg);
/* 1 and the plugin's notify handler, or 0 when it has none. */
int client_registry_notify(uint16_t plugin, gvs_notify_fn *fn, void **arg);
/* Sets the receiver-thread handler of one notification op of a
 * registered plugin: fn, or into (gvs_client_on_notify_into), the other
 * NULL; GVS_E_INVAL if the plugin is not registered, GVS_E_TOOBIG when
 * the table is full. */
int client_registry_set_inline(uint16_t plugin, uint16_t op, gvs_notify_fn fn,
                               const struct gvs_notify_into *into, void *arg);
/* 1 and the receiver-thread handler of (plugin, op), or 0. */
int client_registry_inline(uint16_t plugin, uint16_t op, gvs_notify_fn *fn,
                           void **arg);
/* The same for a handler whose bytes go straight to their place. */
int client_registry_into(uint16_t plugin, uint16_t op,
                         const struct gvs_notify_into **into, void **arg);

/* settings.c -------------------------------------------------------- */

struct client_settings {
    char server[512];
    /* Where server comes from ("GVS_SERVER is ..."), for the hint of a
     * failed connect. */
    char origin[640];
    unsigned handshake_timeout_ms;
    /* docs/security.md: the token to prove ($GVS_TOKEN, else the first
     * word of the config's first token; "" for none), how long the
     * connection may stay idle before a keepalive, and the TLS files
     * ("" where unset). */
    char token[GVS_TOKEN_MAX_LEN + 1];
    unsigned keepalive_ms;
    char tls_ca[256], tls_cert[256], tls_key[256];
    /* tcp://, tls://: how a server that vanishes is found out
     * (docs/config.md, "Vanished peers"). */
    struct gvs_tcp_keepalive tcp_keepalive;
    unsigned tcp_ack_timeout_ms;
};

/* Chooses the server ($GVS_SERVER, config key "server", default) and
 * reads the other settings from the config file, which $GVS_CONFIG
 * names (it must exist then) or else the default one when it exists.
 * On a config error, s->server still names the server that would be
 * used and why holds the reason. */
int client_settings_load(struct client_settings *s, char *why, size_t len);

/* handshake.c ------------------------------------------------------- */

/* Id of the HELLO request; later requests count up from 1. */
#define CLIENT_HELLO_ID 0u

/* Runs the HELLO exchange on a fresh connection, bounded as a whole by
 * s->handshake_timeout_ms, proving s->token when the server asks for
 * one, then clears the receive timeout.  On failure why says what went
 * wrong (the server's message when it refused us).  The caller wipes
 * s->token afterwards. */
int client_handshake(struct gvs_conn *c, const struct client_settings *s,
                     char *why, size_t len);

/* stats.c ----------------------------------------------------------- */

/* Counts an API request of `bytes` frame bytes (post: no reply awaited),
 * and a received reply (one completed round trip).  The handshake is not
 * counted: the stats describe the plugins' traffic. */
void client_stats_sent(uint64_t bytes, int post);
/* The reply of a request of operation slot stat_slot (-1: none) sent at
 * sent_ns (gvs_now_ns), received now: a round trip. */
void client_stats_reply(uint64_t bytes, int stat_slot, long long sent_ns);
/* Under GVS_STATS=ops, which asks for the requests by operation (a trace
 * of where a program's round trips and their time go): the slot of
 * (plugin, op), else -1.  client_stats_op then counts one request of it
 * that took send_ns to send (post: no reply awaited). */
int client_stats_slot(uint16_t plugin, uint16_t op);
void client_stats_op(int slot, int post, long long send_ns);
/* Counts one write of requests to the connection (outbuf.c). */
void client_stats_write(void);
/* Counts a reply read by its own waiter (receiver.c, lead). */
void client_stats_own_read(void);
/* Zeroes the counters (a forked child starts its own). */
void client_stats_reset(void);

#endif
