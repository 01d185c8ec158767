/*
 * shm:///path: the frame stream of a client on gvsd's host goes through
 * two shared-memory rings (shm_ring.h) instead of a socket.  The unix
 * socket at the path carries the setup (the region's memfd, passed by
 * gvsd with SCM_RIGHTS), then only the descriptors the client passes
 * (gvs_conn_send_fd: memory it shares with gvsd), and stays open so that
 * each side learns of the other's death from it.
 *
 * Waiting: a sender short of room spins for gvs_spin_ns(), then sleeps on
 * the futex of the consumer's counter; a receiver sleeps on the
 * producer's counter at once (its callers spin first through
 * gvs_conn_spin_readable when they expect data soon).  A side is woken
 * only when it said it sleeps, so the fast path makes no system call.
 * Sleeps last SLEEP_SLICE_NS, after which the socket is checked, then
 * twice as long each time nothing came, up to SLEEP_SLICE_MAX_NS: a peer
 * that died without closing (SIGKILL) is noticed within a slice, and an
 * idle connection wakes once a second (64 idle sessions cost gvsd a
 * fraction of a percent of one core).
 * An orderly close sets the closer's flag in the region and wakes every
 * sleeper, so it is noticed at once (or, when the flag lands between a
 * sleeper's check and its sleep, within a slice).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/spin.h"
#include "shm_ring.h"

#define SLEEP_SLICE_NS 100000000LL
#define SLEEP_SLICE_MAX_NS 1000000000LL

/* The slice after one that ended with nothing to do. */
static long long next_slice(long long slice)
{
    return slice < SLEEP_SLICE_MAX_NS / 2 ? 2 * slice : SLEEP_SLICE_MAX_NS;
}
/* Descriptors a hostile server might push along with the region; all
 * are closed, and more than one is refused. */
#define SETUP_MAX_FDS 8

struct shm_conn {
    uint8_t *base;
    size_t len;
    struct gvs_shm_ctl *ctl;
    struct gvs_shm_ring in, out;
    int side; /* the ring we produce into: also our closed flag */
    unsigned timeout_ms;
    atomic_int down;      /* ended here: every call fails */
    atomic_int peer_gone; /* the setup socket says the peer has gone */
};

/* Whether the peer has ended the stream.  Acquire: what it sent before
 * closing is visible once this is seen. */
static int peer_ended(struct shm_conn *s)
{
    return atomic_load_explicit(&s->ctl->closed[!s->side],
                                memory_order_acquire) ||
           atomic_load(&s->peer_gone);
}

/* Passed descriptors may wait on the socket: only a hang-up or an
 * error says the peer has gone or shut it down. */
static void check_socket(struct gvs_conn *c, struct shm_conn *s)
{
    struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
        atomic_store(&s->peer_gone, 1);
}

static void shm_shutdown(struct gvs_conn *c)
{
    struct shm_conn *s = c->priv;
    atomic_store(&s->down, 1);
    /* Release (seq_cst): the peer reads all we published before it. */
    atomic_store(&s->ctl->closed[s->side], 1);
    gvs_shm_wake_all(s->ctl);
    shutdown(c->fd, SHUT_RDWR);
}

/* A peer that corrupts its counter gets no more service. */
static int broken(struct gvs_conn *c, int rc)
{
    shm_shutdown(c);
    return rc;
}

static int wait_room(struct gvs_conn *c, struct shm_conn *s)
{
    long long spin_until = gvs_now_ns() + gvs_spin_ns();
    long long slice = SLEEP_SLICE_NS;
    while (!gvs_shm_ring_has_room(&s->out)) {
        if (atomic_load(&s->down) || peer_ended(s))
            return GVS_E_CLOSED;
        if (gvs_now_ns() < spin_until) {
            gvs_cpu_relax();
        } else if (gvs_shm_ring_sleep(&s->out, slice) == GVS_E_TIMEOUT) {
            check_socket(c, s);
            slice = next_slice(slice);
        }
    }
    return 0;
}

/* Frames larger than the ring go through in pieces: what fits is
 * published, then we wait for the consumer to make room. */
