/* Vanished peers (issue 14, item 4): a tcp client whose network goes
 * without a FIN is let go by gvsd, and the client lets go of gvsd, within
 * the configured bounds; a client merely stopped, as in a debugger, is
 * kept.  gvsd runs in a private network namespace, its clients in
 * another, joined by a veth pair whose client end is then taken down:
 * from then on gvsd's packets vanish, and nothing comes back. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/client.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_server_harness.h"

#define SERVER_URI "tcp://10.77.0.1:7300"
/* Notifications a stopped client is sent: far more than the sockets'
 * buffers hold, so that its receive window closes. */
#define NOTES 400000u

/* gvsd's bounds: an idle peer is probed after 1 s, then every 1 s, and
 * let go after 2 unanswered probes; data unacknowledged for 1.5 s lets a
 * busy one go. */
static const char gvsd_conf[] = "tcp_keepalive_idle_s = 1\n"
                                "tcp_keepalive_interval_s = 1\n"
                                "tcp_keepalive_count = 2\n"
                                "tcp_ack_timeout_ms = 1500\n"
                                "insecure = 1\n";
/* The client library's: it breaks its connection 1 s after gvsd stops
 * acknowledging, its keepalive thread looking every 100 ms. */
static const char client_conf[] = "keepalive_ms = 200\n"
                                  "tcp_ack_timeout_ms = 1000\n"
                                  "tcp_keepalive_idle_s = 1\n"
                                  "tcp_keepalive_interval_s = 1\n"
                                  "tcp_keepalive_count = 2\n";

__attribute__((format(printf, 1, 2))) static int sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    fflush(NULL);
    int st = system(cmd);
    if (st != 0)
        fprintf(stderr, "`%s` failed (wait status %#x)\n", cmd, st);
    return st == 0 ? 0 : -1;
}

/* The parent and the client process step each other with single bytes. */
static int get_byte(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b;
    if (poll(&p, 1, timeout_ms) != 1 || read(fd, &b, 1) != 1)
        return -1;
    return b;
}

static int put_byte(int fd, char b)
{
    return write(fd, &b, 1) == 1 ? 0 : -1;
}

/* A session, once the client's end of the link is up. */
static struct gvs_conn *session_when_up(void)
{
    for (int i = 0; i < 30; i++) {
        struct gvs_conn *c = test_session(SERVER_URI);
        if (c != NULL)
            return c;
        usleep(100000);
    }
    return NULL;
}

/* Reads the notifications of NOTIFY_ME request id, then its reply. */
static int drain_notes(struct gvs_conn *c, uint64_t id)
{
    struct gvs_buf *b = gvs_buf_new(4096);
    struct gvs_frame_hdr h;
    unsigned notes = 0;
    ASSERT(b != NULL);
    ASSERT_EQ(gvs_conn_set_timeout(c, 10000), 0);
    for (;;) {
        ASSERT_EQ(gvs_frame_recv(c, 4096, &h, b), 0);
        if (h.flags != GVS_F_NOTIFY)
            break;
        notes++;
    }
    gvs_buf_free(b);
    ASSERT_EQ(h.flags, GVS_F_REPLY);
    ASSERT_U64_EQ(h.id, id);
    ASSERT_EQ(notes, NOTES);
    return 0;
}

static int send_u32(struct gvs_conn *c, uint16_t op, uint64_t id, uint32_t v)
{
    uint8_t body[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                       (uint8_t)(v >> 24)};
    struct gvs_frame_hdr h = {.plugin = ECHO_PLUGIN_ID, .op = op, .id = id};
    struct iovec iov = {body, sizeof(body)};
    return gvs_frame_sendv(c, &h, &iov, 1);
}

/* A call of the client library waiting for gvsd when the network goes. */
struct waiting_call {
    pthread_t thread;
    int rc;
    _Atomic long long done_ms; /* 0 while it waits */
};

