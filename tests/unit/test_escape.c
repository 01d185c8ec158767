/* gvs_escape (gvs/escape.h), and peers' strings as gvsd's log and
 * `gvs status` show them. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "gvs/escape.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_core.h"
#include "test_server_harness.h"

/* What the security review sent: a forged line and a terminal escape. */
static const char hostile[] = "x\nERR:\x1b[2J";
static const char hostile_escaped[] = "x\\x0aERR:\\x1b[2J";

TEST_IMPL(escape_basic)
{
    char out[64];
    ASSERT_EQ(gvs_escape(out, sizeof(out), NULL, 0), 0);
    ASSERT_STR_EQ(out, "");
    /* No room even for the NUL: nothing is written. */
    out[0] = 'z';
    ASSERT_EQ(gvs_escape(out, 0, "a", 1), GVS_E_INVAL);
    ASSERT_EQ(out[0], 'z');
    const char printable[] = " Hello, \"world\"! ~{|}` 0189 AZaz";
    ASSERT_EQ(gvs_escape(out, sizeof(out), printable, strlen(printable)), 0);
    ASSERT_STR_EQ(out, printable);
    ASSERT_EQ(gvs_escape(out, sizeof(out), hostile, strlen(hostile)), 0);
    ASSERT_STR_EQ(out, hostile_escaped);
    ASSERT_EQ(gvs_escape(out, sizeof(out), "a\\x0ab", 6), 0);
    ASSERT_STR_EQ(out, "a\\x5cx0ab");
    /* An embedded NUL is a byte like any other; the length decides. */
    ASSERT_EQ(gvs_escape(out, sizeof(out), "a\0b", 3), 0);
    ASSERT_STR_EQ(out, "a\\x00b");
    ASSERT_EQ(gvs_escape(out, sizeof(out), "\xc3\xa9\x7f", 3), 0);
    ASSERT_STR_EQ(out, "\\xc3\\xa9\\x7f");
    return 0;
}

TEST_IMPL(escape_every_byte)
{
    uint8_t all[256];
    char out[GVS_ESCAPED_SIZE(256)], want[GVS_ESCAPED_SIZE(256)];
    size_t wlen = 0;
    for (int b = 0; b < 256; b++) {
        char one[8], expect[8];
        all[b] = (uint8_t)b;
        if (b >= 0x20 && b <= 0x7e && b != '\\')
            snprintf(expect, sizeof(expect), "%c", b);
        else
            snprintf(expect, sizeof(expect), "\\x%02x", b);
        uint8_t in = (uint8_t)b;
        ASSERT_EQ(gvs_escape(one, sizeof(one), &in, 1), 0);
        if (strcmp(one, expect) != 0)
            TEST_FAIL_AT("byte 0x%02x: \"%s\" vs \"%s\"", b, one, expect);
        memcpy(want + wlen, expect, strlen(expect) + 1);
        wlen += strlen(expect);
    }
    /* All at once, in the buffer the header promises is enough. */
    ASSERT_EQ(gvs_escape(out, sizeof(out), all, sizeof(all)), 0);
    ASSERT_STR_EQ(out, want);
    for (size_t i = 0; out[i] != '\0'; i++)
        if (out[i] < 0x20 || out[i] > 0x7e)
            TEST_FAIL_AT("byte %zu of the output is 0x%02x", i,
                         (unsigned)(uint8_t)out[i]);
    return 0;
}

/* Checks every output size from 1 to past the exact fit for in: never a
 * byte past outlen, always terminated, whole escapes then the mark when
 * cut, the whole escaped form once it fits.  0 or 1. */