static int shm_sendv(struct gvs_conn *c, const struct iovec *iov, int iovcnt)
{
    struct shm_conn *s = c->priv;
    if (atomic_load(&s->down) || peer_ended(s))
        return GVS_E_CLOSED;
    for (int i = 0; i < iovcnt; i++) {
        const uint8_t *p = iov[i].iov_base;
        size_t len = iov[i].iov_len;
        while (len > 0) {
            size_t put;
            int rc = gvs_shm_ring_put(&s->out, p, len, &put);
            if (rc < 0)
                return broken(c, rc);
            p += put;
            len -= put;
            if (put == 0) {
                gvs_shm_ring_publish(&s->out);
                rc = wait_room(c, s);
                if (rc < 0)
                    return rc;
            }
        }
    }
    gvs_shm_ring_publish(&s->out);
    return 0;
}

static int shm_recv_some(struct gvs_conn *c, void *p, size_t len, size_t *got)
{
    struct shm_conn *s = c->priv;
    long long deadline =
        s->timeout_ms ? gvs_now_ns() + (long long)s->timeout_ms * 1000000 : 0;
    long long idle_slice = SLEEP_SLICE_NS;
    for (;;) {
        if (atomic_load(&s->down))
            return GVS_E_CLOSED;
        /* Seen before reading: data sent before a close is still read. */
        int ended = peer_ended(s);
        int rc = gvs_shm_ring_read(&s->in, p, len, got);
        if (rc < 0)
            return broken(c, rc);
        if (*got > 0)
            return 0;
        if (ended)
            return GVS_E_CLOSED;
        long long slice = idle_slice;
        if (deadline != 0) {
            long long left = deadline - gvs_now_ns();
            if (left <= 0)
                return GVS_E_TIMEOUT;
            if (left < slice)
                slice = left;
        }
        if (gvs_shm_ring_sleep(&s->in, slice) == GVS_E_TIMEOUT) {
            check_socket(c, s);
            idle_slice = next_slice(idle_slice);
        }
    }
}

static int shm_readable(struct gvs_conn *c)
{
    struct shm_conn *s = c->priv;
    uint32_t n;
    return atomic_load(&s->down) || peer_ended(s) ||
           gvs_shm_ring_avail(&s->in, &n) < 0 || n > 0;
}

static int shm_set_timeout(struct gvs_conn *c, unsigned ms)
{
    struct shm_conn *s = c->priv;
    s->timeout_ms = ms;
    return 0;
}

static void shm_close(struct gvs_conn *c, int copy)
{
    struct shm_conn *s = c->priv;
    if (!copy)
        shm_shutdown(c);
    munmap(s->base, s->len);
    close(c->fd);
    gvs_free(s);
}

/* Sends len bytes with descriptor fd as SCM_RIGHTS in one message:
 * 1 when all went, 0 when the peer has gone (EPIPE, ECONNRESET), -1 on
 * another failure. */
static int send_with_fd(int sock, const void *p, size_t len, int fd,
                        int flags)
{
    struct iovec iov = {.iov_base = (void *)p, .iov_len = len};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = u.buf,
                         .msg_controllen = sizeof(u.buf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    ssize_t n;
    do
        n = sendmsg(sock, &msg, MSG_NOSIGNAL | flags);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)len)
        return 1;
    return n < 0 && (errno == EPIPE || errno == ECONNRESET) ? 0 : -1;
}

/* One message per descriptor: the tag as payload, the descriptor as
 * SCM_RIGHTS. */
static int shm_send_fd(struct gvs_conn *c, int fd, uint64_t tag)
{
    struct shm_conn *s = c->priv;
    if (atomic_load(&s->down) || peer_ended(s))
        return GVS_E_CLOSED;
    int r = send_with_fd(c->fd, &tag, sizeof(tag), fd, 0);
    return r > 0 ? 0 : r == 0 ? GVS_E_CLOSED : GVS_E_IO;
}

static int wait_socket(int fd, unsigned timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n;
    do
        n = poll(&p, 1, (int)timeout_ms);
    while (n < 0 && errno == EINTR);
    return n > 0 ? 0 : n == 0 ? GVS_E_TIMEOUT : GVS_E_IO;
}

/* Keeps the first descriptor passed in msg in *mfd and closes the rest;
 * returns how many there were. */
