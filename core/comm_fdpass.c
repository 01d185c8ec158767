/*
 * Descriptors passed over a unix socket with SCM_RIGHTS (comm_impl.h):
 * shm://'s setup socket and unix://'s descriptor channel carry a setup
 * message with one descriptor from gvsd, then the descriptors the client
 * passes, one message each: the tag as payload, the descriptor with it.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/err.h"

/* Descriptors a hostile peer might push along with a message; all are
 * closed, and more than one is refused. */
#define PASS_MAX_FDS 8

int gvs_fdpass_send(int sock, const void *p, size_t len, int fd, int flags)
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

int gvs_fdpass_send_tagged(int sock, int fd, uint64_t tag)
{
    int r = gvs_fdpass_send(sock, &tag, sizeof(tag), fd, 0);
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

/* One recvmsg of up to len bytes at p (flags: recvmsg's, with
 * MSG_CMSG_CLOEXEC): the first descriptor that came in *fd and the rest
 * closed, how many came in *nfds, whether some were cut off in *cut.
 * recvmsg's result, errno as it left it. */
static ssize_t recv_with_fds(int sock, void *p, size_t len, int flags, int *fd,
                             int *nfds, int *cut)
{
    struct iovec iov = {.iov_base = p, .iov_len = len};
    union {
        char buf[CMSG_SPACE(PASS_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = u.buf,
                         .msg_controllen = sizeof(u.buf)};
    ssize_t n;
    do
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags);
    while (n < 0 && errno == EINTR);
    int e = errno;
    *nfds = n > 0 ? take_fds(&msg, fd) : 0;
    *cut = n > 0 && (msg.msg_flags & MSG_CTRUNC) != 0;
    errno = e;
    return n;
}

/* The tag may come in pieces; its descriptor comes with the first. */
int gvs_fdpass_recv_tagged(int sock, unsigned timeout_ms, int *fd, uint64_t *tag)
{
    uint8_t t[sizeof(uint64_t)];
    size_t got = 0;
    int nfds = 0, rc = 0;
    while (rc == 0 && got < sizeof(t)) {
        rc = wait_socket(sock, timeout_ms);
        if (rc < 0)
            break;
        int late = -1, more, cut;
        ssize_t n = recv_with_fds(sock, t + got, sizeof(t) - got, MSG_DONTWAIT,
                                  got == 0 ? fd : &late, &more, &cut);
        if (n <= 0) {
            rc = n == 0 ? GVS_E_CLOSED : GVS_E_IO;
            break;
        }
        if (late >= 0)
            close(late);
        if ((got > 0 && more > 0) || cut)
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

/* SO_RCVTIMEO bounds the wait; the socket is left without one. */
int gvs_fdpass_recv_setup(int sock, void *m, size_t len, size_t *got, int *mfd,
                          const char *what)
{
    unsigned ms = gvs_connect_timeout_ms();
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    struct timeval none = {0, 0};
    *mfd = -1;
    if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "set a receive timeout");
    int nfds, cut;
    ssize_t n = recv_with_fds(sock, m, len, 0, mfd, &nfds, &cut);
    int e = errno;
    if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none)) < 0) {
        n = -1;
        e = errno;
    }
    int r = 0;
    if (n == 0)
        r = gvs_comm_fail(GVS_E_CONNECT, 0,
                          "the server closed the connection before setting "
                          "up %s", what);
    else if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK))
        r = gvs_comm_fail(GVS_E_CONNECT, 0,
                          "no %s set up by the server within %u ms", what,
                          ms);
    else if (n < 0)
        r = gvs_comm_fail(GVS_E_CONNECT, e, "receive the %s setup", what);
    else if ((got == NULL && n != (ssize_t)len) || nfds != 1 || cut)
        r = gvs_comm_fail(GVS_E_PROTO, 0, "malformed %s setup", what);
    else if (got != NULL)
        *got = (size_t)n;
    if (r < 0 && *mfd >= 0) {
        close(*mfd);
        *mfd = -1;
    }
    return r;
}
