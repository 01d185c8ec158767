#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* iovecs handed to one sendmsg; more are sent by later calls. */
#define SENDV_BATCH 64

static int send_errno(int e)
{
    return e == EPIPE || e == ECONNRESET ? GVS_E_CLOSED : GVS_E_IO;
}

/* MSG_NOSIGNAL: a library inside a user's program must never raise
 * SIGPIPE when the peer has gone. */
static int fd_sendv(struct gvs_conn *c, const struct iovec *iov, int iovcnt)
{
    int i = 0;
    size_t skip = 0; /* bytes of iov[i] already sent */
    while (i < iovcnt) {
        struct iovec batch[SENDV_BATCH];
        int n = 0;
        for (int j = i; j < iovcnt && n < SENDV_BATCH; j++) {
            size_t off = j == i ? skip : 0;
            if (iov[j].iov_len == off)
                continue;
            batch[n].iov_base = (uint8_t *)iov[j].iov_base + off;
            batch[n].iov_len = iov[j].iov_len - off;
            n++;
        }
        if (n == 0)
            return 0;
        struct msghdr msg = {.msg_iov = batch, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return send_errno(errno);
        }
        size_t sent = (size_t)w;
        while (i < iovcnt && sent >= iov[i].iov_len - skip) {
            sent -= iov[i].iov_len - skip;
            skip = 0;
            i++;
        }
        skip += sent;
    }
    return 0;
}

/* Bytes read ahead of what a caller asked for: a frame's header and a
 * small body, often several small frames, come with one recv instead of
 * one each.  Reads of at least half the buffer go straight to the
 * caller's memory.  Only the connection's one reader uses it. */
#define FD_RBUF_SIZE ((size_t)64 << 10)

struct fd_rbuf {
    size_t off, len;
    uint8_t d[FD_RBUF_SIZE];
};

static int recv_errno(int e)
{
    if (e == EAGAIN || e == EWOULDBLOCK)
        return GVS_E_TIMEOUT;
    return e == ECONNRESET ? GVS_E_CLOSED : GVS_E_IO;
}

static int fd_recv(struct gvs_conn *c, void *p, size_t len, size_t *got)
{
    for (;;) {
        ssize_t r = recv(c->fd, p, len, 0);
        if (r > 0) {
            *got = (size_t)r;
            return 0;
        }
        if (r == 0)
            return GVS_E_CLOSED;
        if (errno != EINTR)
            return recv_errno(errno);
    }
}

static int fd_recv_some(struct gvs_conn *c, void *p, size_t len, size_t *got)
{
    struct fd_rbuf *b = c->priv;
    if (b != NULL && b->len > 0) {
        size_t n = len < b->len ? len : b->len;
        memcpy(p, b->d + b->off, n);
        b->off += n;
        b->len -= n;
        *got = n;
        return 0;
    }
    if (len >= FD_RBUF_SIZE / 2)
        return fd_recv(c, p, len, got);
    if (b == NULL && (c->priv = b = gvs_calloc(1, sizeof(*b))) == NULL)
        return fd_recv(c, p, len, got);
    size_t n;
    int rc = fd_recv(c, b->d, FD_RBUF_SIZE, &n);
    if (rc < 0)
        return rc;
    b->off = 0;
    b->len = n;
    return fd_recv_some(c, p, len, got);
}

/* Bytes read ahead are data the socket no longer shows. */
static int fd_readable(struct gvs_conn *c)
{
    const struct fd_rbuf *b = c->priv;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    return (b != NULL && b->len > 0) || poll(&p, 1, 0) > 0;
}

static int fd_set_timeout(struct gvs_conn *c, unsigned ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
        return GVS_E_IO;
    return 0;
}

static void fd_shutdown(struct gvs_conn *c)
{
    shutdown(c->fd, SHUT_RDWR);
}

/* Closing a copy is the same: the socket lives on in the other
 * process's descriptor. */
static void fd_close(struct gvs_conn *c, int copy)
{
    (void)copy;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    gvs_free(c->priv);
    c->priv = NULL;
}