static int check_cuts(const char *in, size_t inlen)
{
    char full[256], out[256 + 16];
    size_t bounds[64], nb = 0; /* where each escape of in ends */
    size_t len = 0;
    ASSERT_EQ(gvs_escape(full, sizeof(full), in, inlen), 0);
    for (size_t i = 0; i < inlen; i++) {
        uint8_t c = (uint8_t)in[i];
        len += c >= 0x20 && c <= 0x7e && c != '\\' ? 1 : 4;
        bounds[nb++] = len;
    }
    ASSERT_EQ(strlen(full), len);
    for (size_t outlen = 1; outlen <= len + 3; outlen++) {
        memset(out, 0x55, sizeof(out));
        int rc = gvs_escape(out, outlen, in, inlen);
        for (size_t i = outlen; i < sizeof(out); i++)
            if ((uint8_t)out[i] != 0x55)
                TEST_FAIL_AT("outlen %zu: byte %zu written", outlen, i);
        if (memchr(out, '\0', outlen) == NULL)
            TEST_FAIL_AT("outlen %zu: not terminated", outlen);
        if (outlen > len) {
            /* Fits, exactly at outlen == len + 1. */
            ASSERT_EQ(rc, 0);
            ASSERT_STR_EQ(out, full);
            continue;
        }
        ASSERT_EQ(rc, GVS_E_TOOBIG);
        size_t keep = 0;
        for (size_t i = 0; i < nb; i++)
            if (bounds[i] + 3 <= outlen - 1)
                keep = bounds[i];
        size_t mark = outlen - 1 - keep < 3 ? outlen - 1 - keep : 3;
        char want[256 + 4];
        snprintf(want, sizeof(want), "%.*s%.*s", (int)keep, full, (int)mark,
                 "...");
        if (strcmp(out, want) != 0)
            TEST_FAIL_AT("outlen %zu: \"%s\" vs \"%s\"", outlen, out, want);
    }
    return 0;
}

TEST_IMPL(escape_truncation)
{
    ASSERT_EQ(check_cuts("abcdefghij", 10), 0);
    ASSERT_EQ(check_cuts(hostile, strlen(hostile)), 0);
    ASSERT_EQ(check_cuts("\x01\x02\\\x03", 4), 0);
    ASSERT_EQ(check_cuts("ab\0\xff" "cd\n", 7), 0);
    /* Input that ends in the mark: only the return value tells. */
    char out[8];
    ASSERT_EQ(gvs_escape(out, sizeof(out), "abcd...", 7), 0);
    ASSERT_STR_EQ(out, "abcd...");
    ASSERT_EQ(gvs_escape(out, sizeof(out), "abcd...x", 8), GVS_E_TOOBIG);
    ASSERT_STR_EQ(out, "abcd...");
    return 0;
}

/* gvsd's log, whole, into out; its length, -1 if unreadable. */
static long read_log(const struct test_gvsd *g, char *out, size_t len)
{
    FILE *f = fopen(g->log_path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(out, 1, len - 1, f);
    fclose(f);
    out[n] = '\0';
    return (long)n;
}

/* 0 if no line of text (n bytes, NULs included) starts with "ERR:" and
 * no byte is ESC or NUL, else 1 after printing text. */
static int no_forgery(const char *what, const char *text, long n)
{
    for (long i = 0; i < n; i++) {
        int line_start = i == 0 || text[i - 1] == '\n';
        if (text[i] == 0x1b || text[i] == '\0' ||
            (line_start && strncmp(text + i, "ERR:", 4) == 0)) {
            fprintf(stderr, "%s: forged at byte %ld of:\n%s\n", what, i,
                    text);
            return 1;
        }
    }
    return 0;
}

/* Connects and handshakes with a HELLO naming program and one plugin;
 * the reply's status (0 or the server's negative code), or a transport
 * error.  *out is the open connection. */
static int hello_as(const char *uri, const char *program, uint16_t id,
                    const char *plugin, uint64_t hash, struct gvs_conn **out)
{
    struct gvs_hello hello = {.version = GVS_PROTO_VERSION,
                              .pid = (uint32_t)getpid(),
                              .nplugins = 1};
    struct gvs_hello_reply r;
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO, .id = 0};
    snprintf(hello.program, sizeof(hello.program), "%s", program);
    hello.plugins[0].id = id;
    hello.plugins[0].table_hash = hash;
    snprintf(hello.plugins[0].name, sizeof(hello.plugins[0].name), "%s",
             plugin);
    int rc = gvs_connect(uri, out);
    if (rc < 0)
        return rc;
    struct gvs_buf *b = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    rc = b == NULL ? GVS_E_NOMEM : gvs_hello_encode(&hello, b);
    if (rc == 0)
        rc = gvs_conn_set_timeout(*out, 10000);
    if (rc == 0)
        rc = gvs_frame_send(*out, &h, b);
    if (rc == 0)
        rc = gvs_frame_recv(*out, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (rc == 0)
        rc = gvs_hello_reply_decode(b, &r);
    gvs_buf_free(b);
    return rc == 0 ? r.status : rc;
}

/* Runs `gvs status --server uri` with stdout and stderr into out; the
 * length read, -1 if it could not run. */
static long status_output(const char *uri, char *out, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/bin/gvs status --server %s 2>&1",
             test_build_dir(), uri);
    setenv("GVS_CONFIG", "/dev/null", 1);
    unsetenv("GVS_TOKEN");
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    pclose(p);
    return (long)n;
}

