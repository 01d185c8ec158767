/*
 * tls://host:port: the tcp transport's sockets with OpenSSL on top.
 *
 * The client's handshake is part of gvs_connect (and of its time limit).
 * The server's is left to the process that serves the connection: gvsd
 * accepts in one loop for every client and forks a worker per session,
 * and a client that never finishes its handshake must not hold that loop.
 * It runs on the first receive (bounded by the receive timeout, which
 * gvsd's session sets to its handshake timeout before reading HELLO) or
 * on gvs_conn_start; a send before it is refused, which makes gvsd's
 * "too many sessions" answer, sent from the accept loop without reading,
 * close a tls:// connection instead.
 *
 * An SSL object must not be used by two threads at once, while gvs reads
 * on one thread and sends from others.  The socket is non-blocking and
 * every OpenSSL call is made under the connection's lock, which is never
 * held while waiting: a reader waits for its socket in poll() without
 * it, so senders go on, and shutdown(2) on the socket wakes every
 * waiter.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "comm_impl.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "gvs/spin.h"
#include "tls_impl.h"

/* Bytes handed to one SSL_write: the lock is let go between calls, so a
 * reader never waits behind a whole bulk chunk being encrypted. */
#define WRITE_MAX (256u << 10)
/* Sends at least this long go corked (tls_sendv): four records. */
#define CORK_MIN ((size_t)4 * GVS_TLS_RECORD_MAX)

enum { HANDSHAKE_DUE = 0, READY = 1 };

struct tls_conn {
    SSL *ssl;
    pthread_mutex_t lock; /* every call on ssl */
    /* One sendv at a time: its records stay together and rec is its.
     * Also the handshake, once, whoever asks first (nothing is sent
     * before it). */
    pthread_mutex_t send_lock;
    /* HANDSHAKE_DUE, READY, or the GVS_E_* code the handshake failed
     * with (or a later fatal error), which every later call returns. */
    atomic_int state;
    atomic_uint timeout_ms; /* receive timeout; 0: none */
    uint8_t rec[GVS_TLS_RECORD_MAX]; /* small iovecs, gathered */
};

static long long now_ms(void)
{
    return gvs_now_ns() / 1000000;
}

/* -1: no deadline. */
static long long deadline_in(unsigned ms)
{
    return ms == 0 ? -1 : now_ms() + ms;
}

/* Waits for events on fd until the deadline: 0 (ready, or hung up: the
 * next OpenSSL call says which), GVS_E_TIMEOUT or GVS_E_IO. */
static int wait_fd(int fd, short events, long long deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    for (;;) {
        long long left = deadline < 0 ? -1 : deadline - now_ms();
        if (deadline >= 0 && left <= 0)
            return GVS_E_TIMEOUT;
        if (left > INT_MAX)
            left = INT_MAX;
        int n = poll(&p, 1, (int)left);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return GVS_E_IO;
    }
}

/* What a failed OpenSSL call (its return value ret; en: errno just
 * after it) means, under the lock: POLLIN or POLLOUT to wait for, or a
 * GVS_E_* code with the reason in why.  An end of stream without TLS's
 * closing alert is the peer gone (killed, or shut down), as on tcp. */
static int ssl_failure(struct tls_conn *t, int ret, int en, char *why,
                       size_t len)
{
    switch (SSL_get_error(t->ssl, ret)) {
    case SSL_ERROR_WANT_READ:
        return POLLIN;
    case SSL_ERROR_WANT_WRITE:
        return POLLOUT;
    case SSL_ERROR_ZERO_RETURN:
        snprintf(why, len, "connection closed");
        return GVS_E_CLOSED;
    case SSL_ERROR_SYSCALL:
        ERR_clear_error();
        snprintf(why, len, "%s", en != 0 ? strerror(en) : "connection closed");
        return en == 0 || en == EPIPE || en == ECONNRESET ? GVS_E_CLOSED
                                                           : GVS_E_IO;
    default:
        if (ERR_GET_REASON(ERR_peek_error()) ==
            SSL_R_UNEXPECTED_EOF_WHILE_READING) {
            ERR_clear_error();
            snprintf(why, len, "connection closed");
            return GVS_E_CLOSED;
        }
        gvs_tls_reason(t->ssl, why, len);
        return GVS_E_TLS;
    }
}

