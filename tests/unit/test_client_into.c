/* gvs_client_expect_into / gvs_client_wait_into against a hand-played
 * server: where each reply's tail lands, whatever the server sends. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/client.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

#define HEAD 8u
#define TAIL 100u
#define GUARD 16u
#define POISON 0xee

static const struct gvs_client_plugin echo_plugin = {
    ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};

/* Where a tail goes, with guard bytes on both sides. */
struct landing {
    uint8_t bytes[GUARD + TAIL + GUARD];
};

static uint8_t *tail_of(struct landing *l)
{
    return l->bytes + GUARD;
}

static void poison(struct landing *l)
{
    memset(l->bytes, POISON, sizeof(l->bytes));
}

/* 1 when no byte of l was written. */
static int untouched(const struct landing *l)
{
    for (size_t i = 0; i < sizeof(l->bytes); i++)
        if (l->bytes[i] != POISON)
            return 0;
    return 1;
}

static uint8_t pattern(size_t i, unsigned seed)
{
    return (uint8_t)(i * 29 + seed * 7 + 1);
}

/* 1 when the tail holds the pattern and the guards are intact. */
static int landed(const struct landing *l, unsigned seed)
{
    for (size_t i = 0; i < sizeof(l->bytes); i++) {
        int in = i >= GUARD && i < GUARD + TAIL;
        if (l->bytes[i] != (in ? pattern(i - GUARD, seed) : POISON))
            return 0;
    }
    return 1;
}

/* The server side ------------------------------------------------------ */

/* Plays the server side of a handshake on an accepted connection. */
static int fake_handshake(struct gvs_conn *conn)
{
    struct gvs_buf *b = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    struct gvs_frame_hdr h;
    struct gvs_hello hello;
    struct gvs_hello_reply r = {.version = GVS_PROTO_VERSION, .session = 1};
    int rc = b != NULL ? gvs_frame_recv(conn, GVS_FRAME_MAX_DEFAULT, &h, b)
                       : GVS_E_NOMEM;
    if (rc == 0)
        rc = h.op == GVS_CTL_HELLO ? gvs_hello_decode(b, &hello)
                                   : GVS_E_PROTO;
    if (rc == 0) {
        gvs_buf_reset(b);
        rc = gvs_hello_reply_encode(&r, b);
    }
    h.flags = GVS_F_REPLY;
    if (rc == 0)
        rc = gvs_frame_send(conn, &h, b);
    gvs_buf_free(b);
    return rc;
}

/* A request's body names the reply the server plays: u32 body length,
 * u32 seed, u8 how (what follows), sent once the request is read. */
enum how {
    REPLY_NOW = 0,
    /* Held until the next request has been read, and sent before its
     * reply: the client has announced the tail by then. */
    REPLY_AFTER_NEXT = 1,
    /* Once the next request has been read: the header, then only part
     * of the body, then the connection closes. */
    REPLY_CUT = 2,
};

/* A body of len bytes: i32 0, u32 TAIL, then the pattern (cut at len). */
static void body_of(uint8_t *b, size_t len, unsigned seed)
{
    uint8_t head[HEAD] = {0, 0, 0, 0, TAIL, 0, 0, 0};
    for (size_t i = 0; i < len; i++)
        b[i] = i < HEAD ? head[i] : pattern(i - HEAD, seed);
}

static int send_reply(struct gvs_conn *conn, const struct gvs_frame_hdr *req,
                      size_t len, unsigned seed, int cut)
{
    struct gvs_frame_hdr h = *req;
    h.flags = GVS_F_REPLY;
    uint8_t *b = malloc(len ? len : 1);
    if (b == NULL)
        return GVS_E_NOMEM;
    body_of(b, len, seed);
    struct iovec iov = {b, len};
    int rc;
    if (cut) {
        uint8_t hdr[GVS_FRAME_HDR_LEN];
        h.len = (uint32_t)len;
        gvs_frame_hdr_encode(&h, hdr);
        rc = gvs_conn_send(conn, hdr, sizeof(hdr));
        if (rc == 0)
            rc = gvs_conn_send(conn, b, len / 2);
    } else {
        rc = gvs_frame_sendv(conn, &h, &iov, 1);
    }
    free(b);
    return rc;
}

