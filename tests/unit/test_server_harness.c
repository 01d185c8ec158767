#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

#define MAX_ARGS 64
#define READY_TIMEOUT_MS 10000

/* Whether port can be bound on loopback now. */
static int port_bindable(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* The lowest port the kernel hands out to connections of its own
 * choosing (ip_local_port_range). */
static int ephemeral_low(void)
{
    int low = 32768, high;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f != NULL) {
        if (fscanf(f, "%d %d", &low, &high) != 2)
            low = 32768;
        fclose(f);
    }
    return low;
}

/* Below the ephemeral range: a port the kernel picked would, once
 * released, go to the next connection any test makes, possibly before
 * gvsd binds it.  Chosen at random so that tests running side by side
 * seldom pick the same one. */
int test_free_port(void)
{
    static unsigned seed;
    if (seed == 0)
        seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    int low = ephemeral_low(), base = 10000;
    if (low - base < 1000)
        base = 1024;
    for (int i = 0; i < 200 && low > base; i++) {
        int port = base + (int)(rand_r(&seed) % (unsigned)(low - base));
        if (port_bindable(port))
            return port;
    }
    return -1;
}

int test_gvsd_init(struct test_gvsd *g)
{
    g->pid = -1;
    snprintf(g->dir, sizeof(g->dir), "/tmp/gvs-srv-XXXXXX");
    if (mkdtemp(g->dir) == NULL) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(g->sock_path, sizeof(g->sock_path), "%s/gvsd.sock", g->dir);
    snprintf(g->unix_uri, sizeof(g->unix_uri), "unix://%s", g->sock_path);
    snprintf(g->tcp_uri, sizeof(g->tcp_uri), "tcp://127.0.0.1:%d",
             test_free_port());
    snprintf(g->shm_uri, sizeof(g->shm_uri), "shm://%s/gvsd-shm.sock", g->dir);
    snprintf(g->log_path, sizeof(g->log_path), "%s/gvsd.log", g->dir);
    return 0;
}

/* Forks gvsd with stderr into the log; ready_fd is passed through when
 * >= 0.  Returns the pid or -1. */