enum op { OP_HANDSHAKE, OP_READ, OP_WRITE };

/* One OpenSSL call under the lock: > 0 bytes moved (1: the handshake
 * is done), 0 with *wait the socket event to wait for, or a GVS_E_*
 * code, which becomes the connection's state. */
static int step(struct gvs_conn *c, enum op op, void *p, int n, short *wait)
{
    struct tls_conn *t = c->priv;
    char why[256];
    pthread_mutex_lock(&t->lock);
    int r = atomic_load(&t->state);
    if (r < 0) {
        pthread_mutex_unlock(&t->lock);
        return r;
    }
    ERR_clear_error();
    errno = 0;
    r = op == OP_HANDSHAKE ? SSL_do_handshake(t->ssl)
        : op == OP_READ    ? SSL_read(t->ssl, p, n)
                           : SSL_write(t->ssl, p, n);
    int en = errno;
    if (r <= 0) {
        int f = ssl_failure(t, r, en, why, sizeof(why));
        *wait = f > 0 ? (short)f : 0;
        r = f > 0 ? 0 : f;
        if (f < 0)
            atomic_store(&t->state, f);
        if (f < 0 && (f == GVS_E_TLS || op == OP_HANDSHAKE))
            gvs_warn("tls %s %s: %s",
                     op == OP_HANDSHAKE ? "handshake with" : "connection to",
                     c->peer, why);
    }
    pthread_mutex_unlock(&t->lock);
    return r;
}

/* Repeats step until it moves something, waiting on the socket between
 * tries; a timeout leaves the connection usable. */
static int run(struct gvs_conn *c, enum op op, void *p, size_t len,
               long long deadline)
{
    int n = len > INT_MAX ? INT_MAX : (int)len;
    for (;;) {
        short wait = 0;
        int r = step(c, op, p, n, &wait);
        if (r != 0)
            return r;
        r = wait_fd(c->fd, wait, deadline);
        if (r < 0)
            return r;
    }
}

static int tls_start(struct gvs_conn *c, unsigned timeout_ms)
{
    struct tls_conn *t = c->priv;
    int state = atomic_load(&t->state);
    if (state != HANDSHAKE_DUE)
        return state < 0 ? state : 0;
    pthread_mutex_lock(&t->send_lock);
    int r = 0;
    if (atomic_load(&t->state) == HANDSHAKE_DUE) {
        r = run(c, OP_HANDSHAKE, NULL, 0, deadline_in(timeout_ms));
        if (r == GVS_E_TIMEOUT)
            gvs_warn("tls handshake with %s: timed out", c->peer);
        atomic_store(&t->state, r > 0 ? READY : r);
    }
    state = atomic_load(&t->state);
    pthread_mutex_unlock(&t->send_lock);
    return state < 0 ? state : 0;
}

/* A receive before the handshake runs it, within the receive timeout
 * (else the connect timeout: it is still a connection being set up). */
static int started(struct gvs_conn *c)
{
    struct tls_conn *t = c->priv;
    int state = atomic_load(&t->state);
    if (state != HANDSHAKE_DUE)
        return state < 0 ? state : 0;
    unsigned ms = atomic_load(&t->timeout_ms);
    return tls_start(c, ms != 0 ? ms : gvs_connect_timeout_ms());
}

static int tls_recv_some(struct gvs_conn *c, void *p, size_t len, size_t *got)
{
    struct tls_conn *t = c->priv;
    int r = started(c);
    if (r < 0)
        return r;
    r = run(c, OP_READ, p, len, deadline_in(atomic_load(&t->timeout_ms)));
    if (r < 0)
        return r;
    *got = (size_t)r;
    return 0;
}

