/* Token authentication against a real gvsd (docs/protocol.md, "Token
 * authentication"): raw HELLO exchanges for what a client may try, and
 * libgvs-client for what a program sees. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/auth.h"
#include "gvs/client.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

#define ALICE "alice-secret-0123456789"
#define BOB "bob-secret-0123456789"

/* gvsd with two tokens (alice's named, with a quota; bob's unnamed) and
 * the handshake timeout given. */
static int start_token_server(struct test_gvsd *g, unsigned handshake_ms)
{
    char text[512], path[256];
    memset(g, 0, sizeof(*g));
    ASSERT_EQ(test_gvsd_init(g), 0);
    snprintf(text, sizeof(text),
             "token = " ALICE " name=alice quota=64M\n"
             "token = " BOB "\n"
             "handshake_timeout_ms = %u\n",
             handshake_ms);
    ASSERT_EQ(test_write_file(g, "gvs.conf", text, path, sizeof(path)), 0);
    const char *extra[] = {"--config", path, NULL};
    ASSERT_EQ(test_gvsd_start(g, extra), 0);
    return 0;
}

static void echo_hello(struct gvs_hello *h)
{
    memset(h, 0, sizeof(*h));
    h->version = GVS_PROTO_VERSION;
    h->pid = (uint32_t)getpid();
    snprintf(h->program, sizeof(h->program), "gvs-unit-tests");
    h->nplugins = 1;
    h->plugins[0].id = ECHO_PLUGIN_ID;
    h->plugins[0].table_hash = ECHO_TABLE_HASH;
    snprintf(h->plugins[0].name, sizeof(h->plugins[0].name), "%s",
             ECHO_PLUGIN_NAME);
}

static int send_hello(struct gvs_conn *c, const struct gvs_hello *hello)
{
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO, .id = 0};
    struct gvs_buf *b = gvs_buf_new(8192);
    int rc = b == NULL ? GVS_E_NOMEM : gvs_hello_encode(hello, b);
    if (rc == 0)
        rc = gvs_frame_send(c, &h, b);
    gvs_buf_free(b);
    return rc;
}

/* Reads a HELLO reply: its status (or a transport error). */
static int recv_reply(struct gvs_conn *c, struct gvs_hello_reply *r)
{
    struct gvs_frame_hdr h;
    struct gvs_buf *b = gvs_buf_new(8192);
    int rc = gvs_conn_set_timeout(c, 10000);
    if (rc == 0)
        rc = gvs_frame_recv(c, 8192, &h, b);
    if (rc == 0 && (h.flags != GVS_F_REPLY || h.op != GVS_CTL_HELLO ||
                    h.id != 0))
        rc = GVS_E_PROTO;
    if (rc == 0)
        rc = gvs_hello_reply_decode(b, r);
    gvs_buf_free(b);
    return rc < 0 ? rc : r->status;
}

/* Sends hello and reads the reply: its status (or a transport error). */
static int hello_exchange(struct gvs_conn *c, const struct gvs_hello *hello,
                          struct gvs_hello_reply *r)
{
    int rc = send_hello(c, hello);
    return rc == 0 ? recv_reply(c, r) : rc;
}

/* Connects and sends a first HELLO; 0 when it was challenged, with the
 * server's nonce in r. */
static int challenge(const char *uri, struct gvs_conn **c,
                     struct gvs_hello_reply *r)
{
    struct gvs_hello hello;
    echo_hello(&hello);
    int rc = gvs_connect(uri, c);
    if (rc == 0)
        rc = hello_exchange(*c, &hello, r);
    return rc == GVS_HELLO_CHALLENGE ? 0 : rc < 0 ? rc : GVS_E_PROTO;
}