/* Serves scripted replies until the client goes or a reply is cut. */
static void fake_server(struct gvs_listener *l)
{
    struct gvs_conn *conn;
    struct gvs_buf *b = gvs_buf_new(64);
    struct gvs_frame_hdr held;
    uint32_t held_len = 0, held_seed = 0;
    int holding = 0;
    if (b == NULL || gvs_accept(l, &conn) != 0 || fake_handshake(conn) != 0)
        _exit(1);
    for (;;) {
        struct gvs_frame_hdr h;
        uint32_t len, seed;
        uint8_t how;
        int rc = gvs_frame_recv(conn, 64, &h, b);
        if (rc == GVS_E_CLOSED)
            _exit(0);
        if (rc == 0)
            rc = gvs_buf_get_u32(b, &len);
        if (rc == 0)
            rc = gvs_buf_get_u32(b, &seed);
        if (rc == 0)
            rc = gvs_buf_get_u8(b, &how);
        if (rc == 0 && holding) {
            rc = send_reply(conn, &held, held_len, held_seed, 0);
            holding = 0;
        }
        if (rc == 0 && how == REPLY_AFTER_NEXT) {
            held = h;
            held_len = len;
            held_seed = seed;
            holding = 1;
        } else if (rc == 0) {
            if (how == REPLY_CUT)
                rc = gvs_frame_recv(conn, 64, &held, b);
            if (rc == 0)
                rc = send_reply(conn, &h, len, seed, how == REPLY_CUT);
        }
        if (rc < 0 || how == REPLY_CUT)
            _exit(rc < 0);
    }
}

/* The client side ------------------------------------------------------- */

struct session {
    struct test_gvsd g;
    struct gvs_listener *l;
    pid_t server;
    struct gvs_client *c;
};

static int open_session(struct session *s)
{
    memset(s, 0, sizeof(*s));
    ASSERT_EQ(test_gvsd_init(&s->g), 0);
    ASSERT_EQ(gvs_listen(s->g.unix_uri, &s->l), 0);
    setenv("GVS_CONFIG", "/dev/null", 1);
    setenv("GVS_SERVER", s->g.unix_uri, 1);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    s->server = fork();
    if (s->server == 0)
        fake_server(s->l);
    ASSERT_EQ(gvs_client_get(&s->c), 0);
    return 0;
}

/* The fake server ends when the test's process exits and closes the
 * connection. */
static int close_session(struct session *s)
{
    gvs_listener_close(s->l, 0);
    test_gvsd_stop(&s->g);
    return 0;
}

/* Sends a request for a reply of body_len bytes (tail pattern seed). */
static int ask(struct gvs_client *c, uint32_t body_len, uint32_t seed,
               enum how how, uint64_t *id)
{
    uint8_t req[9];
    for (int i = 0; i < 4; i++) {
        req[i] = (uint8_t)(body_len >> (8 * i));
        req[4 + i] = (uint8_t)(seed >> (8 * i));
    }
    req[8] = (uint8_t)how;
    struct iovec iov = {req, sizeof(req)};
    gvs_client_lock(c);
    int rc = gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, 0, &iov,
                                    1, id);
    gvs_client_unlock(c);
    return rc;
}

/* A conforming reply read the usual way: the stream is in step. */
static int in_step(struct gvs_client *c)
{
    struct landing l;
    struct gvs_buf *reply = gvs_buf_new(64);
    uint64_t id;
    int into;
    poison(&l);
    ASSERT_EQ(ask(c, HEAD + TAIL, 9, REPLY_NOW, &id), 0);
    ASSERT_EQ(gvs_client_expect_into(c, id, HEAD, tail_of(&l), TAIL), 0);
    ASSERT_EQ(gvs_client_wait_into(c, id, reply, &into), 0);
    ASSERT_EQ(into, 1);
    ASSERT_EQ(gvs_buf_len(reply), HEAD);
    ASSERT(landed(&l, 9));
    gvs_buf_free(reply);
    return 0;
}

