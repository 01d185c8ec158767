/*
 * How a transport builds the objects behind struct gvs_conn and struct
 * gvs_listener.  Internal to gvs_core.
 *
 * A connection is a table of operations plus the little the generic layer
 * needs (a pollable descriptor and a peer string).  A transport whose fast
 * path is not a socket (shm) supplies its own operations and keeps its
 * state in `priv`; socket transports share the fd_* helpers.
 */
#ifndef GVS_COMM_IMPL_H
#define GVS_COMM_IMPL_H

#include <stddef.h>
#include <sys/uio.h>

#include "gvs/comm.h"

#define GVS_PEER_MAX 128
#define GVS_URI_TEXT_MAX 320
#define GVS_CONNECT_TIMEOUT_MS_DEFAULT 5000u

struct gvs_conn_ops {
    /* Sends every byte or fails (GVS_E_CLOSED, GVS_E_IO). */
    int (*sendv)(struct gvs_conn *c, const struct iovec *iov, int iovcnt);
    /* Receives 1..len bytes; GVS_E_CLOSED on EOF, GVS_E_TIMEOUT when the
     * receive timeout expires. */
    int (*recv_some)(struct gvs_conn *c, void *p, size_t len, size_t *got);
    int (*set_timeout)(struct gvs_conn *c, unsigned ms);
    /* Non-blocking: 1 when recv_some would return at once (data, end of
     * stream or an error), else 0.  NULL: poll c->fd instead. */
    int (*readable)(struct gvs_conn *c);
    /* gvs_conn_shutdown. */
    void (*shutdown)(struct gvs_conn *c);
    /* gvs_conn_send_fd / gvs_conn_recv_fd; NULL without
     * GVS_CONN_CAP_FDS. */
    int (*send_fd)(struct gvs_conn *c, int fd, uint64_t tag);
    int (*recv_fd)(struct gvs_conn *c, unsigned timeout_ms, int *fd,
                   uint64_t *tag);
    unsigned caps; /* enum gvs_conn_cap */
    /* Releases the transport's resources; the generic layer frees c.
     * copy: see gvs_conn_close_copy. */
    void (*close)(struct gvs_conn *c, int copy);
    /* gvs_conn_start: completes, within timeout_ms, a setup that accept
     * left to the process serving the connection (tls: the server's
     * handshake, kept out of gvsd's accept loop).  NULL: nothing to do. */
    int (*start)(struct gvs_conn *c, unsigned timeout_ms);
};

struct gvs_conn {
    const struct gvs_conn_ops *ops;
    int fd; /* descriptor to poll for readability, -1 if none */
    char peer[GVS_PEER_MAX];
    void *priv; /* transport state */
    long long deadline_ns; /* gvs_conn_set_deadline; 0: none */
};

struct gvs_listener {
    const struct gvs_transport *transport;
    /* Releases the transport's resources; the generic layer frees l. */
    void (*close)(struct gvs_listener *l, int keep_path);
    int fd;
    char uri[GVS_URI_TEXT_MAX];
    void *priv;
};

/* Zeroed objects with fd -1, or NULL when out of memory. */
struct gvs_conn *gvs_conn_alloc(const struct gvs_conn_ops *ops);
struct gvs_listener *gvs_listener_alloc(const struct gvs_transport *t);

/* Records for gvs_comm_why what failed in the listen or connect under
 * way ("connect /path", formatted) and, unless e is 0, the OS's word for
 * errno e after it.  Returns err, so that a failure is returned through
 * it. */
int gvs_comm_fail(int err, int e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Socket helpers shared by socket transports. ---------------------- */

/* Operations of a plain connected stream socket in c->fd; close() closes
 * the descriptor. */
extern const struct gvs_conn_ops gvs_fd_conn_ops;

/* Wraps a connected socket; closes fd on failure. */
int gvs_fd_conn_new(int fd, struct gvs_conn **out);

/* accept4(SOCK_CLOEXEC) on a listening socket: GVS_E_TIMEOUT when
 * interrupted (EINTR, or a connection aborted before it was taken),
 * GVS_E_IO otherwise. */
int gvs_fd_accept(int lfd, int *fd);

/* Unix-socket helpers shared by the unix and shm transports. ------- */

/* Binds and listens on u->path for transport t; an existing socket file
 * is replaced only if nothing answers on it. */
int gvs_unix_listen(const struct gvs_uri *u, const struct gvs_transport *t,
                    struct gvs_listener **out);

/* Connects a stream socket to path within the connect timeout;
 * GVS_E_CONNECT. */
int gvs_unix_connect_fd(const char *path, int *fd);

/* "uid=U gid=G pid=P" of the peer of a unix socket (SO_PEERCRED). */
void gvs_unix_peer(int fd, char *out, size_t outlen);

/* Connect timeout: $GVS_CONNECT_TIMEOUT_MS when it is a positive
 * decimal number, else GVS_CONNECT_TIMEOUT_MS_DEFAULT. */
unsigned gvs_connect_timeout_ms(void);

extern const struct gvs_transport gvs_transport_unix;
extern const struct gvs_transport gvs_transport_tcp;
extern const struct gvs_transport gvs_transport_shm;

/* TCP helpers shared by the tcp and tls transports. ---------------- */

/* Binds and listens on u->host:u->port for transport t; the listener's
 * URI names the port bound (u's scheme kept). */
int gvs_tcp_listen(const struct gvs_uri *u, const struct gvs_transport *t,
                   struct gvs_listener **out);

/* Accepts a connection on a listener gvs_tcp_listen made: a blocking
 * socket with TCP_NODELAY, errors as gvs_fd_accept. */
int gvs_tcp_accept_fd(struct gvs_listener *l, int *fd);

/* Connects to u->host:u->port by the monotonic-clock deadline (ms, as
 * gvs_now_ns() / 1e6): a blocking socket with TCP_NODELAY, or
 * GVS_E_CONNECT. */
int gvs_tcp_connect_fd(const struct gvs_uri *u, long long deadline, int *fd);

/* c->peer from c->fd's peer address ("127.0.0.1:5000", "[::1]:5000"). */
void gvs_tcp_peer(struct gvs_conn *c);

extern const struct gvs_transport gvs_transport_tls;

#endif