/* Makes hello carry a proof of secret over nonce, as the client does. */
static int prove(struct gvs_hello *hello, const char *secret,
                 const uint8_t nonce[GVS_AUTH_NONCE_LEN])
{
    struct gvs_buf *b = gvs_buf_new(8192);
    hello->auth = GVS_HELLO_AUTH_NONE;
    int rc = gvs_auth_nonce(hello->client_nonce);
    if (rc == 0)
        rc = gvs_hello_encode(hello, b);
    if (rc == 0)
        rc = gvs_auth_mac(secret, nonce, hello->client_nonce, gvs_buf_ptr(b),
                          gvs_buf_len(b) - 1, hello->mac);
    hello->auth = GVS_HELLO_AUTH_HMAC;
    gvs_buf_free(b);
    return rc;
}

/* A full raw handshake with secret (NULL: answer without a proof). */
static int auth_session(const char *uri, const char *secret,
                        struct gvs_conn **c, struct gvs_hello_reply *r)
{
    struct gvs_hello hello;
    echo_hello(&hello);
    int rc = challenge(uri, c, r);
    if (rc == 0 && secret != NULL)
        rc = prove(&hello, secret, r->nonce);
    return rc == 0 ? hello_exchange(*c, &hello, r) : rc;
}

/* The one connection the log shows was refused and ran no call at
 * all. */
static int no_call_ran(const struct test_gvsd *g)
{
    ASSERT(test_gvsd_log_has(g, "session 1: handshake ", 5000));
    ASSERT(!test_gvsd_log_has(g, "session 1: ended after", 0));
    ASSERT(!test_gvsd_log_has(g, "1 call(s)", 0));
    return 0;
}

/* no_call_ran, then gvsd stops cleanly. */
static int stop_no_call(struct test_gvsd *g)
{
    ASSERT_EQ(no_call_ran(g), 0);
    ASSERT_EQ(test_gvsd_stop(g), 0);
    return 0;
}

/* A challenged connection in *c, and hello (echo_hello's) proved with
 * secret over its nonce.  0 or 1. */
static int challenged_proof(const char *uri, struct gvs_conn **c,
                            struct gvs_hello *hello, const char *secret,
                            struct gvs_hello_reply *r)
{
    echo_hello(hello);
    ASSERT_EQ(challenge(uri, c, r), 0);
    ASSERT_EQ(prove(hello, secret, r->nonce), 0);
    return 0;
}

TEST_IMPL(server_token_accepted)
{
    struct test_gvsd g;
    struct gvs_conn *c;
    struct gvs_hello_reply r;
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    const char *uris[] = {g.unix_uri, g.tcp_uri, g.shm_uri};
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(auth_session(uris[i], ALICE, &c, &r), 0);
        ASSERT_EQ(test_echo(c, 1, 100), 0);
        gvs_conn_close(c);
    }
    ASSERT(test_gvsd_log_has(&g, "session 1: token alice: program "
                                 "gvs-unit-tests",
                             5000));
    /* An unnamed token is shown by its place in the config. */
    ASSERT_EQ(auth_session(g.unix_uri, BOB, &c, &r), 0);
    ASSERT_EQ(test_echo(c, 2, 10), 0);
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "session 4: token #2: program", 5000));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A wrong token is refused, and a request sent right behind the proof
 * never runs. */
TEST_IMPL(server_token_wrong)
{
    struct test_gvsd g;
    struct gvs_conn *c;
    struct gvs_hello_reply r;
    struct gvs_hello hello;
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    ASSERT_EQ(challenged_proof(g.unix_uri, &c, &hello,
                               "carol-secret-0123456789", &r),
              0);
    /* One write: the request is there when the proof is read. */
    struct gvs_buf *b = gvs_buf_new(8192);
    uint8_t frames[2][GVS_FRAME_HDR_LEN];
    ASSERT_EQ(gvs_hello_encode(&hello, b), 0);
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO,
                              .len = (uint32_t)gvs_buf_len(b)};
    gvs_frame_hdr_encode(&h, frames[0]);
    h = (struct gvs_frame_hdr){
        .plugin = ECHO_PLUGIN_ID, .op = ECHO_OP_ECHO, .id = 1, .len = 0};
    gvs_frame_hdr_encode(&h, frames[1]);
    struct iovec iov[3] = {{frames[0], GVS_FRAME_HDR_LEN},
                           {(void *)gvs_buf_ptr(b), gvs_buf_len(b)},
                           {frames[1], GVS_FRAME_HDR_LEN}};
    ASSERT_EQ(gvs_conn_sendv(c, iov, 3), 0);
    gvs_buf_free(b);
    ASSERT_EQ(recv_reply(c, &r), GVS_E_DENIED);
    ASSERT(strstr(r.message, "authentication failed") != NULL);
    ASSERT(test_wait_closed(c, 5000));
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "handshake refused: authentication "
                                 "failed: no token matches (peer uid=",
                             5000));
    ASSERT_EQ(stop_no_call(&g), 0);
    return 0;
}