TEST_IMPL(client_into_tail)
{
    struct session s;
    struct landing l[4];
    struct gvs_buf *reply = gvs_buf_new(64);
    uint64_t id[4];
    int into;
    ASSERT_EQ(open_session(&s), 0);
    for (int i = 0; i < 4; i++)
        poison(&l[i]);

    /* Announced before the reply came, waited for after: the tail went
     * in place while nobody waited; the head was kept. */
    ASSERT_EQ(ask(s.c, HEAD + TAIL, 1, REPLY_AFTER_NEXT, &id[0]), 0);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[0], HEAD, tail_of(&l[0]), TAIL),
              0);
    ASSERT_EQ(ask(s.c, HEAD + TAIL, 2, REPLY_NOW, &id[1]), 0);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[1], HEAD, tail_of(&l[1]), TAIL),
              0);
    ASSERT_EQ(gvs_client_wait_into(s.c, id[1], reply, &into), 0);
    ASSERT_EQ(into, 1);
    ASSERT(landed(&l[1], 2));
    ASSERT_EQ(gvs_client_wait_into(s.c, id[0], reply, &into), 0);
    ASSERT_EQ(into, 1);
    ASSERT(landed(&l[0], 1));
    ASSERT_EQ(gvs_buf_len(reply), HEAD);
    ASSERT_MEM_EQ(gvs_buf_ptr(reply), "\0\0\0\0\x64\0\0\0", HEAD);

    /* Announced after the reply was read (whole, kept): the wait copies
     * the tail out. */
    ASSERT_EQ(ask(s.c, HEAD + TAIL, 3, REPLY_NOW, &id[2]), 0);
    ASSERT_EQ(ask(s.c, 0, 0, REPLY_NOW, &id[3]), 0);
    ASSERT_EQ(gvs_client_wait(s.c, id[3], reply), 0);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[2], HEAD, tail_of(&l[2]), TAIL),
              0);
    ASSERT(untouched(&l[2]));
    ASSERT_EQ(gvs_client_wait_into(s.c, id[2], reply, &into), 0);
    ASSERT_EQ(into, 1);
    ASSERT_EQ(gvs_buf_len(reply), HEAD);
    ASSERT(landed(&l[2], 3));

    /* Waited for first: straight into place; an empty tail splits too. */
    ASSERT_EQ(in_step(s.c), 0);
    ASSERT_EQ(ask(s.c, HEAD, 4, REPLY_NOW, &id[0]), 0);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[0], HEAD, NULL, 0), 0);
    ASSERT_EQ(gvs_client_wait_into(s.c, id[0], reply, &into), 0);
    ASSERT_EQ(into, 1);
    ASSERT_EQ(gvs_buf_len(reply), HEAD);

    /* Misuse. */
    ASSERT_EQ(ask(s.c, HEAD + TAIL, 5, REPLY_NOW, &id[0]), 0);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[0], HEAD, NULL, TAIL),
              GVS_E_INVAL);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[0], SIZE_MAX, tail_of(&l[3]),
                                     TAIL),
              GVS_E_INVAL);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[0] + 100, HEAD, tail_of(&l[3]),
                                     TAIL),
              GVS_E_INVAL);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[0], HEAD, tail_of(&l[3]), TAIL),
              0);
    ASSERT_EQ(gvs_client_expect_into(s.c, id[0], HEAD, tail_of(&l[3]), TAIL),
              GVS_E_INVAL);
    ASSERT_EQ(gvs_client_wait_into(s.c, id[0], reply, NULL), 0);
    ASSERT(landed(&l[3], 5));
    ASSERT_EQ(gvs_client_wait_into(s.c, id[0], reply, &into), GVS_E_INVAL);
    ASSERT_EQ(into, 0);
    gvs_buf_free(reply);
    return close_session(&s);
}

