/*
 * Clients that hold their handshake open (docs/security.md, "Limits"):
 * the handshake timeout bounds the whole exchange however slowly its
 * bytes come, and connections still in their handshake are counted apart
 * from the sessions, overall and per peer, so they cannot lock the
 * tenants out.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"
#include "test_tls.h"

#define SLOW_TIMEOUT_MS 2000
#define SLOW_MAX_SESSIONS 4
/* One byte every TRICKLE_MS: each arrives well within the timeout, the
 * whole HELLO never does. */
#define TRICKLE_MS 400

/* A client sending a real HELLO one byte at a time until gvsd closes
 * the connection. */
struct trickler {
    struct gvs_conn *c;
    uint8_t frame[512];
    size_t len;
    long long start_ms;
    long long closed_ms; /* when the end of the stream was seen; -1 never */
    pthread_t thread;
};

static int hello_frame(uint8_t *out, size_t max, size_t *len)
{
    struct gvs_hello hello = {.version = GVS_PROTO_VERSION,
                              .pid = (uint32_t)getpid(),
                              .nplugins = 1};
    snprintf(hello.program, sizeof(hello.program), "trickler");
    hello.plugins[0].id = ECHO_PLUGIN_ID;
    hello.plugins[0].table_hash = ECHO_TABLE_HASH;
    snprintf(hello.plugins[0].name, sizeof(hello.plugins[0].name), "%s",
             ECHO_PLUGIN_NAME);
    struct gvs_buf *b = gvs_buf_new(max - GVS_FRAME_HDR_LEN);
    if (b == NULL || gvs_hello_encode(&hello, b) < 0) {
        gvs_buf_free(b);
        return -1;
    }
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO,
                              .len = (uint32_t)gvs_buf_len(b)};
    gvs_frame_hdr_encode(&h, out);
    memcpy(out + GVS_FRAME_HDR_LEN, gvs_buf_ptr(b), gvs_buf_len(b));
    *len = GVS_FRAME_HDR_LEN + gvs_buf_len(b);
    gvs_buf_free(b);
    return 0;
}

/* Between bytes it watches for the close: the stream's end (or a reset)
 * on the descriptor. */
static int closed_within(struct trickler *t, int ms)
{
    struct pollfd p = {.fd = gvs_conn_fd(t->c), .events = POLLIN};
    int n = poll(&p, 1, ms);
    if (n <= 0)
        return 0;
    uint8_t byte;
    size_t got;
    int rc = gvs_conn_set_timeout(t->c, 50);
    if (rc == 0)
        rc = gvs_conn_recv_some(t->c, &byte, 1, &got);
    return rc == GVS_E_CLOSED || rc == GVS_E_IO || rc == GVS_E_TLS;
}

static void *trickle_main(void *arg)
{
    struct trickler *t = arg;
    for (size_t i = 0; i < t->len; i++) {
        if (gvs_conn_send(t->c, &t->frame[i], 1) < 0 ||
            closed_within(t, TRICKLE_MS)) {
            t->closed_ms = test_now_ms();
            return NULL;
        }
    }
    return NULL;
}

static int trickle_start(struct trickler *t, const char *uri)
{
    t->closed_ms = -1;
    if (hello_frame(t->frame, sizeof(t->frame), &t->len) < 0 ||
        gvs_connect(uri, &t->c) < 0)
        return -1;
    t->start_ms = test_now_ms();
    return pthread_create(&t->thread, NULL, trickle_main, t) == 0 ? 0 : -1;
}

/* max_sessions tricklers; meanwhile a well-behaved client is served;
 * then every trickler is closed within the timeout and half a second. */
