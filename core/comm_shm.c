/*
 * shm:///path, and unix:///path unless gvsd's $GVS_UNIX_RINGS is 0
 * (comm_unix.c): the frame stream of a client on gvsd's host goes through
 * two shared-memory rings (shm_ring.h) instead of a socket.  The unix
 * socket at the path carries the setup (the region's memfd, passed by
 * gvsd with SCM_RIGHTS), then only the descriptors the client passes
 * (gvs_conn_send_fd: memory it shares with gvsd), and stays open so that
 * each side learns of the other's death from it.
 *
 * Waiting (shm_conn.c): a side sleeps on the futex of the peer's
 * counter, and is woken only when it said it sleeps, so the fast path
 * makes no system call.  A peer that dies without closing (SIGKILL) is
 * noticed by the connection's watcher (shm_watch.h), a thread asleep on
 * the socket that the first slice's look starts in each process: it
 * wakes the sleepers at once, so that they sleep up to 10 s between
 * looks of their own, and an idle session costs no wake-up.
 * An orderly close sets the closer's flag in the region and wakes every
 * sleeper, so it is noticed at once (the closer's shutdown of the socket
 * wakes the watchers of both sides too, for a sleeper that the flag
 * reached between its check and its sleep).
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
#include "gvs/farmap.h"
#include "gvs/mem.h"
#include "gvs/spin.h"
#include "shm_conn.h"
#include "shm_ring.h"
#include "shm_watch.h"

/* A connection: the rings, and the watcher of its socket.  c->priv
 * points at s, the first member. */
struct shm_sock {
    struct shm_conn s;
    struct shm_watch watch;
};

/* Passed descriptors may wait on the socket: only a hang-up or an
 * error says the peer has gone or shut it down. */
static int hung_up(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 &&
           (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

static int check_socket(struct gvs_conn *c, struct shm_conn *s)
{
    if (hung_up(c->fd)) {
        atomic_store(&s->peer_gone, 1);
        return 0;
    }
    return gvs_shm_watch_ensure(&((struct shm_sock *)s)->watch);
}

static int futex_sleep(struct shm_conn *s, struct gvs_shm_ring *r,
                       long long timeout_ns)
{
    (void)s;
    return gvs_shm_ring_sleep(r, timeout_ns);
}

static const struct shm_conn_waits shm_waits = {
    .sleep = futex_sleep,
    .check_peer = check_socket,
};

static void shm_shutdown(struct gvs_conn *c)
{
    gvs_shmconn_end(c->priv);
    shutdown(c->fd, SHUT_RDWR);
}

static void shm_close(struct gvs_conn *c, int copy)
{
    struct shm_sock *x = c->priv;
    if (!copy)
        shm_shutdown(c);
    gvs_shm_watch_end(&x->watch);
    munmap(x->s.base, x->s.len);
    close(c->fd);
    gvs_free(x);
}


/* One message per descriptor: the tag as payload, the descriptor as
 * SCM_RIGHTS. */
static int shm_send_fd(struct gvs_conn *c, int fd, uint64_t tag)
{
    if (gvs_shmconn_ended(c->priv))
        return GVS_E_CLOSED;
    return gvs_fdpass_send_tagged(c->fd, fd, tag);
}




static int shm_recv_fd(struct gvs_conn *c, unsigned timeout_ms, int *fd,
                       uint64_t *tag)
{
    return gvs_fdpass_recv_tagged(c->fd, timeout_ms, fd, tag);
}

static void shm_leaving(struct gvs_conn *c)
{
    struct shm_conn *s = c->priv;
    atomic_store(&s->ctl->leaving[s->side], 1);
}

/* The flag is read after the hang-up is seen: a program sets it before
 * its exit closes the socket. */
static int shm_vanished(struct gvs_conn *c)
{
    struct shm_conn *s = c->priv;
    return hung_up(c->fd) && !atomic_load(&s->ctl->leaving[!s->side]);
}

static const struct gvs_conn_ops shm_ops = {
    .sendv = gvs_shmconn_sendv,
    .recv_some = gvs_shmconn_recv_some,
    .set_timeout = gvs_shmconn_set_timeout,
    .readable = gvs_shmconn_readable,
    .wait_readable = gvs_shmconn_wait_readable,
    .shutdown = shm_shutdown,
    .leaving = shm_leaving,
    .vanished = shm_vanished,
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
    struct shm_sock *x = gvs_calloc(1, sizeof(*x));
    if (c == NULL || x == NULL) {
        gvs_free(c);
        gvs_free(x);
        munmap(base, gvs_shm_region_size(ring_size));
        close(sock);
        return GVS_E_NOMEM;
    }
    gvs_shmconn_init(&x->s, base, gvs_shm_region_size(ring_size), base,
                     ring_size, side, &shm_waits);
    gvs_shm_watch_init(&x->watch, sock, &x->s);
    c->fd = sock;
    c->priv = &x->s;
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
    int r = gvs_fdpass_send(sock, &m, sizeof(m), mfd, MSG_DONTWAIT);
    return r > 0 ? 0 : r == 0 ? GVS_E_TIMEOUT : GVS_E_IO;
}

int gvs_shm_conn_serve(int sock, struct gvs_conn **out)
{
    int mfd;
    uint8_t *base;
    uint32_t ring_size = GVS_SHM_RING_DEFAULT;
    int r = make_region(ring_size, &mfd, &base);
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

static int shm_accept(struct gvs_listener *l, struct gvs_conn **out)
{
    int sock;
    int r = gvs_fd_accept(l->fd, &sock);
    return r < 0 ? r : gvs_shm_conn_serve(sock, out);
}

/* Client side. ------------------------------------------------------ */


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
    void *p = gvs_mmap_far(len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (p == MAP_FAILED)
        return GVS_E_IO;
    *base = p;
    return 0;
}

int gvs_shm_conn_join(int sock, const struct gvs_shm_setup *m, int mfd,
                      struct gvs_conn **out)
{
    uint8_t *base = NULL;
    int r = map_region(m, mfd, &base);
    close(mfd);
    if (r < 0) {
        close(sock);
        return r;
    }
    return conn_new(sock, base, m->ring_size, GVS_SHM_C2S, out);
}

static int shm_connect(const struct gvs_uri *u, struct gvs_conn **out)
{
    int sock, mfd;
    struct gvs_shm_setup m;
    int r = gvs_unix_connect_fd(u->path, &sock);
    if (r < 0)
        return r;
    r = gvs_fdpass_recv_setup(sock, &m, sizeof(m), NULL, &mfd,
                              "shared memory");
    if (r < 0) {
        close(sock);
        return r;
    }
    return gvs_shm_conn_join(sock, &m, mfd, out);
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