const struct gvs_conn_ops gvs_fd_conn_ops = {
    .sendv = fd_sendv,
    .recv_some = fd_recv_some,
    .readable = fd_readable,
    .set_timeout = fd_set_timeout,
    .shutdown = fd_shutdown,
    .close = fd_close,
};

/* unix://'s plain sockets: the socket's operations, descriptors over a
 * socket of their own.  priv is this, allocated with the connection: its
 * read-ahead buffer first, so that the socket's operations find theirs
 * there. */
struct side {
    struct fd_rbuf rbuf;
    int fd;
};

static int side_send_fd(struct gvs_conn *c, int fd, uint64_t tag)
{
    const struct side *sd = c->priv;
    return gvs_fdpass_send_tagged(sd->fd, fd, tag);
}

static int side_recv_fd(struct gvs_conn *c, unsigned timeout_ms, int *fd, uint64_t *tag)
{
    const struct side *sd = c->priv;
    *fd = -1;
    return gvs_fdpass_recv_tagged(sd->fd, timeout_ms, fd, tag);
}

static void side_close(struct gvs_conn *c, int copy)
{
    struct side *sd = c->priv;
    if (sd != NULL)
        close(sd->fd);
    fd_close(c, copy);
}

static const struct gvs_conn_ops side_conn_ops = {
    .sendv = fd_sendv,
    .recv_some = fd_recv_some,
    .readable = fd_readable,
    .set_timeout = fd_set_timeout,
    .shutdown = fd_shutdown,
    .send_fd = side_send_fd,
    .recv_fd = side_recv_fd,
    .caps = GVS_CONN_CAP_FDS,
    .close = side_close,
};

int gvs_fd_conn_new_side(int fd, int side, struct gvs_conn **out)
{
    struct gvs_conn *c = gvs_conn_alloc(&side_conn_ops);
    struct side *sd = gvs_calloc(1, sizeof(*sd));
    if (c == NULL || sd == NULL) {
        gvs_free(c);
        gvs_free(sd);
        close(fd);
        close(side);
        return GVS_E_NOMEM;
    }
    sd->fd = side;
    c->fd = fd;
    c->priv = sd;
    *out = c;
    return 0;
}

int gvs_fd_conn_new(int fd, struct gvs_conn **out)
{
    struct gvs_conn *c = gvs_conn_alloc(&gvs_fd_conn_ops);
    if (c == NULL) {
        close(fd);
        return GVS_E_NOMEM;
    }
    c->fd = fd;
    *out = c;
    return 0;
}

int gvs_fd_accept(int lfd, int *fd)
{
    *fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (*fd >= 0)
        return 0;
    if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN ||
        errno == EWOULDBLOCK)
        return GVS_E_TIMEOUT;
    return GVS_E_IO;
}

unsigned gvs_connect_timeout_ms(void)
{
    const char *s = getenv("GVS_CONNECT_TIMEOUT_MS");
    if (s == NULL || *s < '0' || *s > '9')
        return GVS_CONNECT_TIMEOUT_MS_DEFAULT;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v == 0 || v > 3600000ul)
        return GVS_CONNECT_TIMEOUT_MS_DEFAULT;
    return (unsigned)v;
}

/* Asked of the socket rather than the transport: unix and shm both
 * stand on a unix socket (shm's carries the setup), tcp and tls do not. */
int gvs_conn_peer_cred(const struct gvs_conn *c, uint32_t *uid,
                       uint32_t *gid, int32_t *pid)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    if (c->fd < 0 || getsockname(c->fd, (struct sockaddr *)&sa, &salen) < 0)
        return GVS_E_IO;
    if (sa.ss_family != AF_UNIX)
        return GVS_E_NOTSUP;
    struct ucred cr;
    socklen_t len = sizeof(cr);
    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
        len != sizeof(cr))
        return GVS_E_IO;
    *uid = (uint32_t)cr.uid;
    *gid = (uint32_t)cr.gid;
    *pid = (int32_t)cr.pid;
    return 0;
}
