/* gvs status and the metrics endpoint against a real gvsd serving the
 * echo plugin. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

/* One session row of `gvs status --bytes`. */
struct row {
    unsigned id, pid;
    unsigned long long calls, in, out, memory;
    char quota[32];
    char identity[160];
};

/* Runs `gvs status --server uri --bytes`, stdout and stderr into out. */
static int status_text(const char *uri, char *out, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/bin/gvs status --server %s --bytes 2>&1",
             test_build_dir(), uri);
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    if (status != 0)
        fprintf(stderr, "gvs status failed (%d):\n%s", status, out);
    return status == 0 ? 0 : -1;
}

/* The rows of a status text, at most max; returns how many. */
static int rows(const char *text, struct row *r, int max)
{
    int n = 0;
    const char *line = strstr(text, "\nSESSION ");
    while (line != NULL && n < max) {
        line = strchr(line + 1, '\n');
        if (line == NULL)
            break;
        char uptime[32];
        int used = 0;
        struct row *x = &r[n];
        if (sscanf(line + 1, "%u %u %31s %llu %llu %llu %llu / %31s %n",
                   &x->id, &x->pid, uptime, &x->calls, &x->in, &x->out,
                   &x->memory, x->quota, &used) != 8)
            break;
        const char *id = line + 1 + used;
        size_t idlen = strcspn(id, "\n");
        snprintf(x->identity, sizeof(x->identity), "%.*s", (int)idlen, id);
        n++;
    }
    return n;
}

/* The row whose identity contains needle, NULL if none. */
static const struct row *find(const struct row *r, int n, const char *needle)
{
    for (int i = 0; i < n; i++)
        if (strstr(r[i].identity, needle) != NULL)
            return &r[i];
    return NULL;
}

/* Waits up to timeout_ms for gvs status to list `want` sessions. */
static int wait_sessions(const char *uri, int want, int timeout_ms)
{
    static char text[16384];
    struct row r[8];
    long long deadline = test_now_ms() + timeout_ms;
    do {
        if (status_text(uri, text, sizeof(text)) == 0 &&
            rows(text, r, 8) == want)
            return 1;
        usleep(50000);
    } while (test_now_ms() < deadline);
    fprintf(stderr, "expected %d sessions; last status:\n%s", want, text);
    return 0;
}