static pid_t spawn(const struct test_gvsd *g, const char *const *argv,
                   int ready_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* A failed test returns early: gvsd must not outlive it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int log = open(g->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log < 0 || dup2(log, STDERR_FILENO) < 0)
        _exit(126);
    if (ready_fd >= 0)
        fcntl(ready_fd, F_SETFD, 0);
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

static int build_argv(const struct test_gvsd *g, const char *const *extra,
                      int defaults, const char **argv, char *bin,
                      char *plugins, char *fd_text)
{
    int n = 0;
    snprintf(bin, 512, "%s/bin/gvsd", test_build_dir());
    snprintf(plugins, 512, "%s/tests/plugins", test_build_dir());
    argv[n++] = bin;
    if (defaults) {
        argv[n++] = "--plugin-dir";
        argv[n++] = plugins;
        argv[n++] = "--log-level";
        argv[n++] = "info";
        argv[n++] = "--ready-fd";
        argv[n++] = fd_text;
        if (!g->no_default_listen) {
            argv[n++] = "--listen";
            argv[n++] = g->unix_uri;
            argv[n++] = "--listen";
            argv[n++] = g->tcp_uri;
            argv[n++] = "--listen";
            argv[n++] = g->shm_uri;
        }
    }
    for (int i = 0; extra != NULL && extra[i] != NULL && n < MAX_ARGS - 1; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return n;
}

static int wait_ready(int fd)
{
    char buf[16] = "";
    size_t got = 0;
    long long deadline = test_now_ms() + READY_TIMEOUT_MS;
    while (got < 6 && test_now_ms() < deadline) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got >= 6 && memcmp(buf, "ready\n", 6) == 0 ? 0 : -1;
}

static void print_log(const struct test_gvsd *g)
{
    fprintf(stderr, "gvsd did not get ready; its log (%s):\n", g->log_path);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "cat %s >&2", g->log_path);
    if (system(cmd) != 0)
        fprintf(stderr, "(no log)\n");
}

static int start_once(struct test_gvsd *g, const char *const *extra)
{
    const char *argv[MAX_ARGS];
    char bin[512], plugins[512], fd_text[16];
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    snprintf(fd_text, sizeof(fd_text), "%d", p[1]);
    build_argv(g, extra, 1, argv, bin, plugins, fd_text);
    g->pid = spawn(g, argv, p[1]);
    close(p[1]);
    int rc = g->pid < 0 ? -1 : wait_ready(p[0]);
    close(p[0]);
    if (rc < 0 && g->pid > 0) {
        kill(g->pid, SIGKILL);
        waitpid(g->pid, NULL, 0);
        g->pid = -1;
    }
    return rc;
}

/* The default tcp listener's port was free when chosen, but another
 * program may bind it first: then gvsd is started again on another. */
int test_gvsd_start(struct test_gvsd *g, const char *const *extra)
{
    if (g->dir[0] == '\0' && test_gvsd_init(g) < 0)
        return -1;
    char lost[200];
    for (int tries = 1;; tries++) {
        if (start_once(g, extra) == 0)
            return 0;
        snprintf(lost, sizeof(lost), "cannot listen on %s", g->tcp_uri);
        if (g->no_default_listen || tries == 5 || !test_gvsd_log_has(g, lost, 0))
            break;
        fprintf(stderr, "gvsd: %s (taken meanwhile), trying another port\n",
                g->tcp_uri);
        snprintf(g->tcp_uri, sizeof(g->tcp_uri), "tcp://127.0.0.1:%d",
                 test_free_port());
    }
    print_log(g);
    return -1;
}

int test_gvsd_run_once(struct test_gvsd *g, const char *const *extra)
{
    const char *argv[MAX_ARGS];
    char bin[512], plugins[512];
    if (g->dir[0] == '\0' && test_gvsd_init(g) < 0)
        return -1;
    build_argv(g, extra, 0, argv, bin, plugins, NULL);
    pid_t pid = spawn(g, argv, -1);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

static void remove_dir(struct test_gvsd *g)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", g->dir);
    if (g->dir[0] != '\0' && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", g->dir);
    g->dir[0] = '\0';
}

int test_gvsd_stop(struct test_gvsd *g)
{
    int status = -1;
    if (g->pid > 0) {
        kill(g->pid, SIGTERM);
        long long deadline = test_now_ms() + 10000;
        pid_t r;
        while ((r = waitpid(g->pid, &status, WNOHANG)) == 0 &&
               test_now_ms() < deadline)
            usleep(10000);
        if (r != g->pid) {
            kill(g->pid, SIGKILL);
            waitpid(g->pid, NULL, 0);
            status = -1;
        }
        g->pid = -1;
    }
    remove_dir(g);
    return status;
}

int test_gvsd_log_has(const struct test_gvsd *g, const char *needle,
                      int timeout_ms)
{
    long long deadline = test_now_ms() + timeout_ms;
    static char text[1 << 20];
    do {
        FILE *f = fopen(g->log_path, "r");
        if (f != NULL) {
            size_t n = fread(text, 1, sizeof(text) - 1, f);
            fclose(f);
            text[n] = '\0';
            if (strstr(text, needle) != NULL)
                return 1;
        }
        usleep(20000);
    } while (test_now_ms() < deadline);
    fprintf(stderr, "gvsd log lacks \"%s\"; it holds:\n%s", needle, text);
    return 0;
}

int test_write_file(const struct test_gvsd *g, const char *name,
                    const char *text, char *path, size_t pathlen)
{
    snprintf(path, pathlen, "%s/%s", g->dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) == 0 ? rc : -1;
}

int test_hello(const char *uri, uint32_t version, uint16_t id,
               const char *name, uint64_t hash, struct gvs_conn **out,
               char *msg, size_t msglen)
{
    struct gvs_hello hello = {.version = version, .pid = (uint32_t)getpid(),
                              .nplugins = 1};
    struct gvs_hello_reply r;
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO, .id = 0};
    snprintf(hello.program, sizeof(hello.program), "gvs-unit-tests");
    hello.plugins[0].id = id;
    hello.plugins[0].table_hash = hash;
    snprintf(hello.plugins[0].name, sizeof(hello.plugins[0].name), "%s", name);
    *out = NULL;
    int rc = gvs_connect(uri, out);
    if (rc < 0)
        return rc;
    struct gvs_buf *b = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    rc = b == NULL ? GVS_E_NOMEM : gvs_hello_encode(&hello, b);
    if (rc == 0)
        rc = gvs_frame_send(*out, &h, b);
    if (rc == 0)
        rc = gvs_conn_set_timeout(*out, 10000);
    if (rc == 0)
        rc = gvs_frame_recv(*out, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (rc == 0)
        rc = gvs_hello_reply_decode(b, &r);
    if (rc == 0 && (!(h.flags & GVS_F_REPLY) || h.op != GVS_CTL_HELLO))
        rc = GVS_E_PROTO;
    if (rc == 0) {
        rc = r.status;
        if (msg != NULL)
            snprintf(msg, msglen, "%s", r.message);
    }
    gvs_buf_free(b);
    return rc;
}

struct gvs_conn *test_session(const char *uri)
{
    struct gvs_conn *c;
    char msg[256];
    int rc = test_hello(uri, GVS_PROTO_VERSION, ECHO_PLUGIN_ID,
                        ECHO_PLUGIN_NAME, ECHO_TABLE_HASH, &c, msg,
                        sizeof(msg));
    if (rc == 0)
        return c;
    fprintf(stderr, "session on %s: %s (%s)\n", uri, gvs_strerror(rc), msg);
    gvs_conn_close(c);
    return NULL;
}

int test_call(struct gvs_conn *c, uint16_t plugin, uint16_t op, uint64_t id,
              const void *body, size_t len, struct gvs_buf *reply)
{
    struct gvs_frame_hdr h = {.plugin = plugin, .op = op, .id = id};
    struct iovec iov = {.iov_base = (void *)body, .iov_len = len};
    int rc = gvs_frame_sendv(c, &h, &iov, 1);
    if (rc == 0)
        rc = gvs_frame_recv(c, gvs_buf_max(reply), &h, reply);
    if (rc == 0 && (h.flags != GVS_F_REPLY || h.id != id ||
                    h.plugin != plugin || h.op != op))
        rc = GVS_E_PROTO;
    return rc;
}

int test_echo(struct gvs_conn *c, uint64_t id, size_t len)
{
    uint8_t *data = malloc(len + 1);
    struct gvs_buf *reply = gvs_buf_new(len + 1);
    if (data == NULL || reply == NULL)
        return GVS_E_NOMEM;
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(i * 31 + id);
    int rc = test_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, id, data, len, reply);
    if (rc == 0 && (gvs_buf_len(reply) != len ||
                    memcmp(gvs_buf_ptr(reply), data, len) != 0))
        rc = GVS_E_PROTO;
    free(data);
    gvs_buf_free(reply);
    return rc;
}

int test_send_raw(struct gvs_conn *c, const void *p, size_t len)
{
    return gvs_conn_send(c, p, len);
}

int test_wait_closed(struct gvs_conn *c, unsigned timeout_ms)
{
    uint8_t sink[4096];
    long long deadline = test_now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - test_now_ms();
        if (left <= 0)
            return 0;
        gvs_conn_set_timeout(c, (unsigned)left);
        size_t got;
        int rc = gvs_conn_recv_some(c, sink, sizeof(sink), &got);
        if (rc == GVS_E_TIMEOUT)
            return 0;
        if (rc < 0)
            return 1;
    }
}

