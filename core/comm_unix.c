#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "shm_ring.h"

/* Identity of the socket file we created, so close unlinks only ours. */
struct unix_listener {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    dev_t dev;
    ino_t ino;
};

static void set_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
}

void gvs_unix_peer(int fd, char *out, size_t outlen)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
        snprintf(out, outlen, "uid=%u gid=%u pid=%ld", (unsigned)cr.uid,
                 (unsigned)cr.gid, (long)cr.pid);
    else
        snprintf(out, outlen, "unix peer");
}

/* An existing socket file may be left over from a crashed server.  It is
 * replaced only when it is a socket nobody answers on; a live server's
 * socket is never stolen. */
static int remove_stale(const struct sockaddr_un *sa)
{
    const char *path = sa->sun_path;
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0
                               : gvs_comm_fail(GVS_E_IO, errno, "stat %s",
                                               path);
    if (!S_ISSOCK(st.st_mode))
        return gvs_comm_fail(GVS_E_IO, 0, "%s exists and is not a socket",
                             path);
    /* Non-blocking: a live server with a full backlog answers EAGAIN
     * instead of making us wait. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "socket");
    int r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
    int e = errno;
    close(fd);
    if (r == 0 || e == EAGAIN)
        return gvs_comm_fail(GVS_E_INUSE, 0,
                             "a connection to %s was accepted", path);
    if (e != ECONNREFUSED)
        return gvs_comm_fail(GVS_E_IO, e, "connect %s to see if it is stale",
                             path);
    return unlink(path) == 0 || errno == ENOENT
               ? 0
               : gvs_comm_fail(GVS_E_IO, errno, "remove stale socket %s",
                               path);
}

static void unix_listener_close(struct gvs_listener *l, int keep_path)
{
    struct unix_listener *ul = l->priv;
    struct stat st;
    if (!keep_path && lstat(ul->path, &st) == 0 && st.st_dev == ul->dev &&
        st.st_ino == ul->ino)
        unlink(ul->path);
    if (l->fd >= 0)
        close(l->fd);
    gvs_free(ul);
}

static int bind_listen(int fd, const struct sockaddr_un *sa)
{
    int r = bind(fd, (const struct sockaddr *)sa, sizeof(*sa));
    if (r < 0 && errno == EADDRINUSE) {
        int stale = remove_stale(sa);
        if (stale < 0)
            return stale;
        r = bind(fd, (const struct sockaddr *)sa, sizeof(*sa));
    }
    if (r < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "bind %s", sa->sun_path);
    if (listen(fd, SOMAXCONN) < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "listen %s", sa->sun_path);
    return 0;
}

int gvs_unix_listen(const struct gvs_uri *u, const struct gvs_transport *t,
                    struct gvs_listener **out)
{
    struct sockaddr_un sa;
    struct stat st;
    set_addr(&sa, u->path);
    struct gvs_listener *l = gvs_listener_alloc(t);
    struct unix_listener *ul = gvs_calloc(1, sizeof(*ul));
    if (l == NULL || ul == NULL) {
        gvs_free(l);
        gvs_free(ul);
        return GVS_E_NOMEM;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int r = fd < 0 ? gvs_comm_fail(GVS_E_IO, errno, "socket")
                   : bind_listen(fd, &sa);
    if (r == 0 && lstat(sa.sun_path, &st) < 0)
        r = gvs_comm_fail(GVS_E_IO, errno, "stat %s", sa.sun_path);
    if (r < 0) {
        if (fd >= 0)
            close(fd);
        gvs_free(l);
        gvs_free(ul);
        return r;
    }
    snprintf(ul->path, sizeof(ul->path), "%s", u->path);
    ul->dev = st.st_dev;
    ul->ino = st.st_ino;
    l->priv = ul;
    l->fd = fd;
    l->close = unix_listener_close;
    gvs_uri_format(u, l->uri, sizeof(l->uri));
    *out = l;
    return 0;
}

static int unix_listen(const struct gvs_uri *u, struct gvs_listener **out)
{
    return gvs_unix_listen(u, &gvs_transport_unix, out);
}

/* $GVS_UNIX_RINGS, read at each accept: 0 keeps unix:// connections on
 * the socket (the frames' copies through the kernel, a system call and
 * a wake-up each way); anything else gives them shm://'s rings. */
static int unix_rings(void)
{
    const char *s = getenv("GVS_UNIX_RINGS");
    return s == NULL || strcmp(s, "0") != 0;
}

static int unix_accept(struct gvs_listener *l, struct gvs_conn **out)
{
    int fd, pair[2];
    int r = gvs_fd_accept(l->fd, &fd);
    if (r < 0)
        return r;
    if (unix_rings())
        return gvs_shm_conn_serve(fd, out);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
        close(fd);
        return GVS_E_IO;
    }
    /* A fresh socket has room for 8 bytes: never blocks gvsd's loop.  A
     * client gone before its setup is a connection aborted early. */
    uint64_t tag = GVS_UNIX_SETUP_TAG;
    int sent = gvs_fdpass_send(fd, &tag, sizeof(tag), pair[1], MSG_DONTWAIT);
    close(pair[1]);
    if (sent <= 0) {
        close(pair[0]);
        close(fd);
        return sent == 0 ? GVS_E_TIMEOUT : GVS_E_IO;
    }
    r = gvs_fd_conn_new_side(fd, pair[0], out);
    if (r == 0)
        gvs_unix_peer(fd, (*out)->peer, sizeof((*out)->peer));
    return r;
}