static void *call_main(void *arg)
{
    struct waiting_call *w = arg;
    static const struct gvs_client_plugin echo = {
        ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};
    struct gvs_client *c;
    struct gvs_buf *reply = gvs_buf_new(64);
    uint8_t ms[4] = {0xc4, 0x09, 0, 0}; /* 2500 */
    struct iovec iov = {ms, sizeof(ms)};
    w->rc = gvs_client_register(&echo);
    if (w->rc == 0)
        w->rc = gvs_client_get(&c);
    if (w->rc == 0)
        w->rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_SLEEP, &iov, 1,
                                reply);
    gvs_buf_free(reply);
    atomic_store(&w->done_ms, test_now_ms());
    return NULL;
}

/* The client process, in its own namespace: in and out are its pipes
 * from and to the test. */
static int client_steps(int in, int out, const char *dir)
{
    char path[300];
    ASSERT_EQ(get_byte(in, 10000), 'm');
    ASSERT_EQ(sh("ip link set lo up && ip addr add 10.77.0.2/24 dev gvs-c "
                 "&& ip link set gvs-c up"),
              0);

    /* Stopped with replies on their way (a), and idle (i): both kept. */
    struct gvs_conn *a = session_when_up();
    struct gvs_conn *i = test_session(SERVER_URI);
    ASSERT(a != NULL && i != NULL);
    ASSERT_EQ(test_report_memory(a, 1, 1ull << 30), 0);
    ASSERT_EQ(send_u32(a, ECHO_OP_NOTIFY_ME, 2, NOTES), 0);
    ASSERT_EQ(put_byte(out, '1'), 0);
    ASSERT_EQ(get_byte(in, 30000), 'c');
    ASSERT_EQ(drain_notes(a, 2), 0);
    ASSERT_EQ(test_echo(a, 3, 100), 0);
    ASSERT_EQ(test_echo(i, 1, 100), 0);

    /* Then the network goes: idle sessions (a, i, b), one whose reply is
     * sent after (c), and the library's, waiting for a reply. */
    struct gvs_conn *b = test_session(SERVER_URI);
    struct gvs_conn *c = test_session(SERVER_URI);
    ASSERT(b != NULL && c != NULL);
    ASSERT_EQ(test_report_memory(b, 1, 2ull << 30), 0);
    snprintf(path, sizeof(path), "%s/client.conf", dir);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    ASSERT_GE(fputs(client_conf, f), 0);
    ASSERT_EQ(fclose(f), 0);
    setenv("GVS_CONFIG", path, 1);
    setenv("GVS_SERVER", SERVER_URI, 1);
    struct waiting_call w = {0};
    ASSERT_EQ(pthread_create(&w.thread, NULL, call_main, &w), 0);
    usleep(300000);
    ASSERT_EQ(atomic_load(&w.done_ms), 0);
    ASSERT_EQ(put_byte(out, '2'), 0);
    ASSERT_EQ(get_byte(in, 10000), 'd');
    ASSERT_EQ(send_u32(c, ECHO_OP_SLEEP, 1, 500), 0);
    ASSERT_EQ(sh("ip link set gvs-c down"), 0);
    long long down = test_now_ms();
    while (atomic_load(&w.done_ms) == 0 && test_now_ms() - down < 10000)
        usleep(20000);
    long long took = atomic_load(&w.done_ms) - down;
    fprintf(stderr, "client: the library's call failed %lld ms after the "
                    "link went down\n",
            took);
    ASSERT_EQ(w.rc, GVS_E_TIMEOUT);
    /* 1 s unacknowledged, seen by a look every 100 ms. */
    ASSERT_GE(took, 800);
    ASSERT_LT(took, 2500);
    pthread_join(w.thread, NULL);
    ASSERT_EQ(put_byte(out, 'L'), 0);
    /* The test kills this process: nothing of it may reach gvsd. */
    for (;;)
        pause();
}

/* Waits up to timeout_ms for `gvs status` of uri to hold needle; the
 * status text last read goes to text. */
static int status_has(const char *uri, const char *needle, int timeout_ms,
                      char *text, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/bin/gvs status --server %s --bytes 2>&1",
             test_build_dir(), uri);
    long long deadline = test_now_ms() + timeout_ms;
    do {
        fflush(NULL);
        FILE *p = popen(cmd, "r");
        if (p == NULL)
            return 0;
        size_t n = fread(text, 1, len - 1, p);
        text[n] = '\0';
        pclose(p);
        if (strstr(text, needle) != NULL)
            return 1;
        usleep(100000);
    } while (test_now_ms() < deadline);
    fprintf(stderr, "gvs status lacks \"%s\":\n%s", needle, text);
    return 0;
}

