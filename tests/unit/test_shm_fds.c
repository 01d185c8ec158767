/* Descriptors passed beside the frames of an shm:// or unix://
 * connection (gvs_conn_send_fd / gvs_conn_recv_fd), unix://'s setup that
 * brings its descriptor channel, and what tcp says about them. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../core/comm_impl.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_core.h"

/* A connected pair over scheme ("shm" or "unix") at a fresh path. */
static int fd_pair(const char *scheme, const char *tag, struct gvs_listener **l,
                   struct gvs_conn **client, struct gvs_conn **server)
{
    char unix_uri[160], uri[160];
    test_unix_uri(unix_uri, sizeof(unix_uri), NULL, 0, tag);
    snprintf(uri, sizeof(uri), "%s://%s", scheme, unix_uri + strlen("unix://"));
    return test_conn_pair(uri, l, client, server);
}

static int shm_pair(const char *tag, struct gvs_listener **l,
                    struct gvs_conn **client, struct gvs_conn **server)
{
    return fd_pair("shm", tag, l, client, server);
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static int memfd_with(const char *text)
{
    int fd = memfd_create("test", MFD_CLOEXEC);
    if (fd >= 0 && write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends len bytes at p with nfds copies of fd, as a hostile peer
 * would. */
static int send_bytes(int sock, const void *p, size_t len, int fd, int nfds)
{
    struct iovec iov = {(void *)p, len};
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        int fds[2] = {fd, fd};
        msg.msg_control = u.buf;
        msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
    }
    return sendmsg(sock, &msg, 0) == (ssize_t)len ? 0 : -1;
}

/* tag_len bytes of the tag (at most 8). */
static int send_tag(int sock, uint64_t tag, int fd, int nfds, size_t tag_len)
{
    return send_bytes(sock, &tag, tag_len, fd, nfds);
}

static int send_raw(int sock, int fd, int nfds, size_t tag_len)
{
    return send_tag(sock, 7, fd, nfds, tag_len);
}

static void *send_late(void *arg)
{
    struct gvs_frame_hdr h = {.plugin = 1, .op = 2, .id = 3};
    /* Longer than a sleep slice of the receiver, which then checks the
     * socket, where a descriptor still waits: not a hang-up. */
    usleep(250 * 1000);
    return (void *)(intptr_t)gvs_frame_send(arg, &h, NULL);
}

/* Three memfds arrive in order with their tags, each a descriptor of
 * the same file; the frames sent after them still flow, even across the
 * receiver's sleep slices with descriptors left unread on the socket.
 * On unix the client passes them before it read anything: its setup is
 * taken then. */
static int fd_pass(const char *scheme, unsigned caps)
{
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    ASSERT_EQ(fd_pair(scheme, "fds", &l, &c, &s), 0);
    ASSERT_EQ(gvs_conn_caps(c), caps);
    ASSERT_EQ(gvs_conn_caps(s), caps);
    const char *texts[3] = {"first", "second", "third"};
    for (int i = 0; i < 3; i++) {
        int fd = memfd_with(texts[i]);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(gvs_conn_send_fd(c, fd, 100 + (uint64_t)i), 0);
        close(fd);
    }
    int unread = memfd_with("unread");
    ASSERT_EQ(gvs_conn_send_fd(c, unread, 9), 0);
    close(unread);
    for (int i = 0; i < 3; i++) {
        int fd;
        uint64_t tag;
        char got[16] = "";
        ASSERT_EQ(gvs_conn_recv_fd(s, 1000, &fd, &tag), 0);
        ASSERT_U64_EQ(tag, 100 + (uint64_t)i);
        ASSERT_EQ(pread(fd, got, sizeof(got) - 1, 0),
                  (ssize_t)strlen(texts[i]));
        ASSERT_STR_EQ(got, texts[i]);
        ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);
    }
    struct gvs_frame_hdr h;
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT(body != NULL);
    pthread_t t;
    void *sent;
    ASSERT_EQ(pthread_create(&t, NULL, send_late, c), 0);
    ASSERT_EQ(gvs_frame_recv(s, 64, &h, body), 0);
    ASSERT_U64_EQ(h.id, 3);
    ASSERT_EQ(pthread_join(t, &sent), 0);
    ASSERT_EQ((intptr_t)sent, 0);
    gvs_buf_free(body);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}

TEST_IMPL(shm_fd_pass)
{
    return fd_pass("shm", GVS_CONN_CAP_FDS | GVS_CONN_CAP_CHEAP_WRITES);
}

/* unix:// carries its frames through shm://'s rings, unless gvsd's
 * $GVS_UNIX_RINGS is 0 (read when it accepts). */
TEST_IMPL(unix_fd_pass)
{
    return fd_pass("unix", GVS_CONN_CAP_FDS | GVS_CONN_CAP_CHEAP_WRITES);
}

TEST_IMPL(unix_plain_fd_pass)
{
    setenv("GVS_UNIX_RINGS", "0", 1);
    int rc = fd_pass("unix", GVS_CONN_CAP_FDS);
    unsetenv("GVS_UNIX_RINGS");
    return rc;
}

static int fd_timeout(const char *scheme)
{
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    ASSERT_EQ(fd_pair(scheme, "fdtimeout", &l, &c, &s), 0);
    int fd;
    uint64_t tag;
    long long t0 = gvs_now_ns();
    ASSERT_EQ(gvs_conn_recv_fd(s, 200, &fd, &tag), GVS_E_TIMEOUT);
    long long ms = (gvs_now_ns() - t0) / 1000000;
    ASSERT_GE(ms, 150);
    ASSERT_LT(ms, 2000);
    ASSERT_EQ(fd, -1);
    /* A peer that has gone is an end, not a wait. */
    gvs_conn_close(c);
    ASSERT_EQ(gvs_conn_recv_fd(s, 2000, &fd, &tag), GVS_E_CLOSED);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}

TEST_IMPL(shm_fd_timeout)
{
    return fd_timeout("shm");
}

TEST_IMPL(unix_fd_timeout)
{
    setenv("GVS_UNIX_RINGS", "0", 1);
    int rc = fd_timeout("unix");
    unsetenv("GVS_UNIX_RINGS");
    return rc == 0 ? fd_timeout("unix") : rc;
}

/* Messages that are not one descriptor with its tag are refused, and
 * every descriptor that came with them is closed. */
TEST_IMPL(shm_fd_hostile)
{
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    ASSERT_EQ(shm_pair("fdhostile", &l, &c, &s), 0);
    int fd = memfd_with("x");
    ASSERT_GE(fd, 0);
    int before = count_fds();
    int got;
    uint64_t tag;
    int sock = gvs_conn_fd(c);
    ASSERT_EQ(send_raw(sock, fd, 2, 8), 0);
    ASSERT_EQ(gvs_conn_recv_fd(s, 1000, &got, &tag), GVS_E_PROTO);
    ASSERT_EQ(got, -1);
    ASSERT_EQ(send_raw(sock, fd, 0, 8), 0);
    ASSERT_EQ(gvs_conn_recv_fd(s, 1000, &got, &tag), GVS_E_PROTO);
    /* A tag cut short, then nothing more: a timeout, the descriptor
     * closed. */
    ASSERT_EQ(send_raw(sock, fd, 1, 3), 0);
    ASSERT_EQ(gvs_conn_recv_fd(s, 200, &got, &tag), GVS_E_TIMEOUT);
    ASSERT_EQ(got, -1);
    ASSERT_EQ(count_fds(), before);
    close(fd);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}

/* tcp passes no descriptors, and batch writes pay. */
TEST_IMPL(tcp_fd_unsupported)
{
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    ASSERT_EQ(test_conn_pair("tcp://127.0.0.1:0", &l, &c, &s), 0);
    ASSERT_EQ(gvs_conn_caps(c), 0);
    int fd, got;
    uint64_t tag;
    fd = memfd_with("x");
    ASSERT_EQ(gvs_conn_send_fd(c, fd, 1), GVS_E_NOTSUP);
    ASSERT_EQ(gvs_conn_recv_fd(s, 10, &got, &tag), GVS_E_NOTSUP);
    ASSERT_EQ(got, -1);
    close(fd);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}

/* A unix server (hostile, or not gvsd) that a thread plays: it accepts
 * one connection, sends its first message as told, and hangs up or keeps
 * the connection until the test is done. */
struct fake_setup {
    int lfd, sock;
    uint64_t first;
    size_t len;
    int nfds, hang_up;
};

static void *fake_setup_serve(void *arg)
{
    struct fake_setup *f = arg;
    f->sock = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (f->sock < 0)
        return NULL;
    uint8_t first[16] = {0};
    memcpy(first, &f->first, sizeof(f->first));
    int fd = memfd_with("x");
    if (f->nfds >= 0 && fd >= 0)
        send_bytes(f->sock, first, f->len, fd, f->nfds);
    if (fd >= 0)
        close(fd);
    if (f->hang_up) {
        close(f->sock);
        f->sock = -1;
    }
    return NULL;
}

/* A first message that is neither setup with one descriptor: the
 * connect fails with GVS_E_PROTO, every descriptor that came closed; a
 * server that says nothing times the connect out, and one that hangs up
 * fails it. */
static int setup_case(const char *name, uint64_t first, size_t len, int nfds,
                      int hang_up, int want)
{
    char uri[160], path[108];
    test_unix_uri(uri, sizeof(uri), path, sizeof(path), name);
    unlink(path);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    struct fake_setup f = {.first = first, .len = len, .nfds = nfds,
                           .hang_up = hang_up, .sock = -1};
    f.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT(f.lfd >= 0);
    ASSERT_EQ(bind(f.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ASSERT_EQ(listen(f.lfd, 4), 0);
    int before = count_fds();
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, fake_setup_serve, &f), 0);
    struct gvs_conn *c = NULL;
    setenv("GVS_CONNECT_TIMEOUT_MS", "200", 1);
    long long t0 = gvs_now_ns();
    int rc = gvs_connect(uri, &c);
    long long ms = (gvs_now_ns() - t0) / 1000000;
    unsetenv("GVS_CONNECT_TIMEOUT_MS");
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_EQ(rc, want);
    ASSERT(c == NULL);
    ASSERT_LT(ms, 2000);
    if (f.sock >= 0)
        close(f.sock);
    ASSERT_EQ(count_fds(), before);
    close(f.lfd);
    unlink(path);
    return 0;
}

TEST_IMPL(unix_setup_hostile)
{
    const uint64_t tag = GVS_UNIX_SETUP_TAG;
    ASSERT_EQ(setup_case("setupwrong", 0x0000000255535647ULL, 8, 1, 0,
                         GVS_E_PROTO), 0);
    ASSERT_EQ(setup_case("setupnofd", tag, 8, 0, 0, GVS_E_PROTO), 0);
    ASSERT_EQ(setup_case("setuptwo", tag, 8, 2, 0, GVS_E_PROTO), 0);
    ASSERT_EQ(setup_case("setupshort", tag, 3, 1, 0, GVS_E_PROTO), 0);
    /* Sixteen bytes are a ring setup: these are not one. */
    ASSERT_EQ(setup_case("setupnoring", tag, 16, 1, 0, GVS_E_PROTO), 0);
    ASSERT_EQ(setup_case("setupsilent", 0, 8, -1, 0, GVS_E_CONNECT), 0);
    ASSERT_EQ(setup_case("setupgone", 0, 8, -1, 1, GVS_E_CONNECT), 0);
    return 0;
}