static int take_fds(struct msghdr *msg, int *mfd)
{
    int n = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm != NULL;
         cm = CMSG_NXTHDR(msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (n++ == 0)
                *mfd = fd;
            else
                close(fd);
        }
    }
    return n;
}

/* The tag may come in pieces; its descriptor comes with the first. */
static int shm_recv_fd(struct gvs_conn *c, unsigned timeout_ms, int *fd,
                       uint64_t *tag)
{
    uint8_t t[sizeof(uint64_t)];
    size_t got = 0;
    int nfds = 0, rc = 0;
    while (rc == 0 && got < sizeof(t)) {
        rc = wait_socket(c->fd, timeout_ms);
        if (rc < 0)
            break;
        struct iovec iov = {.iov_base = t + got, .iov_len = sizeof(t) - got};
        union {
            char buf[CMSG_SPACE(SETUP_MAX_FDS * sizeof(int))];
            struct cmsghdr align;
        } u;
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof(u.buf)};
        ssize_t n;
        do
            n = recvmsg(c->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n <= 0) {
            rc = n == 0 ? GVS_E_CLOSED : GVS_E_IO;
            break;
        }
        int late = -1;
        int more = take_fds(&msg, got == 0 ? fd : &late);
        if (late >= 0)
            close(late);
        if ((got > 0 && more > 0) || (msg.msg_flags & MSG_CTRUNC))
            rc = GVS_E_PROTO;
        nfds += more;
        got += (size_t)n;
    }
    if (rc == 0 && nfds != 1)
        rc = GVS_E_PROTO;
    if (rc < 0) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return rc;
    }
    memcpy(tag, t, sizeof(t));
    return 0;
}

static const struct gvs_conn_ops shm_ops = {
    .sendv = shm_sendv,
    .recv_some = shm_recv_some,
    .set_timeout = shm_set_timeout,
    .readable = shm_readable,
    .shutdown = shm_shutdown,
    .send_fd = shm_send_fd,
    .recv_fd = shm_recv_fd,
    .caps = GVS_CONN_CAP_CHEAP_WRITES | GVS_CONN_CAP_FDS,
    .close = shm_close,
};

/* Takes sock and the mapping (released on failure). */
static int conn_new(int sock, uint8_t *base, uint32_t ring_size, int side,
                    struct gvs_conn **out)
{
    struct gvs_conn *c = gvs_conn_alloc(&shm_ops);
    struct shm_conn *s = gvs_calloc(1, sizeof(*s));
    if (c == NULL || s == NULL) {
        gvs_free(c);
        gvs_free(s);
        munmap(base, gvs_shm_region_size(ring_size));
        close(sock);
        return GVS_E_NOMEM;
    }
    s->base = base;
    s->len = gvs_shm_region_size(ring_size);
    s->ctl = (struct gvs_shm_ctl *)base;
    s->side = side;
    gvs_shm_ring_init(&s->out, base, ring_size, side, 1);
    gvs_shm_ring_init(&s->in, base, ring_size, !side, 0);
    c->fd = sock;
    c->priv = s;
    gvs_unix_peer(sock, c->peer, sizeof(c->peer));
    *out = c;
    return 0;
}

/* Server side. ------------------------------------------------------ */

/* Sealed so that the client cannot shrink it under gvsd (a fault on the
 * next access) nor grow it. */
