#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_core.h"

#define BIG_LEN ((size_t)32 << 20)


static int is_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFD);
    return fl >= 0 && (fl & FD_CLOEXEC) != 0;
}

static void on_tick(int sig)
{
    (void)sig;
}

/* The peer process: receives one big frame, checks it, answers with a
 * different pattern.  A signal every millisecond, without SA_RESTART,
 * cuts its sends and receives short (partial writes, EINTR), and a small
 * send buffer makes each write take many rounds.  Returns the exit
 * status. */
static int echo_peer(const char *uri)
{
    struct sigaction sa = {.sa_handler = on_tick};
    struct itimerval it = {{0, 1000}, {0, 1000}};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) < 0 ||
        setitimer(ITIMER_REAL, &it, NULL) < 0)
        return 1;
    struct gvs_conn *c;
    struct gvs_buf *body = gvs_buf_new(2 * BIG_LEN);
    uint8_t *want = malloc(BIG_LEN);
    struct gvs_frame_hdr h;
    if (body == NULL || want == NULL || gvs_connect(uri, &c) != 0)
        return 2;
    int small = 64 << 10;
    setsockopt(gvs_conn_fd(c), SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    if (gvs_frame_recv(c, 2 * BIG_LEN, &h, body) != 0)
        return 3;
    test_fill(want, BIG_LEN, 1);
    if (h.len != BIG_LEN || gvs_buf_len(body) != BIG_LEN ||
        memcmp(gvs_buf_ptr(body), want, BIG_LEN) != 0)
        return 4;
    test_fill(want, BIG_LEN, 2);
    struct iovec iov[2] = {{want, 1000}, {want + 1000, BIG_LEN - 1000}};
    h.flags = GVS_F_REPLY;
    if (gvs_frame_sendv(c, &h, iov, 2) != 0)
        return 5;
    gvs_conn_close(c);
    gvs_buf_free(body);
    free(want);
    return 0;
}

static int big_transfer(const char *uri)
{
    struct gvs_listener *l;
    struct gvs_conn *c;
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT(is_cloexec(gvs_listener_fd(l)));
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        _exit(echo_peer(gvs_listener_uri(l)));
    ASSERT_EQ(gvs_accept(l, &c), 0);
    ASSERT(is_cloexec(gvs_conn_fd(c)));

    uint8_t *data = malloc(BIG_LEN);
    struct gvs_buf *body = gvs_buf_new(2 * BIG_LEN);
    ASSERT(data != NULL && body != NULL);
    struct gvs_frame_hdr h;
    ASSERT_EQ(test_big_round_trip(c, data, body, BIG_LEN, &h), 0);
    ASSERT_EQ(gvs_buf_len(body), BIG_LEN);

    ASSERT_EQ(test_reaped_ok(pid), 0);
    ASSERT_EQ(gvs_frame_recv(c, 16, &h, body), GVS_E_CLOSED);
    gvs_conn_close(c);
    gvs_listener_close(l, 0);
    gvs_buf_free(body);
    free(data);
    return 0;
}

TEST_IMPL(comm_unix_transfer)
{
    char uri[160];
    test_unix_uri(uri, sizeof(uri), NULL, 0, "big");
    return big_transfer(uri);
}

TEST_IMPL(comm_tcp_transfer)
{
    return big_transfer("tcp://127.0.0.1:0");
}

TEST_IMPL(comm_registry)
{
    ASSERT(gvs_transport_find("unix") != NULL);
    ASSERT(gvs_transport_find("tcp") != NULL);
    ASSERT(gvs_transport_find("shm") != NULL);
    ASSERT(gvs_transport_find("vsock") == NULL);
    struct gvs_listener *l = (struct gvs_listener *)1;
    struct gvs_conn *c = (struct gvs_conn *)1;
    ASSERT_EQ(gvs_listen("bogus", &l), GVS_E_URI);
    ASSERT(l == NULL);
    ASSERT_EQ(gvs_connect("tcp://x", &c), GVS_E_URI);
    ASSERT(c == NULL);
    return 0;
}