/* No proof, no session: neither without a token nor by skipping the
 * challenge. */
TEST_IMPL(server_token_missing)
{
    struct test_gvsd g;
    struct gvs_conn *c;
    struct gvs_hello_reply r;
    char msg[256];
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    ASSERT_EQ(auth_session(g.tcp_uri, NULL, &c, &r), GVS_E_DENIED);
    ASSERT(strstr(r.message, "requires a token") != NULL);
    ASSERT(test_wait_closed(c, 5000));
    gvs_conn_close(c);
    /* A client that does not know about tokens gets the challenge and
     * nothing else: a request in its place ends the session. */
    ASSERT_EQ(test_hello(g.unix_uri, GVS_PROTO_VERSION, ECHO_PLUGIN_ID,
                         ECHO_PLUGIN_NAME, ECHO_TABLE_HASH, &c, msg,
                         sizeof(msg)),
              GVS_HELLO_CHALLENGE);
    struct gvs_buf *reply = gvs_buf_new(64);
    ASSERT_EQ(test_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, 1, "x", 1, reply),
              GVS_E_PROTO);
    gvs_buf_free(reply);
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "first frame must be a HELLO", 5000));
    ASSERT_EQ(stop_no_call(&g), 0);
    return 0;
}

/* A proof is good for the connection it was made for, and for the HELLO
 * it was made over. */