/* The HELLO's program and plugin names reach gvsd's log escaped: one
 * line each, no forged line, no terminal escape. */
TEST_IMPL(server_hello_escaped)
{
    struct test_gvsd g = {0};
    static char text[1 << 20];
    char line[128];
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = NULL, *refused = NULL;
    ASSERT_EQ(hello_as(g.unix_uri, hostile, ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME,
                       ECHO_TABLE_HASH, &c),
              0);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    ASSERT_EQ(hello_as(g.unix_uri, "gvs-unit-tests", 999, hostile, 0,
                       &refused),
              GVS_E_NOENT);
    snprintf(line, sizeof(line), "program %s pid", hostile_escaped);
    ASSERT(test_gvsd_log_has(&g, line, 5000));
    snprintf(line, sizeof(line), "plugin %s (id 999)", hostile_escaped);
    ASSERT(test_gvsd_log_has(&g, line, 5000));

    /* The session's line is whole: it ends where the handshake's
     * message ends. */
    long n = read_log(&g, text, sizeof(text));
    ASSERT_GT(n, 0);
    snprintf(line, sizeof(line), "program %s pid", hostile_escaped);
    const char *at = strstr(text, line);
    ASSERT(at != NULL);
    const char *eol = strchr(at, '\n');
    ASSERT(eol != NULL);
    ASSERT_GT(eol - at, 10);
    ASSERT(strncmp(eol - 10, " plugin(s)", 10) == 0);
    ASSERT_EQ(no_forgery("gvsd's log", text, n), 0);

    /* gvs status lists the session by who it is (the program name is
     * never shown), with nothing of the name in it. */
    n = status_output(g.unix_uri, text, sizeof(text));
    ASSERT_GT(n, 0);
    ASSERT(strstr(text, "1 of 64 sessions") != NULL);
    ASSERT(strstr(text, "ERR:") == NULL);
    ASSERT_EQ(no_forgery("gvs status", text, n), 0);
    gvs_conn_close(refused);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A server that answers any HELLO, then STATUS with hostile strings
 * where gvsd sends display text. */
struct fake_server {
    struct gvs_listener *l;
    int rc;
    pthread_t thread;
};

static int put_status(struct gvs_buf *b)
{
    int rc = gvs_buf_put_u32(b, 2); /* format */
    if (rc == 0)
        rc = gvs_buf_put_str(b, hostile); /* version */
    if (rc == 0)
        rc = gvs_buf_put_u32(b, GVS_PROTO_VERSION);
    if (rc == 0)
        rc = gvs_buf_put_u64(b, 1000); /* uptime */
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 8); /* max_sessions */
    if (rc == 0)
        rc = gvs_buf_put_str(b, hostile); /* devices */
    if (rc == 0)
        rc = gvs_buf_put_i32(b, 0); /* GPU list known */
    if (rc == 0)
        rc = gvs_buf_put_str(b, "");
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 1);
    if (rc == 0)
        rc = gvs_buf_put_str(b, hostile); /* GPU name */
    if (rc == 0)
        rc = gvs_buf_put_str(b, hostile); /* UUID */
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = gvs_buf_put_u64(b, 1 << 20);
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 1); /* sessions */
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 1); /* listed */
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 7);
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 1234);
    if (rc == 0)
        rc = gvs_buf_put_str(b, hostile); /* identity */
    for (int i = 0; rc == 0 && i < 6; i++)
        rc = gvs_buf_put_u64(b, 0);
    /* Counts by reason: one refusal reason, with a hostile label, and no
     * end reason. */
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 1);
    if (rc == 0)
        rc = gvs_buf_put_str(b, hostile);
    if (rc == 0)
        rc = gvs_buf_put_u64(b, 3);
    if (rc == 0)
        rc = gvs_buf_put_u32(b, 0);
    return rc;
}

