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
    /* gvs_conn_wait_readable; NULL: not supported. */
    int (*wait_readable)(struct gvs_conn *c);
    /* gvs_conn_shutdown. */
    void (*shutdown)(struct gvs_conn *c);
    /* gvs_conn_send_fd / gvs_conn_recv_fd; NULL without
     * GVS_CONN_CAP_FDS. */
    int (*send_fd)(struct gvs_conn *c, int fd, uint64_t tag);
    int (*recv_fd)(struct gvs_conn *c, unsigned timeout_ms, int *fd,
                   uint64_t *tag);
    unsigned caps; /* enum gvs_conn_cap, but GVS_CONN_CAP_AREA */
    /* gvs_conn_area; NULL: no data area (nor GVS_CONN_CAP_AREA). */
    int (*area)(struct gvs_conn *c, void **base, size_t *len);
    /* Releases the transport's resources; the generic layer frees c.
     * copy: see gvs_conn_close_copy. */
    void (*close)(struct gvs_conn *c, int copy);
    /* gvs_conn_leaving, gvs_conn_vanished; NULL: not told beside the
     * stream. */
    void (*leaving)(struct gvs_conn *c);
    int (*vanished)(struct gvs_conn *c);
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
    unsigned caps; /* what this connection adds to ops->caps
                    * (GVS_CONN_CAP_PEER_AWAY, found at its setup) */
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

/* unix://'s plain sockets: the same, passing descriptors
 * (GVS_CONN_CAP_FDS) over side, a unix socket of their own
 * (comm_fdpass.c); closes both on failure. */
int gvs_fd_conn_new_side(int fd, int side, struct gvs_conn **out);

/* What gvsd sends first of all on an accepted unix:// connection, with
 * one descriptor (gvs_fdpass_send): either the 16-byte struct
 * gvs_shm_setup and the region's memfd, the frames then going through
 * shm://'s rings (unless $GVS_UNIX_RINGS is 0 in gvsd), or this 8-byte
 * tag and one end of a socket pair, the frames then going through the
 * socket and the descriptors the client shares through the pair.  The
 * client waits for it within the connect timeout. */
#define GVS_UNIX_SETUP_TAG 0x0000000155535647ULL /* "GVSU", version 1 */

/* shm://'s rings over a connected unix socket (comm_shm.c), unix://'s
 * too: gvsd's side makes the region and sends its setup; the client's
 * maps the region that setup m passed in mfd (closed).  Both take sock,
 * closed on failure. */
struct gvs_shm_setup;
int gvs_shm_conn_serve(int sock, struct gvs_conn **out);
int gvs_shm_conn_join(int sock, const struct gvs_shm_setup *m, int mfd,
                      struct gvs_conn **out);

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

/* Descriptors over a unix socket with SCM_RIGHTS (comm_fdpass.c). ---- */

/* Sends len bytes with descriptor fd in one message (flags: sendmsg's):
 * 1 when all went, 0 when the peer has gone (EPIPE, ECONNRESET), -1 on
 * another failure. */
int gvs_fdpass_send(int sock, const void *p, size_t len, int fd, int flags);

/* gvs_conn_send_fd's message: the tag as payload, fd with it; 0,
 * GVS_E_CLOSED or GVS_E_IO. */
int gvs_fdpass_send_tagged(int sock, int fd, uint64_t tag);

/* gvs_conn_recv_fd's: one tagged message within timeout_ms, exactly one
 * descriptor with its first byte (anything else is GVS_E_PROTO, every
 * descriptor that came closed); GVS_E_TIMEOUT, GVS_E_CLOSED, GVS_E_IO. */
int gvs_fdpass_recv_tagged(int sock, unsigned timeout_ms, int *fd, uint64_t *tag);

/* A client's wait, within the connect timeout, for the setup message the
 * server sends at accept with one descriptor (*fd): len bytes, or with
 * got, up to len bytes, how many in *got.  The errors name what is set
 * up ("shared memory"). */
int gvs_fdpass_recv_setup(int sock, void *m, size_t len, size_t *got, int *fd,
                          const char *what);

/* Connect timeout: $GVS_CONNECT_TIMEOUT_MS when it is a positive
 * decimal number, else GVS_CONNECT_TIMEOUT_MS_DEFAULT. */
unsigned gvs_connect_timeout_ms(void);

extern const struct gvs_transport gvs_transport_unix;
extern const struct gvs_transport gvs_transport_tcp;
extern const struct gvs_transport gvs_transport_shm;
extern const struct gvs_transport gvs_transport_ivshmem;

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

/* c->peer from c->fd's peer address ("127.0.0.1:5000", "[::1]:5000"),
 * and GVS_CONN_CAP_PEER_AWAY in c->caps unless gvs_addr_same_host says
 * the two ends are on one host. */
void gvs_tcp_peer(struct gvs_conn *c);

extern const struct gvs_transport gvs_transport_tls;

#endif