TEST_IMPL(server_status_sessions)
{
    struct test_gvsd g = {0};
    static char text[16384];
    struct row r[8];
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *a = test_session(g.unix_uri);
    struct gvs_conn *b = test_session(g.tcp_uri);
    ASSERT(a != NULL && b != NULL);
    for (uint64_t i = 1; i <= 3; i++)
        ASSERT_EQ(test_echo(a, i, 100), 0);
    ASSERT_EQ(test_echo(b, 1, 10), 0);

    /* Both sessions, not the status client's own. */
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT(strstr(text, "2 of 64 sessions") != NULL);
    char proto[32];
    snprintf(proto, sizeof(proto), "protocol %u,", GVS_PROTO_VERSION);
    ASSERT(strstr(text, proto) != NULL);
    ASSERT_EQ(rows(text, r, 8), 2);
    char me[64];
    snprintf(me, sizeof(me), "pid=%d", (int)getpid());
    const struct row *ra = find(r, 2, me);
    const struct row *rb = find(r, 2, "127.0.0.1:");
    ASSERT(ra != NULL && rb != NULL);
    ASSERT(strstr(ra->identity, "uid=") != NULL);
    ASSERT_EQ(ra->id, 1);
    ASSERT_EQ(rb->id, 2);
    ASSERT_GT(ra->pid, 0);
    ASSERT_NE(ra->pid, rb->pid);
    /* Frames after the handshake: header and body each way. */
    ASSERT_EQ(ra->calls, 3);
    ASSERT_EQ(ra->in, 3 * (GVS_FRAME_HDR_LEN + 100));
    ASSERT_EQ(ra->out, 3 * (GVS_FRAME_HDR_LEN + 100));
    ASSERT_EQ(rb->calls, 1);
    ASSERT_EQ(rb->in, GVS_FRAME_HDR_LEN + 10);
    ASSERT_EQ(ra->memory, 0);
    ASSERT_STR_EQ(ra->quota, "none");

    /* Counters grow. */
    for (uint64_t i = 4; i <= 6; i++)
        ASSERT_EQ(test_echo(a, i, 1000), 0);
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT_EQ(rows(text, r, 8), 2);
    ra = find(r, 2, me);
    ASSERT(ra != NULL);
    ASSERT_EQ(ra->calls, 6);
    ASSERT_EQ(ra->in, 6 * GVS_FRAME_HDR_LEN + 3 * 100 + 3 * 1000);

    /* A tcp peer without a token is nobody's tenant: it sees no
     * session, while the local operator sees them all. */
    ASSERT_EQ(status_text(g.tcp_uri, text, sizeof(text)), 0);
    ASSERT(strstr(text, "\nno sessions\n") != NULL);

    /* A finished session disappears. */
    gvs_conn_close(b);
    ASSERT(wait_sessions(g.unix_uri, 1, 5000));
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT_EQ(rows(text, r, 8), 1);
    ASSERT(find(r, 1, me) != NULL);
    gvs_conn_close(a);
    ASSERT(wait_sessions(g.unix_uri, 0, 5000));
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT(strstr(text, "\nno sessions\n") != NULL);
    ASSERT(strstr(text, "0 of 64 sessions") != NULL);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_status_memory)
{
    struct test_gvsd g = {0};
    static char text[16384];
    struct row r[4];
    const char *const args[] = {"--memory-quota", "1G", NULL};
    ASSERT_EQ(test_gvsd_start(&g, args), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_report_memory(c, 1, 123456789), 0);
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT_EQ(rows(text, r, 4), 1);
    ASSERT_EQ(r[0].memory, 123456789);
    ASSERT_STR_EQ(r[0].quota, "1073741824");
    ASSERT_EQ(r[0].calls, 1);
    ASSERT_EQ(r[0].in, GVS_FRAME_HDR_LEN + 8);
    ASSERT_EQ(r[0].out, GVS_FRAME_HDR_LEN);

    /* The default output is for people. */
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/bin/gvs status --server %s",
             test_build_dir(), g.unix_uri);
    FILE *p = popen(cmd, "r");
    ASSERT(p != NULL);
    size_t n = fread(text, 1, sizeof(text) - 1, p);
    text[n] = '\0';
    ASSERT_EQ(pclose(p), 0);
    ASSERT(strstr(text, "117.7 MiB / 1.0 GiB") != NULL);
    /* No GPU here: the list is unknown, and said to be. */
    ASSERT(strstr(text, "GPUs: unknown") != NULL ||
           strstr(text, "\nGPU ") != NULL);

    /* A later report replaces the earlier one. */
    ASSERT_EQ(test_report_memory(c, 2, 4096), 0);
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT_EQ(rows(text, r, 4), 1);
    ASSERT_EQ(r[0].memory, 4096);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A status client is a session like any other until it asks. */
TEST_IMPL(server_status_bad_server)
{
    struct test_gvsd g = {0};
    static char text[4096];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), -1);
    ASSERT(strstr(text, "gvs status: ") != NULL);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    /* STATUS with a body is malformed: that session ends, gvsd goes on. */
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    struct gvs_buf *reply = gvs_buf_new(1 << 20);
    ASSERT(reply != NULL);
    ASSERT_NE(test_call(c, 0, GVS_CTL_STATUS, 1, "x", 1, reply), 0);
    gvs_conn_close(c);
    c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_call(c, 0, GVS_CTL_STATUS, 1, NULL, 0, reply), 0);
    uint32_t format = 0;
    ASSERT_EQ(gvs_buf_get_u32(reply, &format), 0);
    ASSERT_EQ(format, 2);
    /* The asking session is hidden, and still served. */
    ASSERT_EQ(test_echo(c, 2, 10), 0);
    ASSERT(wait_sessions(g.unix_uri, 0, 2000));
    gvs_buf_free(reply);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* Against a gvsd that asks for a token, gvs status proves the one of
 * GVS_TOKEN like any client, and is refused without it. */