static void *fake_serve(void *arg)
{
    struct fake_server *f = arg;
    struct gvs_conn *c = NULL;
    struct gvs_frame_hdr h;
    struct gvs_hello_reply r = {.version = GVS_PROTO_VERSION, .session = 7};
    struct gvs_buf *b = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    int rc = b == NULL ? GVS_E_NOMEM : gvs_accept(f->l, &c);
    if (rc == 0)
        rc = gvs_conn_set_timeout(c, 10000);
    if (rc == 0)
        rc = gvs_frame_recv(c, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (rc == 0 && h.op != GVS_CTL_HELLO)
        rc = GVS_E_PROTO;
    if (rc == 0) {
        h = (struct gvs_frame_hdr){
            .op = GVS_CTL_HELLO, .flags = GVS_F_REPLY, .id = h.id};
        gvs_buf_reset(b);
        rc = gvs_hello_reply_encode(&r, b);
    }
    if (rc == 0)
        rc = gvs_frame_send(c, &h, b);
    if (rc == 0)
        rc = gvs_frame_recv(c, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (rc == 0 && h.op != GVS_CTL_STATUS)
        rc = GVS_E_PROTO;
    if (rc == 0) {
        h = (struct gvs_frame_hdr){
            .op = GVS_CTL_STATUS, .flags = GVS_F_REPLY, .id = h.id};
        gvs_buf_reset(b);
        rc = put_status(b);
    }
    if (rc == 0)
        rc = gvs_frame_send(c, &h, b);
    /* The client's BYE, or its close. */
    if (rc == 0)
        gvs_frame_recv(c, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (c != NULL)
        gvs_conn_close(c);
    gvs_buf_free(b);
    f->rc = rc;
    return NULL;
}

/* What a server sends is shown escaped by gvs status, whoever the server
 * is: no forged line, no terminal escape. */
TEST_IMPL(cli_status_escaped)
{
    char uri[160];
    static char text[65536];
    struct fake_server f = {0};
    test_unix_uri(uri, sizeof(uri), NULL, 0, "status-escaped");
    ASSERT_EQ(gvs_listen(uri, &f.l), 0);
    ASSERT_EQ(pthread_create(&f.thread, NULL, fake_serve, &f), 0);
    long n = status_output(uri, text, sizeof(text));
    pthread_join(f.thread, NULL);
    gvs_listener_close(f.l, 0);
    ASSERT_EQ(f.rc, 0);
    ASSERT_GT(n, 0);
    if (no_forgery("gvs status", text, n) != 0)
        return 1;
    char want[128];
    snprintf(want, sizeof(want), "gvsd %s, protocol", hostile_escaped);
    ASSERT(strstr(text, want) != NULL);
    snprintf(want, sizeof(want), "devices: %s\n", hostile_escaped);
    ASSERT(strstr(text, want) != NULL);
    snprintf(want, sizeof(want), " %s\n", hostile_escaped);
    ASSERT(strstr(text, want) != NULL); /* the session's identity */
    snprintf(want, sizeof(want), "refused: %s 3\n", hostile_escaped);
    ASSERT(strstr(text, want) != NULL);
    return 0;
}
