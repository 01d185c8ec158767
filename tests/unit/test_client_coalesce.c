/* Coalesced posts (client/outbuf.c): order on the wire across threads,
 * the flusher, fork, and the paths that write each request at once
 * (GVS_COALESCE=0, shm://).  A hand-played server checks what arrives
 * byte for byte; a real gvsd checks that it is served. */
#include <pthread.h>
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

#define WRITERS 8
#define BURST 1000u
/* Above the client's 64 KiB output buffer: written on its own. */
#define BIG_BODY ((size_t)100 << 10)
#define BLOCK_MS 20000u

static const struct gvs_client_plugin echo_plugin = {
    ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};

static void use_server(const char *uri)
{
    setenv("GVS_CONFIG", "/dev/null", 1);
    setenv("GVS_SERVER", uri, 1);
}

static void put_u32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

/* Requests to the hand-played server carry a tag, writer << 24 | the
 * writer's sequence number, then pattern bytes derived from it. */
static uint8_t pattern(uint32_t tag, size_t k)
{
    return (uint8_t)(tag * 31u + k);
}

/* The hand-played server's view of one writer. */
struct writer_seen {
    uint32_t lane; /* 0 until its first request */
    uint32_t next; /* sequence number expected next */
};

/* What is wrong with a request: NULL when it keeps its writer's order
 * and lane and carries its pattern. */
static const char *check_request(const struct gvs_frame_hdr *h,
                                 const struct gvs_buf *b,
                                 struct writer_seen *w)
{
    const uint8_t *p = gvs_buf_ptr(b);
    size_t len = gvs_buf_len(b);
    if (len < 4)
        return "no tag";
    uint32_t tag = get_u32(p), who = tag >> 24, seq = tag & 0xffffffu;
    if (who >= WRITERS || seq != w[who].next)
        return "writer's sequence broken";
    if (w[who].lane != 0 && w[who].lane != h->lane)
        return "writer changed lanes";
    w[who].lane = h->lane;
    w[who].next++;
    for (size_t k = 4; k < len; k++)
        if (p[k] != pattern(tag, k))
            return "body corrupt";
    return NULL;
}

static int reply(struct gvs_conn *conn, struct gvs_frame_hdr *h,
                 const struct gvs_buf *body)
{
    h->flags = GVS_F_REPLY;
    return gvs_frame_send(conn, h, body);
}