/* One reply of body_len bytes, announced as HEAD + TAIL and waited for
 * with a reply buffer of reply_max bytes: what the wait returns, and the
 * tail must stay untouched. */
static int mismatch(struct gvs_client *c, uint32_t body_len, size_t reply_max,
                    int kept, int want_rc)
{
    struct landing l;
    struct gvs_buf *reply = gvs_buf_new(reply_max);
    uint64_t id, other;
    int into = 1;
    poison(&l);
    ASSERT_EQ(ask(c, body_len, 6, REPLY_NOW, &id), 0);
    if (kept) {
        /* Read whole before the announcement. */
        ASSERT_EQ(ask(c, 0, 0, REPLY_NOW, &other), 0);
        ASSERT_EQ(gvs_client_wait(c, other, reply), 0);
    }
    ASSERT_EQ(gvs_client_expect_into(c, id, HEAD, tail_of(&l), TAIL), 0);
    ASSERT_EQ(gvs_client_wait_into(c, id, reply, &into), want_rc);
    ASSERT_EQ(into, 0);
    ASSERT(untouched(&l));
    if (want_rc == 0) {
        uint8_t *want = malloc(body_len ? body_len : 1);
        ASSERT(want != NULL);
        body_of(want, body_len, 6);
        ASSERT_EQ(gvs_buf_len(reply), body_len);
        ASSERT_MEM_EQ(gvs_buf_ptr(reply), want, body_len);
        free(want);
    }
    gvs_buf_free(reply);
    return 0;
}

TEST_IMPL(client_into_mismatch)
{
    struct session s;
    ASSERT_EQ(open_session(&s), 0);
    for (int kept = 0; kept <= 1; kept++) {
        /* A byte short or long, a failure's bare result, nothing. */
        ASSERT_EQ(mismatch(s.c, HEAD + TAIL - 1, 4096, kept, 0), 0);
        ASSERT_EQ(mismatch(s.c, HEAD + TAIL + 1, 4096, kept, 0), 0);
        ASSERT_EQ(mismatch(s.c, 4, 4096, kept, 0), 0);
        ASSERT_EQ(mismatch(s.c, 0, 4096, kept, 0), 0);
        /* Too big for the reply buffer, tail or not: dropped, in step. */
        ASSERT_EQ(mismatch(s.c, HEAD + TAIL + (1u << 20), 4096, kept,
                           GVS_E_TOOBIG),
                  0);
        ASSERT_EQ(mismatch(s.c, HEAD + TAIL, HEAD - 1, kept, GVS_E_TOOBIG),
                  0);
        ASSERT_EQ(in_step(s.c), 0);
    }
    return close_session(&s);
}

/* A server that dies in the middle of a tail: the wait fails and nothing
 * past the tail is written. */
TEST_IMPL(client_into_cut)
{
    struct session s;
    struct landing l;
    struct gvs_buf *reply = gvs_buf_new(64);
    uint64_t id, next;
    int into = 1;
    ASSERT_EQ(open_session(&s), 0);
    poison(&l);
    ASSERT_EQ(ask(s.c, HEAD + TAIL, 7, REPLY_CUT, &id), 0);
    ASSERT_EQ(gvs_client_expect_into(s.c, id, HEAD, tail_of(&l), TAIL), 0);
    ASSERT_EQ(ask(s.c, 0, 0, REPLY_NOW, &next), 0);
    ASSERT_EQ(gvs_client_wait_into(s.c, id, reply, &into), GVS_E_PROTO);
    ASSERT_EQ(into, 0);
    ASSERT_EQ(gvs_client_wait(s.c, next, reply), GVS_E_PROTO);
    for (size_t i = 0; i < GUARD; i++) {
        ASSERT_EQ(l.bytes[i], POISON);
        ASSERT_EQ(l.bytes[GUARD + TAIL + i], POISON);
    }
    int status;
    ASSERT_EQ(waitpid(s.server, &status, 0), s.server);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    gvs_buf_free(reply);
    return close_session(&s);
}
