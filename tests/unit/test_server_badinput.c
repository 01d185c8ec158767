/* The "bad input" list: each case closes only the offending session and
 * is logged, while gvsd and another open session keep working. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

#define CLOSE_TIMEOUT_MS 5000

/* Common frame: starts gvsd, opens a bystander session over tcp and the
 * session under test over unix. */
struct bad_case {
    struct test_gvsd g;
    struct gvs_conn *other;
    struct gvs_conn *c;
};

static int setup(struct bad_case *t, const char *const *extra, int handshake)
{
    memset(t, 0, sizeof(*t));
    ASSERT_EQ(test_gvsd_start(&t->g, extra), 0);
    t->other = test_session(t->g.tcp_uri);
    ASSERT(t->other != NULL);
    ASSERT_EQ(test_echo(t->other, 1, 16), 0);
    if (handshake)
        t->c = test_session(t->g.unix_uri);
    else
        ASSERT_EQ(gvs_connect(t->g.unix_uri, &t->c), 0);
    ASSERT(t->c != NULL);
    return 0;
}

/* The session under test was closed and logged, the rest still works. */
static int verify(struct bad_case *t, const char *log_line)
{
    ASSERT(test_wait_closed(t->c, CLOSE_TIMEOUT_MS));
    ASSERT(test_gvsd_log_has(&t->g, log_line, CLOSE_TIMEOUT_MS));
    ASSERT_EQ(test_still_serving(&t->g, t->other), 0);
    gvs_conn_close(t->c);
    gvs_conn_close(t->other);
    ASSERT_EQ(test_gvsd_stop(&t->g), 0);
    return 0;
}

static void encode_hdr(uint8_t out[GVS_FRAME_HDR_LEN], uint32_t len,
                       uint16_t plugin, uint16_t op, uint64_t id)
{
    struct gvs_frame_hdr h = {
        .len = len, .plugin = plugin, .op = op, .id = id};
    gvs_frame_hdr_encode(&h, out);
}

TEST_IMPL(server_bad_magic)
{
    struct bad_case t;
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    encode_hdr(hdr, 0, ECHO_PLUGIN_ID, ECHO_OP_ECHO, 1);
    hdr[0] ^= 0xff;
    ASSERT_EQ(test_send_raw(t.c, hdr, sizeof(hdr)), 0);
    return verify(&t, "session 2: bad frame: protocol violation");
}

TEST_IMPL(server_oversized_length)
{
    struct bad_case t;
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    const char *const extra[] = {"--max-frame", "65536", NULL};
    ASSERT_EQ(setup(&t, extra, 1), 0);
    encode_hdr(hdr, 65537, ECHO_PLUGIN_ID, ECHO_OP_ECHO, 1);
    ASSERT_EQ(test_send_raw(t.c, hdr, sizeof(hdr)), 0);
    return verify(&t, "session 2: bad frame: length exceeds the maximum");
}

TEST_IMPL(server_unknown_plugin)
{
    struct bad_case t;
    struct gvs_buf *reply = gvs_buf_new(1024);
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    ASSERT(test_call(t.c, 77, 1, 1, "x", 1, reply) < 0);
    ASSERT_EQ(verify(&t, "session 2: request for plugin 77, not in this "
                         "session"),
              0);
    /* Naming it in the handshake is refused there. */
    struct test_gvsd g = {0};
    struct gvs_conn *c;
    char msg[256];
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    ASSERT_EQ(test_hello(g.unix_uri, GVS_PROTO_VERSION, 77, "nosuch", 1, &c,
                         msg, sizeof(msg)),
              GVS_E_NOENT);
    ASSERT_STR_EQ(msg, "plugin nosuch (id 77) is not loaded");
    ASSERT(test_wait_closed(c, CLOSE_TIMEOUT_MS));
    ASSERT(test_gvsd_log_has(&g, "session 1: handshake refused: plugin "
                                 "nosuch (id 77) is not loaded",
                             CLOSE_TIMEOUT_MS));
    gvs_conn_close(c);
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_unknown_op)
{
    struct bad_case t;
    struct gvs_buf *reply = gvs_buf_new(1024);
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    ASSERT(test_call(t.c, ECHO_PLUGIN_ID, 999, 1, NULL, 0, reply) < 0);
    gvs_buf_free(reply);
    return verify(&t, "session 2: plugin echo has no op 999");
}

TEST_IMPL(server_disconnect_mid_frame)
{
    struct bad_case t;
    uint8_t frame[GVS_FRAME_HDR_LEN + 10] = {0};
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    encode_hdr(frame, 100, ECHO_PLUGIN_ID, ECHO_OP_ECHO, 1);
    ASSERT_EQ(test_send_raw(t.c, frame, sizeof(frame)), 0);
    gvs_conn_close(t.c);
    ASSERT(test_gvsd_log_has(&t.g, "session 2: bad frame: protocol violation",
                             CLOSE_TIMEOUT_MS));
    /* A header cut short, on a third session. */
    struct gvs_conn *c = test_session(t.g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_send_raw(c, frame, 10), 0);
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&t.g, "session 3: bad frame: protocol violation",
                             CLOSE_TIMEOUT_MS));
    ASSERT_EQ(test_still_serving(&t.g, t.other), 0);
    gvs_conn_close(t.other);
    ASSERT_EQ(test_gvsd_stop(&t.g), 0);
    return 0;
}