static int fake_handshake(struct gvs_conn *conn, struct gvs_buf *b)
{
    struct gvs_frame_hdr h;
    struct gvs_hello hello;
    struct gvs_hello_reply r = {.version = GVS_PROTO_VERSION, .session = 1};
    int rc = gvs_frame_recv(conn, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (rc == 0)
        rc = h.op == GVS_CTL_HELLO ? gvs_hello_decode(b, &hello) : GVS_E_PROTO;
    gvs_buf_reset(b);
    if (rc == 0)
        rc = gvs_hello_reply_encode(&r, b);
    return rc == 0 ? reply(conn, &h, b) : rc;
}

/* The hand-played server's life, in a forked child: request ids must
 * count up from 1 with no gap (the order the client numbered them in,
 * under its lock) and each writer's tags in order.  ECHO calls are
 * echoed; COUNT is answered with u64 requests seen before it and u64
 * faults found (the first is described on stderr). */
static void fake_serve(struct gvs_listener *l)
{
    struct gvs_conn *conn;
    struct gvs_buf *b = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    struct gvs_buf *out = gvs_buf_new(64);
    struct writer_seen w[WRITERS] = {{0}};
    uint64_t next_id = 1, seen = 0, faults = 0;
    if (b == NULL || out == NULL || gvs_accept(l, &conn) < 0 ||
        fake_handshake(conn, b) < 0)
        _exit(1);
    for (;;) {
        struct gvs_frame_hdr h;
        if (gvs_frame_recv(conn, GVS_FRAME_MAX_DEFAULT, &h, b) < 0)
            _exit(0);
        const char *fault = h.id != next_id++ ? "id out of order" : NULL;
        if (h.op != ECHO_OP_COUNT) {
            const char *bad = check_request(&h, b, w);
            fault = fault != NULL ? fault : bad;
            seen++;
        }
        if (fault != NULL && faults++ == 0)
            fprintf(stderr, "fake server: request %" PRIu64 " lane %u: %s\n",
                    h.id, h.lane, fault);
        if (h.op == ECHO_OP_COUNT) {
            gvs_buf_reset(out);
            if (gvs_buf_put_u64(out, seen) < 0 ||
                gvs_buf_put_u64(out, faults) < 0 || reply(conn, &h, out) < 0)
                _exit(1);
            continue;
        }
        if (!(h.flags & GVS_F_NOREPLY) && reply(conn, &h, b) < 0)
            _exit(1);
    }
}

/* Starts the hand-played server on g's unix socket, a plain one (writes
 * to shm://'s rings are not coalesced); g->pid is its pid, so
 * test_gvsd_stop ends it. */
static int start_fake(struct test_gvsd *g)
{
    struct gvs_listener *l;
    memset(g, 0, sizeof(*g));
    setenv("GVS_UNIX_RINGS", "0", 1);
    ASSERT_EQ(test_gvsd_init(g), 0);
    ASSERT_EQ(gvs_listen(g->unix_uri, &l), 0);
    fflush(NULL);
    g->pid = fork();
    ASSERT_GE(g->pid, 0);
    if (g->pid == 0)
        fake_serve(l);
    gvs_listener_close(l, 1);
    use_server(g->unix_uri);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    return 0;
}

/* One tagged request of len >= 4 bytes to the hand-played server: a
 * posted NOTE, or an ECHO call whose reply is checked. */
static int send_tagged(uint32_t tag, size_t len, int post)
{
    struct gvs_client *c;
    uint8_t *body = malloc(len);
    struct gvs_buf *rep = gvs_buf_new(len + 16);
    int rc = body != NULL && rep != NULL ? gvs_client_get(&c) : GVS_E_NOMEM;
    if (rc == 0) {
        put_u32(body, tag);
        for (size_t k = 4; k < len; k++)
            body[k] = pattern(tag, k);
        struct iovec iov = {body, len};
        rc = post ? gvs_client_post(c, ECHO_PLUGIN_ID, ECHO_OP_NOTE, &iov, 1)
                  : gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov, 1,
                                    rep);
    }
    if (rc == 0 && !post &&
        (gvs_buf_len(rep) != len || memcmp(gvs_buf_ptr(rep), body, len) != 0))
        rc = GVS_E_PROTO;
    free(body);
    gvs_buf_free(rep);
    return rc;
}

/* The hand-played server's verdict: requests seen and faults. */
static int fake_verdict(uint64_t *seen, uint64_t *faults)
{
    struct gvs_client *c;
    struct gvs_buf *rep = gvs_buf_new(64);
    int rc = gvs_client_get(&c);
    if (rc == 0)
        rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_COUNT, NULL, 0, rep);
    if (rc == 0)
        rc = gvs_buf_get_u64(rep, seen);
    if (rc == 0)
        rc = gvs_buf_get_u64(rep, faults);
    gvs_buf_free(rep);
    return rc;
}

/* Body size of a writer's i-th request: mostly a launch's few bytes,
 * now and then a kilobyte, and rarely more than the whole buffer. */
static size_t body_size(uint32_t i)
{
    if (i % 97 == 96)
        return BIG_BODY;
    return i % 13 == 12 ? 1000 : 4 + i % 40;
}

/* A burst of posts, then a call: all arrive, in order, the call's reply
 * is right, and the burst took fewer writes than posts. */
TEST_IMPL(client_coalesce_order)
{
    struct test_gvsd g;
    struct gvs_client_stats st;
    uint64_t seen, faults;
    ASSERT_EQ(start_fake(&g), 0);
    for (uint32_t i = 0; i < BURST; i++)
        ASSERT_EQ(send_tagged(i, body_size(i), 1), 0);
    ASSERT_EQ(send_tagged(BURST, 64, 0), 0);
    ASSERT_EQ(fake_verdict(&seen, &faults), 0);
    ASSERT_U64_EQ(seen, BURST + 1);
    ASSERT_U64_EQ(faults, 0);
    gvs_client_get_stats(&st);
    ASSERT_U64_EQ(st.posts, BURST);
    ASSERT_U64_EQ(st.round_trips, 2);
    ASSERT_LT(gvs_client_writes(), BURST);
    test_gvsd_stop(&g);
    return 0;
}