int test_still_serving(const struct test_gvsd *g, struct gvs_conn *other)
{
    ASSERT_EQ(test_echo(other, 1000, 100), 0);
    const char *uris[] = {g->unix_uri, g->tcp_uri, g->shm_uri};
    for (int i = 0; i < 3; i++) {
        struct gvs_conn *c = test_session(uris[i]);
        ASSERT(c != NULL);
        ASSERT_EQ(test_echo(c, 1, 10), 0);
        gvs_conn_close(c);
    }
    return 0;
}

int test_echo_op(struct gvs_conn *c, uint16_t op, uint64_t id,
                 const void *body, size_t len)
{
    struct gvs_buf *reply = gvs_buf_new(64);
    int rc = reply == NULL
                 ? GVS_E_NOMEM
                 : test_call(c, ECHO_PLUGIN_ID, op, id, body, len, reply);
    gvs_buf_free(reply);
    return rc;
}

int test_report_memory(struct gvs_conn *c, uint64_t id, uint64_t bytes)
{
    uint8_t body[8];
    for (int i = 0; i < 8; i++)
        body[i] = (uint8_t)(bytes >> (8 * i));
    return test_echo_op(c, ECHO_OP_REPORT_MEMORY, id, body, sizeof(body));
}

int test_http_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int test_read_all(int fd, char *out, size_t len, int timeout_ms)
{
    size_t got = 0;
    long long deadline = test_now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - test_now_ms();
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
            return -1;
        ssize_t n = recv(fd, out + got, len - 1 - got, 0);
        if (n <= 0) {
            out[got] = '\0';
            return (int)got;
        }
        got += (size_t)n;
        if (got == len - 1)
            return -1;
    }
}

int test_http(int port, const char *request, char *out, size_t len)
{
    int fd = test_http_connect(port);
    if (fd < 0)
        return -1;
    int rc = send(fd, request, strlen(request), MSG_NOSIGNAL) ==
                     (ssize_t)strlen(request)
                 ? test_read_all(fd, out, len, 5000)
                 : -1;
    close(fd);
    return rc;
}

int test_gvsd_start_metrics(struct test_gvsd *g, int *port, const char *conf,
                            const char *const *extra)
{
    char text[1024], path[300];
    if (test_gvsd_init(g) < 0)
        return -1;
    *port = test_free_port();
    snprintf(text, sizeof(text), "metrics_listen = tcp://127.0.0.1:%d\n%s",
             *port, conf != NULL ? conf : "");
    if (test_write_file(g, "gvs.conf", text, path, sizeof(path)) < 0)
        return -1;
    const char *args[16] = {"--config", path, "--memory-quota", "2M"};
    for (int i = 0; extra != NULL && extra[i] != NULL && i < 8; i++)
        args[4 + i] = extra[i];
    return test_gvsd_start(g, args);
}