static int slow_hellos(const char *which)
{
    struct test_gvsd g = {0};
    struct test_pki p;
    char conf[1024], path[300], tls_uri[64] = "";
    int tls = strcmp(which, "tls") == 0;
    ASSERT_EQ(test_gvsd_init(&g), 0);
    int n = snprintf(conf, sizeof(conf),
                     "handshake_timeout_ms = %d\nmax_sessions = %d\n",
                     SLOW_TIMEOUT_MS, SLOW_MAX_SESSIONS);
    if (tls) {
        ASSERT_EQ(test_pki_make(&p), 0);
        snprintf(conf + n, sizeof(conf) - (size_t)n,
                 "tls_cert = %s\ntls_key = %s\n", p.server_cert,
                 p.server_key);
        snprintf(tls_uri, sizeof(tls_uri), "tls://127.0.0.1:%d",
                 test_free_port());
        ASSERT_EQ(test_tls_use(p.ca, NULL, NULL), 0);
    }
    ASSERT_EQ(test_write_file(&g, "gvs.conf", conf, path, sizeof(path)), 0);
    const char *const extra[] = {"--config", path, tls ? "--listen" : NULL,
                                 tls_uri, NULL};
    ASSERT_EQ(test_gvsd_start(&g, extra), 0);
    const char *uri = tls                          ? tls_uri
                      : strcmp(which, "tcp") == 0 ? g.tcp_uri
                                                   : g.unix_uri;
    struct trickler t[SLOW_MAX_SESSIONS];
    for (int i = 0; i < SLOW_MAX_SESSIONS; i++)
        ASSERT_EQ(trickle_start(&t[i], uri), 0);
    usleep(500 * 1000);
    struct gvs_conn *good = test_session(uri);
    ASSERT(good != NULL);
    ASSERT_EQ(test_echo(good, 1, 100), 0);
    for (int i = 0; i < SLOW_MAX_SESSIONS; i++) {
        ASSERT_EQ(pthread_join(t[i].thread, NULL), 0);
        ASSERT_NE(t[i].closed_ms, -1);
        ASSERT_LE(t[i].closed_ms - t[i].start_ms, SLOW_TIMEOUT_MS + 500);
        gvs_conn_close(t[i].c);
    }
    /* The session goes on after the tricklers have gone. */
    ASSERT_EQ(test_echo(good, 2, 100), 0);
    gvs_conn_close(good);
    ASSERT(test_gvsd_log_has(&g, "handshake failed: timed out", 2000));
    test_gvsd_stop(&g);
    if (tls)
        test_pki_remove(&p);
    return 0;
}

TEST_IMPL(server_slow_hello_unix)
{
    return slow_hellos("unix");
}

TEST_IMPL(server_slow_hello_tcp)
{
    return slow_hellos("tcp");
}

TEST_IMPL(server_slow_hello_tls)
{
    return slow_hellos("tls");
}

/* Handshakes are limited overall and per peer; sessions are not taken by
 * them, and a refused client is told why. */
TEST_IMPL(server_handshake_limits)
{
    struct test_gvsd g = {0};
    char conf[256], path[300], msg[256];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    snprintf(conf, sizeof(conf),
             "handshake_timeout_ms = %d\nmax_handshakes_per_peer = 2\n",
             SLOW_TIMEOUT_MS);
    ASSERT_EQ(test_write_file(&g, "gvs.conf", conf, path, sizeof(path)), 0);
    const char *const extra[] = {"--config", path, NULL};
    ASSERT_EQ(test_gvsd_start(&g, extra), 0);
    struct trickler t[2];
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(trickle_start(&t[i], g.unix_uri), 0);
    usleep(300 * 1000);
    struct gvs_conn *c;
    ASSERT_EQ(test_hello(g.unix_uri, GVS_PROTO_VERSION, ECHO_PLUGIN_ID,
                         ECHO_PLUGIN_NAME, ECHO_TABLE_HASH, &c, msg,
                         sizeof(msg)),
              GVS_E_RANGE);
    ASSERT_STR_EQ(msg, "too many connections in their handshake from this "
                       "peer");
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "(2 from uid=", 2000));
    /* Another peer (tcp from 127.0.0.1) is counted apart. */
    struct gvs_conn *other = test_session(g.tcp_uri);
    ASSERT(other != NULL);
    ASSERT_EQ(test_echo(other, 1, 10), 0);
    gvs_conn_close(other);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(pthread_join(t[i].thread, NULL), 0);
        ASSERT_NE(t[i].closed_ms, -1);
        gvs_conn_close(t[i].c);
    }
    /* Once they are gone, the peer is served again. */
    struct gvs_conn *again = test_session(g.unix_uri);
    ASSERT(again != NULL);
    gvs_conn_close(again);
    test_gvsd_stop(&g);
    return 0;
}