#define ROUNDS 300u

struct writer {
    uint32_t index;
    int rc;
};

/* Posts one to three requests a round and calls every fifth round. */
static void *write_rounds(void *arg)
{
    struct writer *w = arg;
    uint32_t seq = 0;
    for (uint32_t r = 0; r < ROUNDS && w->rc == 0; r++) {
        for (uint32_t k = 0; k <= r % 3 && w->rc == 0; k++, seq++)
            w->rc = send_tagged(w->index << 24 | seq, body_size(seq), 1);
        if (w->rc == 0 && r % 5 == 4) {
            w->rc = send_tagged(w->index << 24 | seq, 4 + r % 50, 0);
            seq++;
        }
    }
    return NULL;
}

static uint32_t rounds_requests(void)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < ROUNDS; r++)
        n += r % 3 + 1 + (r % 5 == 4);
    return n;
}

/* Threads posting and calling at once: each thread's requests keep its
 * order, and ids show one global order with none lost. */
TEST_IMPL(client_coalesce_threads)
{
    struct test_gvsd g;
    pthread_t th[WRITERS];
    struct writer w[WRITERS];
    uint64_t seen, faults;
    ASSERT_EQ(start_fake(&g), 0);
    for (uint32_t i = 0; i < WRITERS; i++) {
        w[i] = (struct writer){i, 0};
        ASSERT_EQ(pthread_create(&th[i], NULL, write_rounds, &w[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        ASSERT_EQ(w[i].rc, 0);
    }
    ASSERT_EQ(fake_verdict(&seen, &faults), 0);
    ASSERT_U64_EQ(seen, (uint64_t)WRITERS * rounds_requests());
    ASSERT_U64_EQ(faults, 0);
    test_gvsd_stop(&g);
    return 0;
}

enum transport { ON_UNIX, ON_TCP, ON_SHM };

static int start_echo_server(struct test_gvsd *g, enum transport t)
{
    memset(g, 0, sizeof(*g));
    ASSERT_EQ(test_gvsd_start(g, NULL), 0);
    use_server(t == ON_SHM ? g->shm_uri
                           : t == ON_TCP ? g->tcp_uri : g->unix_uri);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    return 0;
}

static int post_u32(uint16_t op, uint32_t v, int with_arg)
{
    struct gvs_client *c;
    uint8_t b[4];
    put_u32(b, v);
    struct iovec iov = {b, with_arg ? 4 : 0};
    int rc = gvs_client_get(&c);
    return rc < 0 ? rc : gvs_client_post(c, ECHO_PLUGIN_ID, op, &iov, 1);
}

static int count_notes(uint64_t *notes, uint64_t *sum)
{
    struct gvs_client *c;
    struct gvs_buf *rep = gvs_buf_new(64);
    int rc = gvs_client_get(&c);
    if (rc == 0)
        rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_COUNT, NULL, 0, rep);
    if (rc == 0)
        rc = gvs_buf_get_u64(rep, notes);
    if (rc == 0)
        rc = gvs_buf_get_u64(rep, sum);
    gvs_buf_free(rep);
    return rc;
}

/* BURST posted NOTEs then a COUNT against gvsd: every note served; the
 * writes it took in *writes.  unix on a plain socket (writes to shm://'s
 * rings are not coalesced). */
static int burst_on(enum transport t, uint64_t *writes)
{
    struct test_gvsd g;
    struct gvs_client_stats st;
    uint64_t notes, sum;
    setenv("GVS_UNIX_RINGS", "0", 1);
    ASSERT_EQ(start_echo_server(&g, t), 0);
    for (uint32_t i = 1; i <= BURST; i++)
        ASSERT_EQ(post_u32(ECHO_OP_NOTE, i, 1), 0);
    ASSERT_EQ(count_notes(&notes, &sum), 0);
    ASSERT_U64_EQ(notes, BURST);
    ASSERT_U64_EQ(sum, (uint64_t)BURST * (BURST + 1) / 2);
    gvs_client_get_stats(&st);
    ASSERT_U64_EQ(st.posts, BURST);
    ASSERT_U64_EQ(st.round_trips, 1);
    *writes = gvs_client_writes();
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* Posts issued in a tight loop leave in a few writes. */
TEST_IMPL(client_coalesce_burst)
{
    uint64_t writes;
    ASSERT_EQ(burst_on(ON_UNIX, &writes), 0);
    ASSERT_LT(writes, BURST / 2);
    return 0;
}

TEST_IMPL(client_coalesce_tcp)
{
    uint64_t writes;
    ASSERT_EQ(burst_on(ON_TCP, &writes), 0);
    ASSERT_LT(writes, BURST / 2);
    return 0;
}

/* GVS_COALESCE=0: one write per request, as without coalescing. */
TEST_IMPL(client_coalesce_off)
{
    uint64_t writes;
    setenv("GVS_COALESCE", "0", 1);
    ASSERT_EQ(burst_on(ON_UNIX, &writes), 0);
    ASSERT_U64_EQ(writes, BURST + 1);
    return 0;
}

/* shm:// writes are copies into a ring already: each post is written
 * at once. */
TEST_IMPL(client_coalesce_shm)
{
    uint64_t writes;
    ASSERT_EQ(burst_on(ON_SHM, &writes), 0);
    ASSERT_U64_EQ(writes, BURST + 1);
    return 0;
}

struct blocked {
    uint32_t released;
    int rc;
};

static void *block_call(void *arg)
{
    struct blocked *b = arg;
    struct gvs_client *c;
    struct gvs_buf *rep = gvs_buf_new(64);
    uint8_t ms[4];
    put_u32(ms, BLOCK_MS);
    struct iovec iov = {ms, sizeof(ms)};
    b->rc = gvs_client_get(&c);
    if (b->rc == 0)
        b->rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_BLOCK, &iov, 1,
                                rep);
    if (b->rc == 0)
        b->rc = gvs_buf_get_u32(rep, &b->released);
    gvs_buf_free(rep);
    return NULL;
}

/* A post with nothing after it reaches the server anyway: the RELEASE
 * posted here is the only thing that ends a BLOCK written before it. */
TEST_IMPL(client_coalesce_flusher)
{
    struct test_gvsd g;
    struct gvs_client_stats st;
    struct blocked b = {0};
    pthread_t th;
    ASSERT_EQ(start_echo_server(&g, ON_UNIX), 0);
    ASSERT_EQ(pthread_create(&th, NULL, block_call, &b), 0);
    /* The BLOCK has been written once its bytes are counted. */
    long long deadline = test_now_ms() + 5000;
    do {
        usleep(1000);
        gvs_client_get_stats(&st);
    } while (st.bytes_sent == 0 && test_now_ms() < deadline);
    ASSERT_GT(st.bytes_sent, 0);
    long long start = test_now_ms();
    ASSERT_EQ(post_u32(ECHO_OP_RELEASE, 0, 0), 0);
    pthread_join(th, NULL);
    long long took = test_now_ms() - start;
    ASSERT_EQ(b.rc, 0);
    ASSERT_EQ(b.released, 1);
    ASSERT_LT(took, 2000);
    gvs_client_get_stats(&st);
    ASSERT_U64_EQ(st.posts, 1);
    ASSERT_U64_EQ(gvs_client_writes(), 2);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

#define FORK_POSTS 200u

/* In the forked child: a session of its own that sees its own posts
 * only, none of the parent's. */
static int fork_child(void)
{
    uint64_t notes, sum;
    for (uint32_t i = 0; i < 3; i++)
        ASSERT_EQ(post_u32(ECHO_OP_NOTE, 1000, 1), 0);
    ASSERT_EQ(count_notes(&notes, &sum), 0);
    ASSERT_U64_EQ(notes, 3);
    ASSERT_U64_EQ(sum, 3000);
    return 0;
}

/* Posts buffered when the process forks belong to the parent's session:
 * they reach it once, and never the child's. */
TEST_IMPL(client_coalesce_fork)
{
    struct test_gvsd g;
    uint64_t notes, sum;
    ASSERT_EQ(start_echo_server(&g, ON_UNIX), 0);
    for (uint32_t i = 0; i < FORK_POSTS; i++)
        ASSERT_EQ(post_u32(ECHO_OP_NOTE, 1, 1), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fork_child());
    ASSERT_GT(pid, 0);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(count_notes(&notes, &sum), 0);
    ASSERT_U64_EQ(notes, FORK_POSTS);
    ASSERT_U64_EQ(sum, FORK_POSTS);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