TEST_IMPL(comm_peer_and_uri)
{
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    char uri[160], want[160];
    test_unix_uri(uri, sizeof(uri), NULL, 0, "peer");
    ASSERT_EQ(test_conn_pair(uri, &l, &a, &b), 0);
    ASSERT_STR_EQ(gvs_listener_uri(l), uri);
    snprintf(want, sizeof(want), "uid=%u gid=%u pid=%ld", (unsigned)getuid(),
             (unsigned)getgid(), (long)getpid());
    ASSERT_STR_EQ(gvs_conn_peer(a), want);
    ASSERT_STR_EQ(gvs_conn_peer(b), want);
    ASSERT_EQ(gvs_conn_caps(a) & GVS_CONN_CAP_PEER_AWAY, 0);
    ASSERT_EQ(gvs_conn_caps(b) & GVS_CONN_CAP_PEER_AWAY, 0);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);

    ASSERT_EQ(test_conn_pair("tcp://127.0.0.1:0", &l, &a, &b), 0);
    const char *bound = gvs_listener_uri(l);
    ASSERT(strncmp(bound, "tcp://127.0.0.1:", 16) == 0);
    ASSERT(strcmp(bound, "tcp://127.0.0.1:0") != 0);
    snprintf(want, sizeof(want), "127.0.0.1:%s", bound + 16);
    ASSERT_STR_EQ(gvs_conn_peer(a), want);
    ASSERT(strncmp(gvs_conn_peer(b), "127.0.0.1:", 10) == 0);
    ASSERT_EQ(gvs_conn_caps(a) & GVS_CONN_CAP_PEER_AWAY, 0);
    ASSERT_EQ(gvs_conn_caps(b) & GVS_CONN_CAP_PEER_AWAY, 0);
    ASSERT(is_cloexec(gvs_conn_fd(a)));
    ASSERT_EQ(gvs_conn_send(a, "ping", 4), 0);
    char got[4];
    size_t n;
    ASSERT_EQ(gvs_conn_recv_some(b, got, 4, &n), 0);
    ASSERT(n >= 1 && n <= 4);
    ASSERT_EQ(gvs_conn_recv(b, got + n, 4 - n), 0);
    ASSERT_MEM_EQ(got, "ping", 4);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    gvs_conn_close(NULL);
    gvs_listener_close(NULL, 0);
    return 0;
}

static struct sockaddr_storage inet(const char *text)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, text, &v4->sin_addr) == 1)
        v4->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1)
        v6->sin6_family = AF_INET6;
    return ss;
}

static int same_host(const char *local, const char *peer)
{
    struct sockaddr_storage l = inet(local), p = inet(peer);
    return gvs_addr_same_host((struct sockaddr *)&l, (struct sockaddr *)&p);
}

/* Which tcp peers are on this host (GVS_CONN_CAP_PEER_AWAY when not):
 * loopback ones and the local end's own address; a guest's host through
 * QEMU's user-mode network (10.0.2.15 to 10.0.2.2) or another machine
 * is away.  A connection to this host's own non-loopback address, where
 * it has one, is not away. */
TEST_IMPL(comm_same_host)
{
    ASSERT_EQ(same_host("127.0.0.1", "127.0.0.1"), 1);
    ASSERT_EQ(same_host("127.0.0.1", "127.0.0.2"), 1);
    ASSERT_EQ(same_host("10.0.0.5", "127.0.0.1"), 1);
    ASSERT_EQ(same_host("192.168.1.5", "192.168.1.5"), 1);
    ASSERT_EQ(same_host("::1", "::1"), 1);
    ASSERT_EQ(same_host("::ffff:127.0.0.1", "::ffff:127.0.0.1"), 1);
    ASSERT_EQ(same_host("fd00::1", "fd00::1"), 1);
    ASSERT_EQ(same_host("10.0.2.15", "10.0.2.2"), 0);
    ASSERT_EQ(same_host("192.168.1.5", "192.168.1.6"), 0);
    ASSERT_EQ(same_host("fd00::1", "fd00::2"), 0);
    ASSERT_EQ(same_host("::ffff:10.0.2.15", "::ffff:10.0.2.2"), 0);
    struct sockaddr_storage un = {.ss_family = AF_UNIX};
    ASSERT_EQ(gvs_addr_same_host((struct sockaddr *)&un,
                                 (struct sockaddr *)&un),
              1);

    struct ifaddrs *ifs, *own = NULL;
    ASSERT_EQ(getifaddrs(&ifs), 0);
    for (struct ifaddrs *i = ifs; i != NULL && own == NULL; i = i->ifa_next)
        if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
            !(i->ifa_flags & IFF_LOOPBACK) && (i->ifa_flags & IFF_UP))
            own = i;
    if (own != NULL) {
        char host[INET_ADDRSTRLEN], uri[64];
        struct gvs_listener *l;
        struct gvs_conn *a, *b;
        inet_ntop(AF_INET, &((struct sockaddr_in *)own->ifa_addr)->sin_addr,
                  host, sizeof(host));
        snprintf(uri, sizeof(uri), "tcp://%s:0", host);
        ASSERT_EQ(test_conn_pair(uri, &l, &a, &b), 0);
        ASSERT_EQ(gvs_conn_caps(a) & GVS_CONN_CAP_PEER_AWAY, 0);
        ASSERT_EQ(gvs_conn_caps(b) & GVS_CONN_CAP_PEER_AWAY, 0);
        gvs_conn_close(a);
        gvs_conn_close(b);
        gvs_listener_close(l, 0);
    }
    freeifaddrs(ifs);
    return 0;
}

