#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/spin.h"

static void format_addr(const struct sockaddr *sa, socklen_t len, char *out,
                        size_t outlen)
{
    /* Numeric forms only, so these bound the text and the peer buffer. */
    char host[INET6_ADDRSTRLEN + 16], port[8];
    if (getnameinfo(sa, len, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(out, outlen, "tcp peer");
    else if (sa->sa_family == AF_INET6)
        snprintf(out, outlen, "[%s]:%s", host, port);
    else
        snprintf(out, outlen, "%s:%s", host, port);
}

static int loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >>
                24) == 127;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) ||
           (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int gvs_addr_same_host(const struct sockaddr *local,
                       const struct sockaddr *peer)
{
    if (peer->sa_family != local->sa_family ||
        (peer->sa_family != AF_INET && peer->sa_family != AF_INET6))
        return 1;
    if (loopback(peer))
        return 1;
    if (peer->sa_family == AF_INET)
        return ((const struct sockaddr_in *)local)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)peer)->sin_addr.s_addr;
    return memcmp(&((const struct sockaddr_in6 *)local)->sin6_addr,
                  &((const struct sockaddr_in6 *)peer)->sin6_addr,
                  sizeof(struct in6_addr)) == 0;
}

void gvs_tcp_peer(struct gvs_conn *c)
{
    struct sockaddr_storage ss, own;
    socklen_t len = sizeof(ss), own_len = sizeof(own);
    if (getpeername(c->fd, (struct sockaddr *)&ss, &len) != 0) {
        snprintf(c->peer, sizeof(c->peer), "tcp peer");
        return;
    }
    format_addr((struct sockaddr *)&ss, len, c->peer, sizeof(c->peer));
    if (getsockname(c->fd, (struct sockaddr *)&own, &own_len) == 0 &&
        !gvs_addr_same_host((struct sockaddr *)&own, (struct sockaddr *)&ss))
        c->caps |= GVS_CONN_CAP_PEER_AWAY;
}

/* Requests go out as soon as they are written: they are small and the
 * client waits for each reply. */
static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* 0, or the getaddrinfo error, recorded for gvs_comm_why. */
static int resolve(const struct gvs_uri *u, int passive, struct addrinfo **res)
{
    char port[8];
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
        .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
    };
    snprintf(port, sizeof(port), "%u", u->port);
    int g = getaddrinfo(u->host, port, &hints, res);
    if (g != 0)
        gvs_comm_fail(g, g == EAI_SYSTEM ? errno : 0, "resolve %s%s%s",
                      u->host, g == EAI_SYSTEM ? "" : ": ",
                      g == EAI_SYSTEM ? "" : gai_strerror(g));
    return g;
}

static void tcp_listener_close(struct gvs_listener *l, int keep_path)
{
    (void)keep_path;
    if (l->fd >= 0)
        close(l->fd);
}

/* A listening socket on ai, or a negative GVS_E_* code with the reason
 * recorded: GVS_E_INUSE when another socket has the address. */
static int listen_on(const struct addrinfo *ai)
{
    char addr[GVS_PEER_MAX];
    format_addr(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr));
    int one = 1;
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
    if (fd < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "socket for %s", addr);
    const char *step = "set SO_REUSEADDR on";
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0) {
        step = "bind";
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            step = "listen on";
            if (listen(fd, SOMAXCONN) == 0)
                return fd;
        }
    }
    int e = errno;
    close(fd);
    return gvs_comm_fail(e == EADDRINUSE ? GVS_E_INUSE : GVS_E_IO, e, "%s %s",
                         step, addr);
}

int gvs_tcp_listen(const struct gvs_uri *u, const struct gvs_transport *t,
                   struct gvs_listener **out)
{
    struct addrinfo *res;
    if (resolve(u, 1, &res) != 0)
        return GVS_E_IO;
    int fd = GVS_E_IO;
    for (const struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
        fd = listen_on(ai);
    freeaddrinfo(res);
    if (fd < 0)
        return fd;
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
        int e = errno;
        close(fd);
        return gvs_comm_fail(GVS_E_IO, e, "getsockname");
    }
    struct gvs_listener *l = gvs_listener_alloc(t);
    if (l == NULL) {
        close(fd);
        return GVS_E_NOMEM;
    }
    /* Port 0 asks the kernel to choose: report the port it chose. */
    struct gvs_uri bound = *u;
    bound.port = ss.ss_family == AF_INET6
                     ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                     : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    gvs_uri_format(&bound, l->uri, sizeof(l->uri));
    l->fd = fd;
    l->close = tcp_listener_close;
    *out = l;
    return 0;
}

static int tcp_listen(const struct gvs_uri *u, struct gvs_listener **out)
{
    return gvs_tcp_listen(u, &gvs_transport_tcp, out);
}