/* A blocking AF_UNIX connect waits while the server's backlog is full;
 * SO_SNDTIMEO bounds that wait so a stopped server cannot hang us. */
int gvs_unix_connect_fd(const char *path, int *fd)
{
    struct sockaddr_un sa;
    set_addr(&sa, path);
    *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "socket");
    unsigned ms = gvs_connect_timeout_ms();
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    struct timeval none = {0, 0};
    if (setsockopt(*fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
        connect(*fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        setsockopt(*fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none)) < 0) {
        int e = errno;
        close(*fd);
        *fd = -1;
        if (e == EAGAIN || e == EINPROGRESS)
            return gvs_comm_fail(GVS_E_CONNECT, 0,
                                 "connect %s: not accepted within %u ms "
                                 "(the server is stopped or overloaded)",
                                 path, ms);
        return gvs_comm_fail(GVS_E_CONNECT, e, "connect %s", path);
    }
    return 0;
}

/* Rings or a plain socket, as gvsd's setup says (GVS_UNIX_SETUP_TAG). */
static int unix_connect(const struct gvs_uri *u, struct gvs_conn **out)
{
    int fd, passed;
    union {
        uint64_t tag;
        struct gvs_shm_setup shm;
    } m;
    size_t got = 0;
    int r = gvs_unix_connect_fd(u->path, &fd);
    if (r < 0)
        return r;
    r = gvs_fdpass_recv_setup(fd, &m, sizeof(m), &got, &passed,
                              "connection");
    if (r == 0 && got == sizeof(m.shm))
        return gvs_shm_conn_join(fd, &m.shm, passed, out);
    if (r == 0 && (got != sizeof(m.tag) || m.tag != GVS_UNIX_SETUP_TAG)) {
        close(passed);
        r = gvs_comm_fail(GVS_E_PROTO, 0, "malformed connection setup");
    }
    if (r < 0) {
        close(fd);
        return r;
    }
    r = gvs_fd_conn_new_side(fd, passed, out);
    if (r == 0)
        gvs_unix_peer(fd, (*out)->peer, sizeof((*out)->peer));
    return r;
}

const struct gvs_transport gvs_transport_unix = {
    .scheme = "unix",
    .listen = unix_listen,
    .accept = unix_accept,
    .connect = unix_connect,
};
