/*
 * Communicators: byte-stream connections between a frontend and gvsd,
 * chosen by URI scheme.  Each transport is a table of function pointers
 * registered by scheme name; the generic functions below dispatch to it.
 *
 *   unix:///absolute/path       AF_UNIX stream socket
 *   tcp://host:port             TCP (IPv4 or IPv6 literal in [..]), NODELAY
 *   tls://host:port             TLS over TCP (OpenSSL); certificates and
 *                               CAs from gvs_tls_configure (gvs/tls.h)
 *   shm:///absolute/path        shared-memory rings between two processes
 *                               of one host; the unix socket at the path
 *                               only sets them up and tells of a death
 *   ivshmem:///absolute/path    the same rings in slots of one region that
 *                               gvsd creates as a file at the path and
 *                               QEMU maps into a guest as an ivshmem PCI
 *                               device; a guest's client names the
 *                               device's resource2 file (core/ivshmem.h)
 *
 * Later transports (vsock) plug into the same table: a transport owns how
 * bytes move; the frame layer above only sees send/recv.
 *
 * All functions return 0 or a negative GVS_E_* code.
 */
#ifndef GVS_COMM_H
#define GVS_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct gvs_conn;
struct gvs_listener;

struct gvs_uri {
    char scheme[16];
    char host[256]; /* tcp, tls: host name or address (no brackets) */
    char path[108]; /* unix, shm: socket path; else "" */
    unsigned port;  /* tcp, tls */
};

/* Parses a URI; GVS_E_URI if it is malformed, too long or has an unknown
 * scheme. */
int gvs_uri_parse(const char *s, struct gvs_uri *out);

/* Writes the canonical text of a URI (for logs and GVS_SERVER). */
int gvs_uri_format(const struct gvs_uri *u, char *out, size_t outlen);

struct gvs_transport {
    const char *scheme;
    int (*listen)(const struct gvs_uri *u, struct gvs_listener **out);
    int (*accept)(struct gvs_listener *l, struct gvs_conn **out);
    int (*connect)(const struct gvs_uri *u, struct gvs_conn **out);
};

/* Looks up a transport by scheme; NULL if none. */
const struct gvs_transport *gvs_transport_find(const char *scheme);

/* Binds and listens.  unix, shm: an existing socket file at the path is
 * replaced only if nothing answers on it: GVS_E_INUSE when a connection
 * to it is accepted (another gvsd serves it), GVS_E_IO when the path is
 * not a socket.  tcp, tls: GVS_E_INUSE when the port is bound already.
 * Any failure but GVS_E_NOMEM says why in gvs_comm_why. */
int gvs_listen(const char *uri, struct gvs_listener **out);
/* Accepts one connection (blocking).  GVS_E_IO on failure; EINTR is
 * reported as GVS_E_TIMEOUT so the caller can check its signals, as are
 * a connection aborted before it was taken and, on a listener the caller
 * made non-blocking, no pending connection. */
int gvs_accept(struct gvs_listener *l, struct gvs_conn **out);
/* File descriptor to poll for incoming connections. */
int gvs_listener_fd(const struct gvs_listener *l);
/* Closes; a unix listener also unlinks its socket file unless
 * keep_path is set (a forked worker closing the parent's copy). */
void gvs_listener_close(struct gvs_listener *l, int keep_path);
/* The URI the listener is bound to (tcp port 0 resolved). */
const char *gvs_listener_uri(const struct gvs_listener *l);

/* Connects (blocking). GVS_E_CONNECT when nobody answers or nobody has
 * answered within $GVS_CONNECT_TIMEOUT_MS milliseconds (default 5000),
 * with the step and the OS error in gvs_comm_why.
 * tls: the handshake is part of the connect and of its time limit;
 * GVS_E_TLS when it fails (the server's certificate not trusted, say),
 * GVS_E_CONFIG without a CA to verify the server with (the reason is
 * logged). */
int gvs_connect(const char *uri, struct gvs_conn **out);

/* After a gvs_listen or gvs_connect of this thread failed: which step
 * failed and what the OS said ("connect /run/gvs/gvsd.sock: No such file
 * or directory", "bind 127.0.0.1:7300: Address already in use"), for the
 * caller's message, which names the URI; "" when nothing is known beyond
 * the error code.  Valid until the thread's next gvs_listen or
 * gvs_connect. */
const char *gvs_comm_why(void);

/* Completes a connection gvs_accept returned, within timeout_ms: tls
 * leaves its handshake to the first receive (bounded by the receive
 * timeout, else the connect timeout) or to this call, so that an accept
 * loop never waits on a client.  Nothing may be sent on such a
 * connection before (GVS_E_INVAL): a server that speaks first calls
 * this.  0 at once where there is nothing to do; GVS_E_TLS,
 * GVS_E_TIMEOUT or GVS_E_CLOSED when the handshake fails, and so does
 * every later call on c. */