int gvs_tcp_accept_fd(struct gvs_listener *l, int *fd)
{
    int r = gvs_fd_accept(l->fd, fd);
    if (r == 0)
        set_nodelay(*fd);
    return r;
}

static int tcp_accept(struct gvs_listener *l, struct gvs_conn **out)
{
    int fd;
    int r = gvs_tcp_accept_fd(l, &fd);
    if (r == 0)
        r = gvs_fd_conn_new(fd, out);
    if (r == 0)
        gvs_tcp_peer(*out);
    return r;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Non-blocking connect bounded by the deadline, so an address that drops
 * packets cannot hang the client.  Returns a blocking socket, or -1 with
 * the reason recorded. */
static int connect_one(const struct addrinfo *ai, long long deadline)
{
    char addr[GVS_PEER_MAX];
    format_addr(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
    if (fd < 0)
        return gvs_comm_fail(-1, errno, "socket for %s", addr);
    int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
    int err = errno;
    if (r < 0 && (err == EINPROGRESS || err == EINTR)) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        long long left;
        err = ETIMEDOUT;
        while ((left = deadline - now_ms()) > 0) {
            int n = poll(&pfd, 1, (int)left);
            if (n > 0 || (n < 0 && errno != EINTR))
                break;
        }
        socklen_t len = sizeof(err);
        if ((pfd.revents & (POLLOUT | POLLERR | POLLHUP)) != 0 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
            r = 0;
    }
    int fl = fcntl(fd, F_GETFL);
    if (r == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) {
        r = -1;
        err = errno;
    }
    if (r < 0) {
        close(fd);
        if (err == ETIMEDOUT)
            return gvs_comm_fail(-1, 0,
                                 "connect %s: no answer within the connect "
                                 "timeout (GVS_CONNECT_TIMEOUT_MS)",
                                 addr);
        return gvs_comm_fail(-1, err, "connect %s", addr);
    }
    return fd;
}

int gvs_tcp_connect_fd(const struct gvs_uri *u, long long deadline, int *fd)
{
    struct addrinfo *res;
    *fd = -1;
    if (resolve(u, 0, &res) != 0)
        return GVS_E_CONNECT;
    for (const struct addrinfo *ai = res; ai != NULL && *fd < 0;
         ai = ai->ai_next)
        *fd = connect_one(ai, deadline);
    freeaddrinfo(res);
    if (*fd < 0)
        return GVS_E_CONNECT;
    set_nodelay(*fd);
    return 0;
}

static int tcp_connect(const struct gvs_uri *u, struct gvs_conn **out)
{
    int fd;
    int r = gvs_tcp_connect_fd(u, now_ms() + gvs_connect_timeout_ms(),
                               &fd);
    if (r == 0)
        r = gvs_fd_conn_new(fd, out);
    if (r == 0)
        gvs_tcp_peer(*out);
    return r;
}

/* Liveness (docs/config.md, "Vanished peers"). -------------------- */

int gvs_conn_set_keepalive(struct gvs_conn *c,
                           const struct gvs_tcp_keepalive *k)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    if (c->fd < 0 || getsockname(c->fd, (struct sockaddr *)&sa, &len) < 0 ||
        (sa.ss_family != AF_INET && sa.ss_family != AF_INET6))
        return 0;
    int on = k->idle_s != 0;
    if (setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) < 0)
        return GVS_E_IO;
    const int opts[] = {TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT};
    const int values[] = {(int)k->idle_s, (int)k->interval_s, (int)k->count};
    for (size_t i = 0; on && i < sizeof(opts) / sizeof(opts[0]); i++)
        if (setsockopt(c->fd, IPPROTO_TCP, opts[i], &values[i],
                       sizeof(values[i])) < 0)
            return GVS_E_IO;
    return 0;
}

/* Asked of the kernel's TCP state (TCP_INFO; a unix socket has none):
 * a peer acknowledges what it receives and answers each window or
 * keepalive probe before the next is sent, so data in flight or two
 * probes unanswered, with the peer silent all along, mean it is gone. */
int gvs_conn_unanswered(const struct gvs_conn *c, unsigned ms,
                        struct gvs_conn_watch *w)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (ms == 0 || c->fd < 0 ||
        getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
        len < sizeof(ti))
        return 0;
    if (ti.tcpi_unacked == 0 && ti.tcpi_probes < 2) {
        w->since_ns = 0;
        return 0;
    }
    long long now = gvs_now_ns();
    if (w->since_ns == 0)
        w->since_ns = now;
    long long waited = (now - w->since_ns) / 1000000;
    long long silent = ti.tcpi_last_ack_recv;
    return (waited < silent ? waited : silent) >= (long long)ms;
}

const struct gvs_transport gvs_transport_tcp = {
    .scheme = "tcp",
    .listen = tcp_listen,
    .accept = tcp_accept,
    .connect = tcp_connect,
};