TEST_IMPL(comm_recv_timeout)
{
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    char buf[8];
    ASSERT_EQ(test_conn_pair("tcp://127.0.0.1:0", &l, &a, &b), 0);
    ASSERT_EQ(gvs_conn_set_timeout(b, 150), 0);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_recv(b, buf, sizeof(buf)), GVS_E_TIMEOUT);
    long long dt = test_now_ms() - t0;
    ASSERT_GE(dt, 100);
    ASSERT_LT(dt, 5000);
    /* Timeout 0 restores blocking reads: data still arrives. */
    ASSERT_EQ(gvs_conn_set_timeout(b, 0), 0);
    ASSERT_EQ(gvs_conn_send(a, "12345678", 8), 0);
    ASSERT_EQ(gvs_conn_recv(b, buf, 8), 0);
    gvs_conn_close(a);
    ASSERT_EQ(gvs_conn_recv(b, buf, 1), GVS_E_CLOSED);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    return 0;
}

/* A tcp listener with room for a single pending connection, never
 * accepting; its URI goes to uri. */
static int black_hole(char *uri, size_t urilen)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(fd, 0) < 0 || getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        return -1;
    snprintf(uri, urilen, "tcp://127.0.0.1:%u", ntohs(a.sin_port));
    return fd;
}

TEST_IMPL(comm_connect_failures)
{
    struct gvs_conn *c;
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_connect("unix:///tmp/gvs-test-no-such.sock", &c),
              GVS_E_CONNECT);
    ASSERT(c == NULL);
    ASSERT_LT(test_now_ms() - t0, 1000);
    /* Each failure says which step failed and what the OS said. */
    ASSERT_STR_EQ(gvs_comm_why(), "connect /tmp/gvs-test-no-such.sock: No "
                                  "such file or directory");

    /* A closed tcp port. */
    struct gvs_listener *l;
    char uri[64], why[128];
    ASSERT_EQ(gvs_listen("tcp://127.0.0.1:0", &l), 0);
    ASSERT_STR_EQ(gvs_comm_why(), "");
    snprintf(uri, sizeof(uri), "%s", gvs_listener_uri(l));
    gvs_listener_close(l, 0);
    ASSERT_EQ(gvs_connect(uri, &c), GVS_E_CONNECT);
    snprintf(why, sizeof(why), "connect %s: Connection refused",
             uri + strlen("tcp://"));
    ASSERT_STR_EQ(gvs_comm_why(), why);

    ASSERT_EQ(gvs_connect("tcp://no-such-host.invalid:1", &c), GVS_E_CONNECT);
    ASSERT(strncmp(gvs_comm_why(), "resolve no-such-host.invalid: ", 30) == 0);

    /* A black-holed address never hangs past the connect timeout: a
     * listener whose accept queue is full drops further SYNs. */
    int fd = black_hole(uri, sizeof(uri));
    ASSERT_GE(fd, 0);
    struct gvs_conn *first;
    ASSERT_EQ(gvs_connect(uri, &first), 0);
    setenv("GVS_CONNECT_TIMEOUT_MS", "300", 1);
    t0 = test_now_ms();
    ASSERT_EQ(gvs_connect(uri, &c), GVS_E_CONNECT);
    long long dt = test_now_ms() - t0;
    ASSERT_GE(dt, 250);
    ASSERT_LT(dt, 3000);
    ASSERT(strstr(gvs_comm_why(), ": no answer within the connect timeout "
                                  "(GVS_CONNECT_TIMEOUT_MS)") != NULL);
    unsetenv("GVS_CONNECT_TIMEOUT_MS");
    gvs_conn_close(first);
    close(fd);
    return 0;
}