TEST_IMPL(server_status_token)
{
    struct test_gvsd g = {0};
    static char text[4096];
    char path[300];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(test_write_file(&g, "gvs.conf",
                              "token = status-test-secret-0123 name=ops\n",
                              path, sizeof(path)),
              0);
    const char *const args[] = {"--config", path, NULL};
    ASSERT_EQ(test_gvsd_start(&g, args), 0);
    /* Not the default config of the gvs run below. */
    setenv("GVS_CONFIG", "/dev/null", 1);
    unsetenv("GVS_TOKEN");
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), -1);
    ASSERT(strstr(text, "refused") != NULL);
    setenv("GVS_TOKEN", "status-test-secret-0123", 1);
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT(strstr(text, "0 of 64 sessions") != NULL);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* Metrics ------------------------------------------------------------ */

TEST_IMPL(server_metrics)
{
    struct test_gvsd g = {0};
    static char text[65536];
    char line[256];
    int port;
    /* The per-session series are asked for (docs/config.md). */
    const char *const args[] = {"--metrics-sessions", NULL};
    ASSERT_EQ(test_gvsd_start_metrics(&g, &port, NULL, args), 0);
    ASSERT_GT(test_http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                        text, sizeof(text)),
              0);
    ASSERT(strncmp(text, "HTTP/1.1 200 OK\r\n", 17) == 0);
    ASSERT(strstr(text, "\ngvs_sessions 0\n") != NULL);
    ASSERT(strstr(text, "\ngvs_sessions_max 64\n") != NULL);
    ASSERT(strstr(text, "\ngvs_build_info{version=\"") != NULL);
    ASSERT(strstr(text, "# TYPE gvs_session_calls_total counter\n") != NULL);

    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 50), 0);
    ASSERT_EQ(test_echo(c, 2, 50), 0);
    ASSERT_EQ(test_report_memory(c, 3, 777), 0);
    ASSERT_GT(test_http(port, "GET /metrics HTTP/1.0\r\n\r\n", text,
                        sizeof(text)),
              0);
    ASSERT(strncmp(text, "HTTP/1.1 200 OK\r\n", 17) == 0);
    /* Content-Length is the body's. */
    const char *cl = strstr(text, "Content-Length: ");
    const char *bodyp = strstr(text, "\r\n\r\n");
    ASSERT(cl != NULL && bodyp != NULL);
    ASSERT_EQ(strtoul(cl + 16, NULL, 10), strlen(bodyp + 4));
    ASSERT(strstr(text, "\ngvs_sessions 1\n") != NULL);
    char labels[128];
    snprintf(labels, sizeof(labels), "{session=\"1\",identity=\"uid=%u",
             (unsigned)getuid());
    const char *expect[][2] = {
        {"gvs_session_memory_bytes", "777"},
        {"gvs_session_memory_quota_bytes", "2097152"},
        {"gvs_session_calls_total", "3"},
        {"gvs_session_bytes_in_total", "192"},  /* 2 x (28 + 50) + 28 + 8 */
        {"gvs_session_bytes_out_total", "184"}, /* 2 x (28 + 50) + 28 */
    };
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        snprintf(line, sizeof(line), "\n%s%s", expect[i][0], labels);
        const char *at = strstr(text, line);
        ASSERT(at != NULL);
        const char *value = strstr(at, "\"} ");
        ASSERT(value != NULL);
        snprintf(line, sizeof(line), "\"} %s\n", expect[i][1]);
        if (strncmp(value, line, strlen(line)) != 0)
            TEST_FAIL_AT("%s: want %s in\n%s", expect[i][0], expect[i][1],
                         text);
    }
    snprintf(line, sizeof(line), "\ngvs_session_uptime_seconds%s", labels);
    ASSERT(strstr(text, line) != NULL);

    /* Anything but GET /metrics. */
    ASSERT_GT(test_http(port, "GET / HTTP/1.1\r\n\r\n", text, sizeof(text)), 0);
    ASSERT(strncmp(text, "HTTP/1.1 404 ", 13) == 0);
    ASSERT_GT(test_http(port, "POST /metrics HTTP/1.1\r\n\r\n", text,
                        sizeof(text)),
              0);
    ASSERT(strncmp(text, "HTTP/1.1 405 ", 13) == 0);
    ASSERT_GT(test_http(port, "\x01\x02garbage\n\n", text, sizeof(text)), 0);
    ASSERT(strncmp(text, "HTTP/1.1 400 ", 13) == 0);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* Slow, stuck and oversized HTTP clients never hold up gvsd: sessions
 * start and other metrics requests are answered meanwhile, and the
 * stuck ones are dropped after their deadline. */