int gvs_conn_start(struct gvs_conn *c, unsigned timeout_ms);

/* Sends every byte of the iovecs, handling partial writes and EINTR.
 * GVS_E_CLOSED if the peer has gone, GVS_E_IO otherwise. */
int gvs_conn_sendv(struct gvs_conn *c, const struct iovec *iov, int iovcnt);
int gvs_conn_send(struct gvs_conn *c, const void *p, size_t len);
/* Receives exactly len bytes, handling partial reads and EINTR.
 * GVS_E_CLOSED on EOF (at any point), GVS_E_IO otherwise. */
int gvs_conn_recv(struct gvs_conn *c, void *p, size_t len);
/* Receives up to len bytes, at least one; *got is set. */
int gvs_conn_recv_some(struct gvs_conn *c, void *p, size_t len, size_t *got);
/* Descriptor to poll for readability, -1 if the transport has none.
 * shm: the setup socket, readable only once the peer has gone (data
 * comes through the rings; gvs_conn_spin_readable sees it). */
int gvs_conn_fd(const struct gvs_conn *c);
/* Sets the receive timeout in milliseconds (0 = none); GVS_E_TIMEOUT
 * is then returned by recv when it expires. */
int gvs_conn_set_timeout(struct gvs_conn *c, unsigned ms);
/* Bounds every later receive and gvs_conn_start as a whole: once the
 * monotonic clock (gvs_now_ns, gvs/spin.h) passes deadline_ns they fail
 * with GVS_E_TIMEOUT, however the peer spreads its bytes, because each
 * wait is given only the time left.  It replaces the receive timeout
 * while set; 0 clears it and leaves no receive timeout (set one again
 * with gvs_conn_set_timeout).  For exchanges that must end by a time,
 * such as a handshake; one reader at a time. */
int gvs_conn_set_deadline(struct gvs_conn *c, long long deadline_ns);
/* Peer description for logs ("uid=0 gid=0 pid=42", "127.0.0.1:5000",
 * "[::1]:5000"). */
const char *gvs_conn_peer(const struct gvs_conn *c);
/* What a connection can do beyond moving bytes (gvs_conn_caps). */
enum gvs_conn_cap {
    /* A send is a copy into shared memory, not a system call: batching
     * writes gains nothing. */
    GVS_CONN_CAP_CHEAP_WRITES = 1u << 0,
    /* Descriptors pass to the peer (gvs_conn_send_fd), and with them
     * memory both processes can map. */
    GVS_CONN_CAP_FDS = 1u << 1,
    /* The connection has a data area both sides map (gvs_conn_area):
     * memory placed in it is shared with the peer without descriptors
     * (ivshmem://, across a VM boundary). */
    GVS_CONN_CAP_AREA = 1u << 2,
    /* The peer runs on another machine or across a VM boundary (a
     * guest's ivshmem device; tcp:// or tls:// to an address that is not
     * this end's own nor a loopback one): a thread that polls for its
     * answer takes no processor from it (gvs_spin_peer_away). */
    GVS_CONN_CAP_PEER_AWAY = 1u << 3,
};
unsigned gvs_conn_caps(const struct gvs_conn *c);

/* 1 when a connection between the socket addresses local and peer
 * stays on this host: other than AF_INET or AF_INET6, a loopback peer,
 * or the peer's address is the local end's own (a client naming its
 * host's public address).  0 otherwise: a guest reaching its host
 * through QEMU's network is away from it (GVS_CONN_CAP_PEER_AWAY). */
struct sockaddr;
int gvs_addr_same_host(const struct sockaddr *local,
                       const struct sockaddr *peer);

/* The connection's data area as this process maps it: *base, *len
 * (page-aligned, len > 0), the same bytes the peer's gvs_conn_area
 * gives it at its own address.  The area is the connection's alone;
 * which of its bytes are in use is for the layers above to agree on.
 * GVS_E_NOTSUP without GVS_CONN_CAP_AREA. */
int gvs_conn_area(struct gvs_conn *c, void **base, size_t *len);

/* The layout of the regions that later ivshmem:// listeners make
 * (docs/vm.md): slots connections at once (1..GVS_IVSHMEM_SLOTS_MAX),
 * each with a data area of at least area bytes (0: none), in the
 * smallest region of a power-of-two size (a PCI BAR's) that holds them,
 * the areas grown to fill it.  GVS_E_INVAL when the region would pass
 * GVS_IVSHMEM_REGION_MAX.  Not thread-safe: set before listening. */
#define GVS_IVSHMEM_SLOTS_MAX 64u
#define GVS_IVSHMEM_REGION_MAX (64ull << 30)
int gvs_ivshmem_set_layout(unsigned slots, uint64_t area);