TEST_IMPL(server_token_replay)
{
    struct test_gvsd g;
    struct gvs_conn *a, *c;
    struct gvs_hello_reply r;
    struct gvs_hello hello;
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    ASSERT_EQ(challenged_proof(g.unix_uri, &a, &hello, ALICE, &r), 0);
    ASSERT_EQ(hello_exchange(a, &hello, &r), 0);

    /* The same proof on another connection: another nonce. */
    ASSERT_EQ(challenge(g.unix_uri, &c, &r), 0);
    ASSERT_EQ(hello_exchange(c, &hello, &r), GVS_E_DENIED);
    gvs_conn_close(c);

    /* A good proof over other fields than those sent. */
    ASSERT_EQ(challenge(g.unix_uri, &c, &r), 0);
    ASSERT_EQ(prove(&hello, ALICE, r.nonce), 0);
    hello.pid ^= 1;
    ASSERT_EQ(hello_exchange(c, &hello, &r), GVS_E_DENIED);
    gvs_conn_close(c);

    /* Forged: random bytes, and a good proof with one bit flipped. */
    ASSERT_EQ(challenge(g.unix_uri, &c, &r), 0);
    echo_hello(&hello);
    hello.auth = GVS_HELLO_AUTH_HMAC;
    ASSERT_EQ(gvs_auth_nonce(hello.mac), 0);
    ASSERT_EQ(hello_exchange(c, &hello, &r), GVS_E_DENIED);
    gvs_conn_close(c);
    ASSERT_EQ(challenge(g.unix_uri, &c, &r), 0);
    ASSERT_EQ(prove(&hello, ALICE, r.nonce), 0);
    hello.mac[5] ^= 0x10;
    ASSERT_EQ(hello_exchange(c, &hello, &r), GVS_E_DENIED);
    gvs_conn_close(c);

    /* A proof before any challenge (no nonce to prove over). */
    ASSERT_EQ(gvs_connect(g.unix_uri, &c), 0);
    ASSERT_EQ(hello_exchange(c, &hello, &r), GVS_E_PROTO);
    ASSERT(strstr(r.message, "before a challenge") != NULL);
    gvs_conn_close(c);

    /* The first session was not disturbed. */
    ASSERT_EQ(test_echo(a, 3, 64), 0);
    gvs_conn_close(a);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A server without tokens asks nothing and takes no proof. */
TEST_IMPL(server_token_none_configured)
{
    struct test_gvsd g = {0};
    struct gvs_conn *c;
    struct gvs_hello_reply r;
    struct gvs_hello hello;
    uint8_t nonce[GVS_AUTH_NONCE_LEN] = {0};
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    gvs_conn_close(c);
    echo_hello(&hello);
    ASSERT_EQ(prove(&hello, ALICE, nonce), 0);
    ASSERT_EQ(gvs_connect(g.unix_uri, &c), 0);
    ASSERT_EQ(hello_exchange(c, &hello, &r), GVS_E_PROTO);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* The handshake timeout bounds the whole exchange: a client that took
 * most of it before its first HELLO has only the rest to answer. */
TEST_IMPL(server_token_timeout)
{
    struct test_gvsd g;
    struct gvs_conn *c;
    struct gvs_hello_reply r;
    struct gvs_hello hello;
    ASSERT_EQ(start_token_server(&g, 600), 0);
    echo_hello(&hello);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_connect(g.unix_uri, &c), 0);
    usleep(450 * 1000);
    ASSERT_EQ(hello_exchange(c, &hello, &r), GVS_HELLO_CHALLENGE);
    ASSERT(test_wait_closed(c, 5000));
    long long took = test_now_ms() - t0;
    gvs_conn_close(c);
    ASSERT_GE(took, 550);
    ASSERT_LT(took, 1000);
    ASSERT(test_gvsd_log_has(&g, "no answer to the challenge (timed out)",
                             5000));
    ASSERT_EQ(stop_no_call(&g), 0);
    return 0;
}

/* Hostile second HELLOs: each is refused on its own, gvsd goes on. */
TEST_IMPL(server_token_hostile)
{
    struct test_gvsd g;
    struct gvs_conn *c;
    struct gvs_hello_reply r;
    struct gvs_hello hello;
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    echo_hello(&hello);
    struct gvs_buf *b = gvs_buf_new(8192);
    ASSERT_EQ(gvs_hello_encode(&hello, b), 0);
    uint8_t body[1024];
    size_t n = gvs_buf_len(b); /* ends with auth 0 */
    memcpy(body, gvs_buf_ptr(b), n);
    memset(body + n, 0xab, GVS_HELLO_PROOF_LEN + 8);
    gvs_buf_free(b);
    struct {
        uint8_t auth;
        size_t len; /* body bytes sent */
        int status;
    } cases[] = {
        {GVS_HELLO_AUTH_HMAC, n, GVS_E_SHORT},       /* no proof bytes */
        {GVS_HELLO_AUTH_HMAC, n + 31, GVS_E_SHORT},  /* nonce cut */
        {GVS_HELLO_AUTH_HMAC, n + 63, GVS_E_SHORT},  /* mac cut */
        {GVS_HELLO_AUTH_HMAC, n + 65, GVS_E_TRAILING},
        {7, n, GVS_E_PROTO},                         /* unknown kind */
        {GVS_HELLO_AUTH_NONE, n - 1, GVS_E_SHORT},   /* no auth field */
        {GVS_HELLO_AUTH_HMAC, 3, GVS_E_SHORT},       /* cut in version */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ASSERT_EQ(challenge(g.unix_uri, &c, &r), 0);
        body[n - 1] = cases[i].auth;
        struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO, .id = 0};
        struct iovec iov = {body, cases[i].len};
        ASSERT_EQ(gvs_frame_sendv(c, &h, &iov, 1), 0);
        int rc = recv_reply(c, &r);
        if (rc != cases[i].status && !(cases[i].len == 3 && rc < 0)) {
            fprintf(stderr, "case %zu: %d (%s)\n", i, rc, r.message);
            return 1;
        }
        ASSERT(test_wait_closed(c, 5000));
        gvs_conn_close(c);
    }
    /* A second HELLO far too large for a HELLO. */
    ASSERT_EQ(challenge(g.unix_uri, &c, &r), 0);
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    struct gvs_frame_hdr big = {.op = GVS_CTL_HELLO, .len = 1u << 20};
    gvs_frame_hdr_encode(&big, hdr);
    ASSERT_EQ(test_send_raw(c, hdr, sizeof(hdr)), 0);
    ASSERT(test_wait_closed(c, 5000));
    gvs_conn_close(c);
    ASSERT_EQ(no_call_ran(&g), 0);
    ASSERT_EQ(auth_session(g.shm_uri, ALICE, &c, &r), 0);
    ASSERT_EQ(test_echo(c, 9, 1000), 0);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* libgvs-client ------------------------------------------------------ */

static const struct gvs_client_plugin echo_plugin = {
    ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};

/* The client's stderr, from a pipe, until end. */
static int capture(int *saved, int *rfd)
{
    int p[2];
    fflush(stderr);
    if (pipe(p) < 0)
        return -1;
    *saved = dup(STDERR_FILENO);
    dup2(p[1], STDERR_FILENO);
    close(p[1]);
    *rfd = p[0];
    return 0;
}

static void capture_end(int saved, int rfd, char *out, size_t len)
{
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = read(rfd, out, len - 1);
    out[n > 0 ? n : 0] = '\0';
    close(rfd);
}

/* A program's view: the first gvs_client_get with token (NULL: none);
 * its result, and its stderr in err. */
static int client_with_token(const char *uri, const char *token, char *err,
                             size_t len)
{
    struct gvs_client *c;
    int saved, rfd;
    setenv("GVS_CONFIG", "/dev/null", 1);
    setenv("GVS_SERVER", uri, 1);
    if (token != NULL)
        setenv("GVS_TOKEN", token, 1);
    else
        unsetenv("GVS_TOKEN");
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    ASSERT_EQ(capture(&saved, &rfd), 0);
    int rc = gvs_client_get(&c);
    if (rc == 0) {
        struct gvs_buf *reply = gvs_buf_new(64);
        struct iovec iov = {"ping", 4};
        rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov, 1, reply);
        if (rc == 0 && gvs_buf_len(reply) != 4)
            rc = GVS_E_PROTO;
        gvs_buf_free(reply);
    }
    capture_end(saved, rfd, err, len);
    return rc;
}