static int write_all(struct gvs_conn *c, const uint8_t *p, size_t len)
{
    while (len > 0) {
        int r = run(c, OP_WRITE, (void *)(uintptr_t)p,
                    len < WRITE_MAX ? len : WRITE_MAX, -1);
        if (r < 0)
            return r;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* Small iovecs (a frame header, a short body) are gathered into one
 * record rather than each costing a record and a system call; what
 * fills whole records goes from the caller's memory as it is. */
static int gather_send(struct gvs_conn *c, const struct iovec *iov,
                       int iovcnt)
{
    struct tls_conn *t = c->priv;
    size_t staged = 0;
    int r = 0;
    for (int i = 0; i < iovcnt && r == 0; i++) {
        const uint8_t *p = iov[i].iov_base;
        size_t left = iov[i].iov_len;
        while (left > 0 && r == 0) {
            if (staged == 0 && left >= sizeof(t->rec)) {
                r = write_all(c, p, left);
                break;
            }
            size_t k = sizeof(t->rec) - staged < left ? sizeof(t->rec) - staged
                                                      : left;
            memcpy(t->rec + staged, p, k);
            staged += k;
            p += k;
            left -= k;
            if (staged == sizeof(t->rec)) {
                r = write_all(c, t->rec, staged);
                staged = 0;
            }
        }
    }
    return r == 0 && staged > 0 ? write_all(c, t->rec, staged) : r;
}

/* Sets the socket's TCP_CORK (tls_sendv). */
static void cork(int fd, int on)
{
    (void)setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
}

static int tls_sendv(struct gvs_conn *c, const struct iovec *iov, int iovcnt)
{
    struct tls_conn *t = c->priv;
    int state = atomic_load(&t->state);
    if (state != READY)
        return state < 0 ? state : GVS_E_INVAL;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    /* A record is one send, and with TCP_NODELAY one segment: a bulk
     * chunk's records go corked, in full segments, fewer of them for
     * both kernels to carry, the last pushed out when the cork comes
     * off.  A short message goes at once, without the two calls. */
    int corked = len >= CORK_MIN;
    pthread_mutex_lock(&t->send_lock);
    if (corked)
        cork(c->fd, 1);
    int r = gather_send(c, iov, iovcnt);
    if (corked)
        cork(c->fd, 0);
    pthread_mutex_unlock(&t->send_lock);
    return r;
}

static int tls_set_timeout(struct gvs_conn *c, unsigned ms)
{
    struct tls_conn *t = c->priv;
    atomic_store(&t->timeout_ms, ms);
    return 0;
}

/* Decrypted bytes or records read ahead count as readable: the socket
 * alone would not show them.  A busy lock (a send under way)
 * says nothing either way: the caller reads in the end regardless. */
static int tls_readable(struct gvs_conn *c)
{
    struct tls_conn *t = c->priv;
    int state = atomic_load(&t->state);
    if (state < 0)
        return 1;
    if (state == READY && pthread_mutex_trylock(&t->lock) == 0) {
        int pending = SSL_has_pending(t->ssl);
        pthread_mutex_unlock(&t->lock);
        if (pending)
            return 1;
    }
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

static void tls_shutdown(struct gvs_conn *c)
{
    shutdown(c->fd, SHUT_RDWR);
}

static void tls_free(struct tls_conn *t)
{
    SSL_free(t->ssl);
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->send_lock);
    gvs_free(t);
}

/* A connection closed in order tells its peer with TLS's closing alert
 * (one try: the socket does not block).  A copy says nothing: the
 * session is the other process's. */
static void tls_close(struct gvs_conn *c, int copy)
{
    struct tls_conn *t = c->priv;
    if (!copy && atomic_load(&t->state) == READY) {
        pthread_mutex_lock(&t->lock);
        SSL_shutdown(t->ssl);
        ERR_clear_error();
        pthread_mutex_unlock(&t->lock);
    }
    tls_free(t);
    close(c->fd);
    c->fd = -1;
}

static const struct gvs_conn_ops tls_conn_ops = {
    .sendv = tls_sendv,
    .recv_some = tls_recv_some,
    .set_timeout = tls_set_timeout,
    .readable = tls_readable,
    .shutdown = tls_shutdown,
    .close = tls_close,
    .start = tls_start,
};

/* Wraps a connected socket; closes fd on failure. */
static int conn_new(int fd, SSL_CTX *ctx, int server, struct gvs_conn **out)
{
    int fl = fcntl(fd, F_GETFL);
    struct tls_conn *t = gvs_calloc(1, sizeof(*t));
    struct gvs_conn *c = gvs_conn_alloc(&tls_conn_ops);
    BIO *bio = gvs_tls_bio_new(fd);
    SSL *ssl = SSL_new(ctx);
    if (t == NULL || c == NULL || bio == NULL || ssl == NULL || fl < 0 ||
        fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        SSL_free(ssl);
        BIO_free(bio);
        gvs_free(c);
        gvs_free(t);
        close(fd);
        ERR_clear_error();
        return fl < 0 ? GVS_E_IO : GVS_E_NOMEM;
    }
    SSL_set_bio(ssl, bio, bio);
    if (server)
        SSL_set_accept_state(ssl);
    else
        SSL_set_connect_state(ssl);
    t->ssl = ssl;
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->send_lock, NULL);
    atomic_init(&t->state, HANDSHAKE_DUE);
    atomic_init(&t->timeout_ms, 0);
    c->fd = fd;
    c->priv = t;
    *out = c;
    return 0;
}

static void tls_listener_close(struct gvs_listener *l, int keep_path)
{
    (void)keep_path;
    if (l->fd >= 0)
        close(l->fd);
    SSL_CTX_free(l->priv);
}

static int tls_listen(const struct gvs_uri *u, struct gvs_listener **out)
{
    char uri[GVS_URI_TEXT_MAX];
    gvs_uri_format(u, uri, sizeof(uri));
    SSL_CTX *ctx;
    int r = gvs_tls_server_ctx(uri, &ctx);
    if (r < 0)
        return r;
    r = gvs_tcp_listen(u, &gvs_transport_tls, out);
    if (r < 0) {
        SSL_CTX_free(ctx);
        return r;
    }
    (*out)->priv = ctx;
    (*out)->close = tls_listener_close;
    return 0;
}

static int tls_accept(struct gvs_listener *l, struct gvs_conn **out)
{
    int fd;
    int r = gvs_tcp_accept_fd(l, &fd);
    if (r == 0)
        r = conn_new(fd, l->priv, 1, out);
    if (r == 0)
        gvs_tcp_peer(*out);
    return r;
}

/* The name or address the client asked for is the one the server's
 * certificate must carry. */
static int expect_host(SSL *ssl, const char *host)
{
    struct in6_addr a;
    if (inet_pton(AF_INET, host, &a) == 1 || inet_pton(AF_INET6, host, &a) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
                   ? 0
                   : GVS_E_NOMEM;
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return SSL_set1_host(ssl, host) == 1 &&
                   SSL_set_tlsext_host_name(ssl, host) == 1
               ? 0
               : GVS_E_NOMEM;
}

static int tls_connect(const struct gvs_uri *u, struct gvs_conn **out)
{
    long long deadline = now_ms() + gvs_connect_timeout_ms();
    char uri[GVS_URI_TEXT_MAX];
    gvs_uri_format(u, uri, sizeof(uri));
    SSL_CTX *ctx;
    int r = gvs_tls_client_ctx(uri, &ctx);
    if (r < 0)
        return r;
    int fd;
    r = gvs_tcp_connect_fd(u, deadline, &fd);
    struct gvs_conn *c = NULL;
    if (r == 0)
        r = conn_new(fd, ctx, 0, &c);
    /* The connection's SSL holds its own reference. */
    SSL_CTX_free(ctx);
    if (r < 0)
        return r;
    gvs_tcp_peer(c);
    struct tls_conn *t = c->priv;
    r = expect_host(t->ssl, u->host);
    if (r == 0) {
        r = run(c, OP_HANDSHAKE, NULL, 0, deadline);
        if (r == GVS_E_TIMEOUT)
            gvs_warn("tls handshake with %s: timed out", c->peer);
    }
    if (r < 0) {
        ERR_clear_error();
        /* Only a failure of TLS itself is told apart: a server gone,
         * silent or refusing is one that cannot be connected to. */
        if (r != GVS_E_TLS && r != GVS_E_NOMEM)
            r = gvs_comm_fail(GVS_E_CONNECT, 0, "TLS handshake with %s: %s",
                              c->peer, gvs_strerror(r));
        gvs_conn_close(c);
        return r;
    }
    atomic_store(&t->state, READY);
    *out = c;
    return 0;
}

const struct gvs_transport gvs_transport_tls = {
    .scheme = "tls",
    .listen = tls_listen,
    .accept = tls_accept,
    .connect = tls_connect,
};