/* Passes descriptor fd (not taken: the caller still closes its copy)
 * with a tag the receiver checks.  Descriptors travel beside the frame
 * stream, in the order sent: a frame that names one must be sent after
 * it, so that it has arrived when the frame is read.  GVS_E_NOTSUP
 * without GVS_CONN_CAP_FDS, GVS_E_CLOSED / GVS_E_IO on failure.  Callers
 * serialize it with their frame sends. */
int gvs_conn_send_fd(struct gvs_conn *c, int fd, uint64_t tag);
/* Takes the next descriptor passed, waiting at most timeout_ms: *fd
 * (close-on-exec, the caller's to close) and its *tag.  GVS_E_TIMEOUT
 * when none came, GVS_E_PROTO when what came is not one descriptor with
 * its tag (whatever came is closed), GVS_E_NOTSUP without
 * GVS_CONN_CAP_FDS.  One thread at a time. */
int gvs_conn_recv_fd(struct gvs_conn *c, unsigned timeout_ms, int *fd,
                     uint64_t *tag);

/* Waits, without reading, until data, the end of the stream or an error
 * is there to read, from a thread that leaves the reading to another
 * meanwhile (the client's receiver while a caller reads its own reply):
 * it may return with nothing left when the other thread took it.  0, or
 * GVS_E_NOTSUP where the transport can wait only by reading (bytes it
 * read ahead would be missed): all but shm://. */
int gvs_conn_wait_readable(struct gvs_conn *c);

/* A program's exit (GVS_CTL_LEAVING): what it sent is to be served even
 * if its connection ends before gvsd read it.  Said beside the stream
 * where the transport can (shm://'s rings: a flag in the region); a
 * no-op elsewhere, where the stream's LEAVING alone says it. */
void gvs_conn_leaving(struct gvs_conn *c);

/* gvsd's side: 1 when the peer has hung up without saying it leaves
 * beside the stream, whatever it sent is still unread (a poll() of the
 * socket, without waiting); 0 where the transport cannot tell so (all
 * but shm://'s rings). */
int gvs_conn_vanished(struct gvs_conn *c);

/* Ends the connection in both directions; safe from any thread while
 * others use c: their blocked sends and receives return GVS_E_CLOSED,
 * and the peer sees the end of the stream.  c must still be closed. */
void gvs_conn_shutdown(struct gvs_conn *c);
void gvs_conn_close(struct gvs_conn *c);
/* Frees this process's copy of a connection inherited across fork that
 * another process goes on using (gvsd after handing a session to its
 * worker): nothing is shut down and the peer is not told. */
void gvs_conn_close_copy(struct gvs_conn *c);

/* TCP keepalive of a tcp:// or tls:// connection (docs/config.md,
 * "Vanished peers"). */
struct gvs_tcp_keepalive {
    unsigned idle_s;     /* silence before the first probe; 0: none */
    unsigned interval_s; /* between unanswered probes */
    unsigned count;      /* unanswered probes that end the connection */
};

/* Makes the kernel probe c's peer once c has heard nothing for
 * k->idle_s: a peer whose host died, or whose network dropped, without
 * a FIN, is found out idle_s + interval_s * count seconds after it was
 * last heard, and c's reads and writes fail then.  A live peer is never
 * ended by it, even a program stopped in a debugger: its kernel answers
 * the probes.  The kernel probes only while no data of c is in flight:
 * gvs_conn_unanswered covers that case.  0 at once for other
 * transports; GVS_E_IO when the kernel refuses a value. */
int gvs_conn_set_keepalive(struct gvs_conn *c,
                           const struct gvs_tcp_keepalive *k);

/* What gvs_conn_unanswered remembers of a connection between looks;
 * zeroed before the first. */
struct gvs_conn_watch {
    long long since_ns; /* gvs_now_ns() when it first saw data waiting */
};

/* 1 when the peer of a tcp:// or tls:// connection has left c's data
 * unanswered for at least ms milliseconds: data sent and not
 * acknowledged, or two window probes in a row not answered, with
 * nothing heard from the peer meanwhile; its host or the path to it is
 * gone.  Else 0, also for other transports and ms 0.  A peer whose
 * kernel acknowledges what it can take is answering, even when it takes
 * nothing (its receive window closed: a program stopped in a debugger
 * while a large reply was on its way); TCP_USER_TIMEOUT would end that
 * one, which is why it is not used.  The time is counted from the
 * first look that saw data waiting: looked at every ms / 4, the answer
 * comes at most ms / 4 late. */
int gvs_conn_unanswered(const struct gvs_conn *c, unsigned ms,
                        struct gvs_conn_watch *w);

/* The credentials of a local peer (SO_PEERCRED: its ids when it
 * connected) for unix:// and shm:// connections.  GVS_E_NOTSUP for a
 * connection that is not over a unix socket (tcp, tls), GVS_E_IO when
 * the kernel does not say. */
int gvs_conn_peer_cred(const struct gvs_conn *c, uint32_t *uid,
                       uint32_t *gid, int32_t *pid);

#endif