static int bind_and_abandon(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        return -1;
    close(fd);
    return 0;
}

/* 0 when a connection to the socket at path is taken (into the
 * backlog: nobody need accept it). */
static int accepts(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int r = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0
                ? 0
                : -1;
    if (fd >= 0)
        close(fd);
    return r;
}

TEST_IMPL(comm_unix_socket_file)
{
    char uri[160], path[108];
    struct stat st;
    struct gvs_listener *l, *l2;
    test_unix_uri(uri, sizeof(uri), path, sizeof(path), "stale");
    unlink(path);

    /* A stale socket file from a crashed server is replaced. */
    ASSERT_EQ(bind_and_abandon(path), 0);
    ASSERT_EQ(lstat(path, &st), 0);
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT_EQ(accepts(path), 0);

    /* A live server's socket is not stolen. */
    char why[200];
    ASSERT_EQ(gvs_listen(uri, &l2), GVS_E_INUSE);
    ASSERT(l2 == NULL);
    snprintf(why, sizeof(why), "a connection to %s was accepted", path);
    ASSERT_STR_EQ(gvs_comm_why(), why);
    ASSERT_EQ(accepts(path), 0);

    /* keep_path leaves the file (a forked worker's copy); close unlinks. */
    ASSERT_EQ(gvs_listen("unix:///tmp", &l2), GVS_E_IO);
    ASSERT_STR_EQ(gvs_comm_why(), "/tmp exists and is not a socket");
    gvs_listener_close(l, 0);
    ASSERT_EQ(lstat(path, &st), -1);
    ASSERT_EQ(errno, ENOENT);
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    gvs_listener_close(l, 1);
    ASSERT_EQ(lstat(path, &st), 0);
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    gvs_listener_close(l, 0);
    ASSERT_EQ(lstat(path, &st), -1);

    /* Something that is not a socket is never removed. */
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
    ASSERT_EQ(gvs_listen(uri, &l), GVS_E_IO);
    ASSERT_EQ(lstat(path, &st), 0);
    ASSERT(S_ISREG(st.st_mode));
    unlink(path);
    return 0;
}

/* Every listen failure names the step and the OS's error; a port taken
 * is told apart, as a live unix socket is. */
TEST_IMPL(comm_listen_errors)
{
    struct gvs_listener *l, *l2;
    char uri[64], why[160];
    ASSERT_EQ(gvs_listen("tcp://127.0.0.1:0", &l), 0);
    snprintf(uri, sizeof(uri), "%s", gvs_listener_uri(l));
    ASSERT_EQ(gvs_listen(uri, &l2), GVS_E_INUSE);
    ASSERT(l2 == NULL);
    snprintf(why, sizeof(why), "bind %s: Address already in use",
             uri + strlen("tcp://"));
    ASSERT_STR_EQ(gvs_comm_why(), why);
    gvs_listener_close(l, 0);

    ASSERT_EQ(gvs_listen("unix:///tmp/gvs-test-no-such-dir/s.sock", &l),
              GVS_E_IO);
    ASSERT_STR_EQ(gvs_comm_why(), "bind /tmp/gvs-test-no-such-dir/s.sock: "
                                  "No such file or directory");
    ASSERT_EQ(gvs_listen("tcp://no-such-host.invalid:1", &l), GVS_E_IO);
    ASSERT(strncmp(gvs_comm_why(), "resolve no-such-host.invalid: ", 30) == 0);
    return 0;
}