TEST_IMPL(server_no_hello_first)
{
    struct bad_case t;
    struct gvs_buf *reply = gvs_buf_new(1024);
    struct gvs_hello_reply r;
    ASSERT_EQ(setup(&t, NULL, 0), 0);
    /* The refusal is a HELLO reply, whatever was asked. */
    struct gvs_frame_hdr h = {.plugin = ECHO_PLUGIN_ID, .op = ECHO_OP_ECHO,
                              .id = 5};
    ASSERT_EQ(gvs_frame_send(t.c, &h, NULL), 0);
    ASSERT_EQ(gvs_frame_recv(t.c, 1024, &h, reply), 0);
    ASSERT_EQ(h.op, GVS_CTL_HELLO);
    ASSERT_EQ(h.id, 5);
    ASSERT_EQ(gvs_hello_reply_decode(reply, &r), 0);
    ASSERT_EQ(r.status, GVS_E_PROTO);
    gvs_buf_free(reply);
    return verify(&t, "session 2: handshake refused: first frame must be a "
                      "HELLO");
}

TEST_IMPL(server_wrong_version)
{
    struct bad_case t;
    struct gvs_conn *c;
    char msg[256];
    ASSERT_EQ(setup(&t, NULL, 0), 0);
    gvs_conn_close(t.c);
    ASSERT_EQ(test_hello(t.g.unix_uri, GVS_PROTO_VERSION + 1, ECHO_PLUGIN_ID,
                         ECHO_PLUGIN_NAME, ECHO_TABLE_HASH, &c, msg,
                         sizeof(msg)),
              GVS_E_VERSION);
    t.c = c;
    char line[128];
    snprintf(line, sizeof(line),
             "handshake refused: protocol version %u not supported",
             GVS_PROTO_VERSION + 1);
    return verify(&t, line);
}

TEST_IMPL(server_wrong_table_hash)
{
    struct bad_case t;
    struct gvs_conn *c;
    char msg[256];
    ASSERT_EQ(setup(&t, NULL, 0), 0);
    gvs_conn_close(t.c);
    ASSERT_EQ(test_hello(t.g.unix_uri, GVS_PROTO_VERSION, ECHO_PLUGIN_ID,
                         ECHO_PLUGIN_NAME, ECHO_TABLE_HASH + 1, &c, msg,
                         sizeof(msg)),
              GVS_E_MISMATCH);
    ASSERT(strstr(msg, "plugin echo: operation table mismatch") != NULL);
    t.c = c;
    return verify(&t, "handshake refused: plugin echo: operation table "
                      "mismatch");
}

TEST_IMPL(server_handshake_timeout)
{
    struct bad_case t;
    struct test_gvsd g0 = {0};
    char conf[256], config_path[300];
    ASSERT_EQ(test_gvsd_init(&g0), 0);
    snprintf(conf, sizeof(conf), "handshake_timeout_ms = 300\n");
    ASSERT_EQ(test_write_file(&g0, "gvs.conf", conf, config_path,
                              sizeof(config_path)),
              0);
    const char *const extra[] = {"--config", config_path, NULL};
    ASSERT_EQ(setup(&t, extra, 0), 0);
    long long start = test_now_ms();
    ASSERT(test_wait_closed(t.c, CLOSE_TIMEOUT_MS));
    ASSERT_LT(test_now_ms() - start, 2000);
    /* The bystander, idle far longer than the timeout, is unaffected. */
    int rc = verify(&t, "session 2: handshake failed: timed out");
    test_gvsd_stop(&g0);
    return rc;
}

TEST_IMPL(server_malformed_request)
{
    struct bad_case t;
    struct gvs_buf *reply = gvs_buf_new(1024);
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    ASSERT(test_call(t.c, ECHO_PLUGIN_ID, ECHO_OP_BADREQ, 1, NULL, 0,
                     reply) < 0);
    gvs_buf_free(reply);
    return verify(&t, "session 2: echo/BADREQ: malformed request (protocol "
                      "violation)");
}

TEST_IMPL(server_bad_flags)
{
    struct bad_case t;
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    /* ECHO may not be posted without a reply. */
    struct gvs_frame_hdr h = {.plugin = ECHO_PLUGIN_ID, .op = ECHO_OP_ECHO,
                              .flags = GVS_F_NOREPLY, .id = 1};
    ASSERT_EQ(gvs_frame_send(t.c, &h, NULL), 0);
    ASSERT_EQ(verify(&t, "session 2: echo/ECHO cannot be sent without a "
                         "reply"),
              0);
    /* A request flagged as a reply. */
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    h.flags = GVS_F_REPLY;
    ASSERT_EQ(gvs_frame_send(t.c, &h, NULL), 0);
    ASSERT_EQ(verify(&t, "session 2: request 1 is flagged as a reply"), 0);
    /* Notifications go from the server to the client only. */
    ASSERT_EQ(setup(&t, NULL, 1), 0);
    h.flags = GVS_F_NOTIFY;
    ASSERT_EQ(gvs_frame_send(t.c, &h, NULL), 0);
    return verify(&t, "session 2: request 1 is flagged as a notification");
}