TEST_IMPL(client_token_accepted)
{
    struct test_gvsd g;
    char err[1024];
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    ASSERT_EQ(client_with_token(g.shm_uri, ALICE, err, sizeof(err)), 0);
    ASSERT_STR_EQ(err, "");
    ASSERT(test_gvsd_log_has(&g, "token alice: program gvs-unit-tests",
                             5000));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(client_token_wrong)
{
    struct test_gvsd g;
    char err[1024];
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    ASSERT_EQ(client_with_token(g.unix_uri, "not-the-token-0123456789", err,
                                sizeof(err)),
              GVS_E_DENIED);
    ASSERT(strstr(err, "handshake failed: authentication failed") != NULL);
    ASSERT_EQ(strchr(err, '\n') - err + 1, (long)strlen(err));
    ASSERT_EQ(stop_no_call(&g), 0);
    return 0;
}

TEST_IMPL(client_token_missing)
{
    struct test_gvsd g;
    char err[1024];
    ASSERT_EQ(start_token_server(&g, 5000), 0);
    ASSERT_EQ(client_with_token(g.tcp_uri, NULL, err, sizeof(err)),
              GVS_E_DENIED);
    ASSERT(strstr(err, "this server requires a token (set GVS_TOKEN)") !=
           NULL);
    ASSERT_EQ(stop_no_call(&g), 0);
    return 0;
}