static int make_region(uint32_t ring_size, int *mfd, uint8_t **base)
{
    size_t len = gvs_shm_region_size(ring_size);
    *mfd = memfd_create("gvs-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (*mfd < 0)
        return GVS_E_IO;
    void *p = MAP_FAILED;
    if (ftruncate(*mfd, (off_t)len) == 0 &&
        fcntl(*mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ==
            0)
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *mfd, 0);
    if (p == MAP_FAILED) {
        close(*mfd);
        return GVS_E_IO;
    }
    *base = p;
    return 0;
}

static int send_setup(int sock, int mfd, uint32_t ring_size)
{
    struct gvs_shm_setup m = {.magic = GVS_SHM_MAGIC,
                              .version = GVS_SHM_VERSION,
                              .ring_size = ring_size};
    /* A fresh socket has room for 16 bytes: never blocks gvsd's loop.  A
     * client gone before its setup is a connection aborted early. */
    int r = send_with_fd(sock, &m, sizeof(m), mfd, MSG_DONTWAIT);
    return r > 0 ? 0 : r == 0 ? GVS_E_TIMEOUT : GVS_E_IO;
}

static int shm_accept(struct gvs_listener *l, struct gvs_conn **out)
{
    int sock, mfd;
    uint8_t *base;
    uint32_t ring_size = GVS_SHM_RING_DEFAULT;
    int r = gvs_fd_accept(l->fd, &sock);
    if (r < 0)
        return r;
    r = make_region(ring_size, &mfd, &base);
    if (r == 0) {
        r = send_setup(sock, mfd, ring_size);
        close(mfd);
        if (r < 0)
            munmap(base, gvs_shm_region_size(ring_size));
    }
    if (r < 0) {
        close(sock);
        return r;
    }
    return conn_new(sock, base, ring_size, GVS_SHM_S2C, out);
}

/* Client side. ------------------------------------------------------ */

/* Receives the setup message within the connect timeout. */
static int recv_setup(int sock, struct gvs_shm_setup *m, int *mfd)
{
    unsigned ms = gvs_connect_timeout_ms();
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    struct timeval none = {0, 0};
    struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
    union {
        char buf[CMSG_SPACE(SETUP_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = u.buf,
                         .msg_controllen = sizeof(u.buf)};
    *mfd = -1;
    if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "set a receive timeout");
    ssize_t n;
    do
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    int e = errno;
    int nfds = n > 0 ? take_fds(&msg, mfd) : 0;
    if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none)) < 0) {
        n = -1;
        e = errno;
    }
    int r = 0;
    if (n == 0)
        r = gvs_comm_fail(GVS_E_CONNECT, 0,
                          "the server closed the connection before setting "
                          "up shared memory");
    else if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK))
        r = gvs_comm_fail(GVS_E_CONNECT, 0,
                          "no shared memory set up by the server within "
                          "%u ms",
                          ms);
    else if (n < 0)
        r = gvs_comm_fail(GVS_E_CONNECT, e, "receive the shared memory setup");
    else if (n != (ssize_t)sizeof(*m) || nfds != 1 ||
             (msg.msg_flags & MSG_CTRUNC))
        r = gvs_comm_fail(GVS_E_PROTO, 0, "malformed shared memory setup");
    if (r < 0 && *mfd >= 0) {
        close(*mfd);
        *mfd = -1;
    }
    return r;
}

/* Everything about the region is checked here, once; later only the
 * peer's counters are read from it. */
static int map_region(const struct gvs_shm_setup *m, int mfd, uint8_t **base)
{
    struct stat st;
    if (m->magic != GVS_SHM_MAGIC || m->version != GVS_SHM_VERSION ||
        m->reserved != 0 || !gvs_shm_ring_size_ok(m->ring_size))
        return GVS_E_PROTO;
    size_t len = gvs_shm_region_size(m->ring_size);
    int seals = fcntl(mfd, F_GET_SEALS);
    int need = F_SEAL_SHRINK | F_SEAL_GROW;
    if (fstat(mfd, &st) < 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size != len || seals < 0 || (seals & need) != need)
        return GVS_E_PROTO;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (p == MAP_FAILED)
        return GVS_E_IO;
    *base = p;
    return 0;
}

static int shm_connect(const struct gvs_uri *u, struct gvs_conn **out)
{
    int sock, mfd;
    struct gvs_shm_setup m;
    uint8_t *base = NULL;
    int r = gvs_unix_connect_fd(u->path, &sock);
    if (r < 0)
        return r;
    r = recv_setup(sock, &m, &mfd);
    if (r == 0) {
        r = map_region(&m, mfd, &base);
        close(mfd);
    }
    if (r < 0) {
        close(sock);
        return r;
    }
    return conn_new(sock, base, m.ring_size, GVS_SHM_C2S, out);
}

static int shm_listen(const struct gvs_uri *u, struct gvs_listener **out)
{
    return gvs_unix_listen(u, &gvs_transport_shm, out);
}

const struct gvs_transport gvs_transport_shm = {
    .scheme = "shm",
    .listen = shm_listen,
    .accept = shm_accept,
    .connect = shm_connect,
};