static int sockopt(int fd, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof(v);
    return getsockopt(fd, level, name, &v, &len) == 0 ? v : -1;
}

/* Keepalive reaches the sockets of tcp and tls connections, both sides;
 * other transports are left alone. */
TEST_IMPL(comm_tcp_keepalive)
{
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    const struct gvs_tcp_keepalive k = {7, 3, 4};
    ASSERT_EQ(test_conn_pair("tcp://127.0.0.1:0", &l, &c, &s), 0);
    struct gvs_conn *both[] = {c, s};
    for (int i = 0; i < 2; i++) {
        int fd = gvs_conn_fd(both[i]);
        ASSERT_EQ(sockopt(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
        ASSERT_EQ(gvs_conn_set_keepalive(both[i], &k), 0);
        ASSERT_EQ(sockopt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
        ASSERT_EQ(sockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7);
        ASSERT_EQ(sockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL), 3);
        ASSERT_EQ(sockopt(fd, IPPROTO_TCP, TCP_KEEPCNT), 4);
        /* TCP_USER_TIMEOUT would end a peer stopped with a full window:
         * it stays the kernel's default. */
        ASSERT_EQ(sockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 0);
    }
    const struct gvs_tcp_keepalive off = {0, 1, 1};
    ASSERT_EQ(gvs_conn_set_keepalive(c, &off), 0);
    ASSERT_EQ(sockopt(gvs_conn_fd(c), SOL_SOCKET, SO_KEEPALIVE), 0);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);

    char uri[160];
    test_unix_uri(uri, sizeof(uri), NULL, 0, "keepalive");
    ASSERT_EQ(test_conn_pair(uri, &l, &c, &s), 0);
    ASSERT_EQ(gvs_conn_set_keepalive(c, &k), 0);
    ASSERT_EQ(sockopt(gvs_conn_fd(c), SOL_SOCKET, SO_KEEPALIVE), 0);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}

/* A peer that acknowledges but reads nothing (a program stopped in a
 * debugger while its reply was on the way: its receive window closes) is
 * answering; so is an idle one.  (A peer that answers nothing at all
 * needs packets dropped: server_vanished_peer.) */
TEST_IMPL(comm_unanswered_window)
{
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    struct gvs_conn_watch w = {0};
    ASSERT_EQ(test_conn_pair("tcp://127.0.0.1:0", &l, &c, &s), 0);
    ASSERT_EQ(gvs_conn_unanswered(s, 100, &w), 0);
    static uint8_t chunk[1 << 16];
    size_t sent = 0;
    for (;;) {
        ssize_t n = send(gvs_conn_fd(s), chunk, sizeof(chunk),
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            ASSERT(errno == EAGAIN || errno == EWOULDBLOCK);
            break;
        }
        sent += (size_t)n;
    }
    ASSERT_GT(sent, 0);
    long long end = test_now_ms() + 1500;
    while (test_now_ms() < end) {
        ASSERT_EQ(gvs_conn_unanswered(s, 100, &w), 0);
        usleep(20000);
    }
    /* What was held back still arrives. */
    uint8_t *got = malloc(sent);
    ASSERT(got != NULL);
    ASSERT_EQ(gvs_conn_recv(c, got, sent), 0);
    free(got);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);

    char uri[160];
    test_unix_uri(uri, sizeof(uri), NULL, 0, "unanswered");
    ASSERT_EQ(test_conn_pair(uri, &l, &c, &s), 0);
    ASSERT_EQ(gvs_conn_unanswered(s, 1, &w), 0);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}

TEST_IMPL(comm_no_sigpipe)
{
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    char uri[160];
    static uint8_t chunk[1 << 16];
    signal(SIGPIPE, SIG_DFL);
    test_unix_uri(uri, sizeof(uri), NULL, 0, "pipe");
    ASSERT_EQ(test_conn_pair(uri, &l, &a, &b), 0);
    gvs_conn_close(b);
    int r = 0;
    for (int i = 0; i < 100 && r == 0; i++)
        r = gvs_conn_send(a, chunk, sizeof(chunk));
    ASSERT_EQ(r, GVS_E_CLOSED);
    gvs_conn_close(a);
    gvs_listener_close(l, 0);

    ASSERT_EQ(test_conn_pair("tcp://127.0.0.1:0", &l, &a, &b), 0);
    gvs_conn_close(b);
    r = 0;
    for (int i = 0; i < 1000 && r == 0; i++)
        r = gvs_conn_send(a, chunk, sizeof(chunk));
    ASSERT_EQ(r, GVS_E_CLOSED);
    gvs_conn_close(a);
    gvs_listener_close(l, 0);
    return 0;
}