static pid_t start_client(const char *dir, int *to, int *from)
{
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC) < 0 || pipe2(up, O_CLOEXEC) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int ok = unshare(CLONE_NEWNET) == 0;
        put_byte(up[1], ok ? 'n' : 'F');
        _exit(ok ? client_steps(down[0], up[1], dir) : 1);
    }
    close(down[0]);
    close(up[1]);
    *to = down[1];
    *from = up[0];
    return pid;
}

TEST_IMPL(server_vanished_peer)
{
    static char text[65536];
    char path[300];
    if (unshare(CLONE_NEWNET) < 0) {
        fprintf(stderr,
                "server_vanished_peer: cannot make a network namespace "
                "(%s): it needs root, as CI has%s\n",
                strerror(errno),
                geteuid() == 0 ? "; this is root, so it fails" : ": skipped");
        return geteuid() == 0;
    }
    ASSERT_EQ(sh("ip link set lo up && ip link add gvs-s type veth peer name "
                 "gvs-c && ip addr add 10.77.0.1/24 dev gvs-s && ip link set "
                 "gvs-s up"),
              0);
    struct test_gvsd g = {.no_default_listen = 1};
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(test_write_file(&g, "gvs.conf", gvsd_conf, path, sizeof(path)),
              0);
    const char *const args[] = {"--config", path, "--listen", g.unix_uri,
                                "--listen", SERVER_URI, NULL};
    ASSERT_EQ(test_gvsd_start(&g, args), 0);
    int to, from;
    pid_t pid = start_client(g.dir, &to, &from);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(get_byte(from, 5000), 'n');
    ASSERT_EQ(sh("ip link set gvs-c netns %d", (int)pid), 0);
    ASSERT_EQ(put_byte(to, 'm'), 0);

    /* Stopped longer than either bound, its window closed meanwhile. */
    ASSERT_EQ(get_byte(from, 15000), '1');
    usleep(300000);
    ASSERT_EQ(kill(pid, SIGSTOP), 0);
    usleep(4000 * 1000);
    ASSERT_EQ(kill(pid, SIGCONT), 0);
    ASSERT_EQ(put_byte(to, 'c'), 0);
    ASSERT_EQ(get_byte(from, 30000), '2');
    ASSERT(status_has(g.unix_uri, "5 of 64 sessions", 2000, text,
                      sizeof(text)));
    ASSERT(strstr(text, " 1073741824 / ") != NULL);
    ASSERT(strstr(text, " 2147483648 / ") != NULL);
    ASSERT(!test_gvsd_log_has(&g, "connection_lost", 0));

    /* The network goes: every session ends, its memory with it. */
    ASSERT_EQ(put_byte(to, 'd'), 0);
    long long down = test_now_ms();
    ASSERT(status_has(g.unix_uri, "0 of 64 sessions", 10000, text,
                      sizeof(text)));
    long long took = test_now_ms() - down;
    fprintf(stderr, "gvsd let its 5 sessions go %lld ms after the link "
                    "went down\n",
            took);
    ASSERT_GE(took, 1000);
    ASSERT_LT(took, 7000);
    ASSERT(strstr(text, "\nno sessions\n") != NULL);
    ASSERT(strstr(text, "connection_lost 5") != NULL);
    /* c's reply was never acknowledged: gvsd's watch; the idle ones: the
     * kernel's keepalive. */
    ASSERT(test_gvsd_log_has(&g, "acknowledged nothing for 1500 ms "
                                 "(tcp_ack_timeout_ms): it is gone, closing",
                             0));
    ASSERT(test_gvsd_log_has(&g, "connection lost: the peer stopped "
                                 "answering",
                             0));
    ASSERT_EQ(get_byte(from, 10000), 'L');
    kill(pid, SIGKILL);
    ASSERT_EQ(waitpid(pid, NULL, 0), pid);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