TEST_IMPL(server_metrics_slow_client)
{
    struct test_gvsd g = {0};
    static char text[65536];
    int port, stuck[6];
    ASSERT_EQ(test_gvsd_start_metrics(&g, &port, NULL, NULL), 0);
    /* More half-sent requests than gvsd serves at once. */
    for (int i = 0; i < 6; i++) {
        stuck[i] = test_http_connect(port);
        ASSERT(stuck[i] >= 0);
        ASSERT_EQ(send(stuck[i], "GET /met", 8, MSG_NOSIGNAL), 8);
    }
    long long t0 = test_now_ms();
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    ASSERT_LT(test_now_ms() - t0, 1000);

    /* An oversized head is answered as malformed, not waited on. */
    char big[4096];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
    int fd = -1;
    long long deadline = test_now_ms() + 5000;
    /* The stuck ones hold every place until their deadline passes. */
    int got = -1;
    while (got <= 0 && test_now_ms() < deadline) {
        fd = test_http_connect(port);
        ASSERT(fd >= 0);
        send(fd, big, strlen(big), MSG_NOSIGNAL);
        got = test_read_all(fd, text, sizeof(text), 1000);
        close(fd);
    }
    ASSERT_GT(got, 0);
    if (strncmp(text, "HTTP/1.1 400 ", 13) != 0)
        TEST_FAIL_AT("want a 400, got %d bytes:\n%s", got, text);
    for (int i = 0; i < 6; i++) {
        /* Closed by now: the deadline is 2 s after accept. */
        ASSERT(test_read_all(stuck[i], text, sizeof(text), 3000) >= 0);
        close(stuck[i]);
    }
    ASSERT_GT(test_http(port, "GET /metrics HTTP/1.1\r\n\r\n", text,
                        sizeof(text)),
              0);
    ASSERT(strstr(text, "\ngvs_sessions 1\n") != NULL);
    ASSERT_EQ(test_echo(c, 2, 10), 0);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A metrics_listen gvsd cannot bind stops it from starting. */
TEST_IMPL(server_metrics_bad_listen)
{
    struct test_gvsd g = {0};
    char path[300];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    int busy = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    ASSERT(busy >= 0);
    ASSERT_EQ(bind(busy, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ASSERT_EQ(listen(busy, 1), 0);
    ASSERT_EQ(getsockname(busy, (struct sockaddr *)&sa, &len), 0);
    char conf[128];
    snprintf(conf, sizeof(conf), "metrics_listen = tcp://127.0.0.1:%u\n",
             (unsigned)ntohs(sa.sin_port));
    ASSERT_EQ(test_write_file(&g, "gvs.conf", conf, path, sizeof(path)), 0);
    const char *const args[] = {"--config", path, NULL};
    ASSERT_NE(test_gvsd_start(&g, args), 0);
    ASSERT(test_gvsd_log_has(&g, "cannot serve metrics", 1000));
    close(busy);
    test_gvsd_stop(&g);
    return 0;
}

/* Each close is logged with its particulars and counted by reason, in the
 * metrics and in `gvs status`. */
TEST_IMPL(server_close_reasons)
{
    struct test_gvsd g = {0};
    static char text[65536];
    int port;
    ASSERT_EQ(test_gvsd_start_metrics(&g, &port, NULL, NULL), 0);
    /* A frame longer than max_frame. */
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    struct gvs_frame_hdr h = {.plugin = ECHO_PLUGIN_ID, .op = ECHO_OP_ECHO,
                              .id = 1, .len = 0x7fffffffu};
    gvs_frame_hdr_encode(&h, hdr);
    ASSERT_EQ(test_send_raw(c, hdr, sizeof(hdr)), 0);
    ASSERT(test_wait_closed(c, 5000));
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "bad frame: length exceeds the maximum: "
                                 "length 2147483647 exceeds the maximum",
                             5000));
    ASSERT(test_gvsd_log_has(&g, "call(s): frame_too_big", 5000));
    /* A header cut short by the end of the stream. */
    c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_send_raw(c, hdr, 10), 0);
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "stream ended 10 bytes into a 28-byte "
                                 "header",
                             5000));
    /* An op the plugin does not have. */
    c = test_session(g.tcp_uri);
    ASSERT(c != NULL);
    h = (struct gvs_frame_hdr){.plugin = ECHO_PLUGIN_ID, .op = 999, .id = 1};
    ASSERT_EQ(gvs_frame_send(c, &h, NULL), 0);
    ASSERT(test_wait_closed(c, 5000));
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "call(s): unknown_op", 5000));
    /* A HELLO whose request id is not 0 is refused. */
    struct gvs_hello hello = {.version = GVS_PROTO_VERSION, .nplugins = 0};
    struct gvs_buf *b = gvs_buf_new(4096);
    ASSERT(b != NULL);
    ASSERT_EQ(gvs_hello_encode(&hello, b), 0);
    ASSERT_EQ(gvs_connect(g.unix_uri, &c), 0);
    h = (struct gvs_frame_hdr){.op = GVS_CTL_HELLO, .id = 5};
    ASSERT_EQ(gvs_frame_send(c, &h, b), 0);
    gvs_buf_free(b);
    ASSERT(test_wait_closed(c, 5000));
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "a HELLO has request id 0, not 5", 5000));

    ASSERT(test_gvsd_log_has(&g, "session 3: ended", 5000));
    ASSERT_GT(test_http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                        text, sizeof(text)),
              0);
    ASSERT(strstr(text, "# TYPE gvs_sessions_ended_total counter\n") != NULL);
    ASSERT(strstr(text, "\ngvs_sessions_ended_total{reason=\"frame_too_big\"} "
                        "1\n") != NULL);
    ASSERT(strstr(text, "\ngvs_sessions_ended_total{reason=\"bad_frame\"} "
                        "1\n") != NULL);
    ASSERT(strstr(text, "\ngvs_sessions_ended_total{reason=\"unknown_op\"} "
                        "1\n") != NULL);
    ASSERT(strstr(text, "\ngvs_handshakes_refused_total{reason=\"bad_hello\"} "
                        "1\n") != NULL);
    ASSERT(strstr(text, "\ngvs_handshakes_refused_total{reason=\"timeout\"} "
                        "0\n") != NULL);
    ASSERT_EQ(status_text(g.unix_uri, text, sizeof(text)), 0);
    ASSERT(strstr(text, "\nrefused: bad_hello 1\n") != NULL);
    ASSERT(strstr(text, "\nsessions ended: bad_frame 1, frame_too_big 1, "
                        "unknown_op 1\n") != NULL);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