static void on_alarm(int sig)
{
    (void)sig;
}

TEST_IMPL(comm_accept_interrupted)
{
    struct gvs_listener *l;
    struct gvs_conn *c = (struct gvs_conn *)1;
    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
    ASSERT_EQ(gvs_listen("tcp://127.0.0.1:0", &l), 0);
    struct itimerval it = {.it_value = {.tv_usec = 100000}};
    ASSERT_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
    ASSERT_EQ(gvs_accept(l, &c), GVS_E_TIMEOUT);
    ASSERT(c == NULL);
    gvs_listener_close(l, 0);
    return 0;
}

struct big_send {
    struct gvs_conn *c;
    const uint8_t *data;
    size_t len;
};

static void *send_big(void *arg)
{
    struct big_send *b = arg;
    struct gvs_frame_hdr h = {.plugin = 1, .op = 3, .id = 9};
    struct iovec iov = {(void *)b->data, b->len};
    return (void *)(intptr_t)gvs_frame_sendv(b->c, &h, &iov, 1);
}

/* Socket transports read ahead: small frames that came in one write are
 * served from what one recv brought, readable() counts those bytes, and
 * a large body still arrives whole behind them. */
TEST_IMPL(comm_read_ahead)
{
    char uri[160];
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    test_unix_uri(uri, sizeof(uri), NULL, 0, "readahead");
    ASSERT_EQ(test_conn_pair(uri, &l, &c, &s), 0);
    uint8_t small[3][40];
    struct iovec iov[6];
    uint8_t hdrs[3][GVS_FRAME_HDR_LEN];
    for (int i = 0; i < 3; i++) {
        memset(small[i], 'a' + i, sizeof(small[i]));
        struct gvs_frame_hdr h = {.plugin = 1, .op = 2, .id = (uint64_t)i + 1,
                                  .len = sizeof(small[i])};
        gvs_frame_hdr_encode(&h, hdrs[i]);
        iov[2 * i] = (struct iovec){hdrs[i], sizeof(hdrs[i])};
        iov[2 * i + 1] = (struct iovec){small[i], sizeof(small[i])};
    }
    ASSERT_EQ(gvs_conn_sendv(c, iov, 6), 0);
    struct gvs_buf *body = gvs_buf_new(2u << 20);
    ASSERT(body != NULL);
    struct gvs_frame_hdr h;
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(gvs_frame_recv(s, 2u << 20, &h, body), 0);
        ASSERT_U64_EQ(h.id, (uint64_t)i + 1);
        ASSERT_EQ(gvs_buf_len(body), sizeof(small[i]));
        ASSERT(memcmp(gvs_buf_ptr(body), small[i], sizeof(small[i])) == 0);
        /* The frames behind are read already: the socket is empty, yet
         * the connection is readable. */
        ASSERT_EQ(gvs_conn_spin_readable(s, 1000000), i < 2);
    }
    size_t big = (size_t)1 << 20;
    uint8_t *data = malloc(big);
    ASSERT(data != NULL);
    for (size_t i = 0; i < big; i++)
        data[i] = (uint8_t)(i * 7);
    /* From another thread: the socket holds less than the frame. */
    struct big_send b = {c, data, big};
    pthread_t t;
    void *sent;
    ASSERT_EQ(pthread_create(&t, NULL, send_big, &b), 0);
    ASSERT_EQ(gvs_frame_recv(s, 2u << 20, &h, body), 0);
    ASSERT_EQ(pthread_join(t, &sent), 0);
    ASSERT_EQ((intptr_t)sent, 0);
    ASSERT_U64_EQ(h.id, 9);
    ASSERT_EQ(gvs_buf_len(body), big);
    ASSERT(memcmp(gvs_buf_ptr(body), data, big) == 0);
    free(data);
    gvs_buf_free(body);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}
