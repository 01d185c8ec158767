/* libgvs-client's threads: every thread a lane, replies to concurrent
 * waiters, a blocked thread never holding up the others, notifications
 * on their own thread. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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

#define BLOCK_MS 10000u

static const struct gvs_client_plugin echo_plugin = {
    ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};

static int start_echo_server(struct test_gvsd *g)
{
    memset(g, 0, sizeof(*g));
    ASSERT_EQ(test_gvsd_start(g, NULL), 0);
    setenv("GVS_CONFIG", "/dev/null", 1);
    setenv("GVS_SERVER", g->unix_uri, 1);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    return 0;
}

static void put_u32(uint8_t b[4], uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

/* A call whose request is one u32 (or nothing when with_arg is 0) and
 * whose reply starts with a u32, returned in *out (may be NULL). */
static int call_u32(uint16_t op, int with_arg, uint32_t arg, uint32_t *out)
{
    struct gvs_client *c;
    struct gvs_buf *reply = gvs_buf_new(64);
    uint8_t b[4];
    put_u32(b, arg);
    struct iovec iov = {b, with_arg ? 4 : 0};
    int rc = gvs_client_get(&c);
    if (rc == 0)
        rc = gvs_client_call(c, ECHO_PLUGIN_ID, op, &iov, 1, reply);
    if (rc == 0 && out != NULL)
        rc = gvs_buf_get_u32(reply, out);
    gvs_buf_free(reply);
    return rc;
}

static int count_notes(uint64_t *notes, uint64_t *sum)
{
    struct gvs_client *c;
    struct gvs_buf *reply = gvs_buf_new(64);
    int rc = gvs_client_get(&c);
    if (rc == 0)
        rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_COUNT, NULL, 0,
                             reply);
    if (rc == 0)
        rc = gvs_buf_get_u64(reply, notes);
    if (rc == 0)
        rc = gvs_buf_get_u64(reply, sum);
    gvs_buf_free(reply);
    return rc;
}

struct lane_probe {
    uint32_t lane;
    uint32_t seen; /* the lane the server saw */
    int rc;
};

static void *probe_lane(void *arg)
{
    struct lane_probe *p = arg;
    p->lane = gvs_client_lane();
    p->rc = call_u32(ECHO_OP_PING_LANE, 0, 0, &p->seen);
    return NULL;
}

TEST_IMPL(client_lanes)
{
    struct test_gvsd g;
    struct lane_probe p[4];
    pthread_t th[4];
    ASSERT_EQ(start_echo_server(&g), 0);
    uint32_t mine = gvs_client_lane();
    ASSERT_GE(mine, 1);
    ASSERT_EQ(gvs_client_lane(), mine);
    uint32_t seen;
    ASSERT_EQ(call_u32(ECHO_OP_PING_LANE, 0, 0, &seen), 0);
    ASSERT_EQ(seen, mine);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, probe_lane, &p[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ASSERT_EQ(p[i].rc, 0);
        ASSERT_EQ(p[i].seen, p[i].lane);
        ASSERT_NE(p[i].lane, mine);
        for (int j = 0; j < i; j++)
            ASSERT_NE(p[i].lane, p[j].lane);
    }
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

struct blocker {
    uint32_t released;
    int rc;
    _Atomic int done;
};

static void *block_call(void *arg)
{
    struct blocker *b = arg;
    b->rc = call_u32(ECHO_OP_BLOCK, 1, BLOCK_MS, &b->released);
    atomic_store(&b->done, 1);
    return NULL;
}

/* One thread waits in a blocking op; the others' calls complete
 * meanwhile, and one of them releases it. */
TEST_IMPL(client_blocked_thread)
{
    struct test_gvsd g;
    struct blocker b = {0};
    pthread_t th;
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(call_u32(ECHO_OP_PING_LANE, 0, 0, NULL), 0);
    long long start = test_now_ms();
    ASSERT_EQ(pthread_create(&th, NULL, block_call, &b), 0);
    usleep(100000);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(call_u32(ECHO_OP_PING_LANE, 0, 0, NULL), 0);
    ASSERT(!atomic_load(&b.done));
    ASSERT_EQ(call_u32(ECHO_OP_RELEASE, 0, 0, NULL), 0);
    pthread_join(th, NULL);
    ASSERT_EQ(b.rc, 0);
    ASSERT_EQ(b.released, 1);
    ASSERT_LT(test_now_ms() - start, BLOCK_MS / 2);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

struct releaser {
    uint64_t notes;
    int rc;
};

static void *count_then_release(void *arg)
{
    struct releaser *r = arg;
    uint64_t sum;
    r->rc = count_notes(&r->notes, &sum);
    if (r->rc == 0)
        r->rc = call_u32(ECHO_OP_RELEASE, 0, 0, NULL);
    return NULL;
}

/* A lane's requests are served in order: a post behind the lane's
 * blocking request waits for it (another thread does not see it yet),
 * and the lane's next call sees it. */
TEST_IMPL(client_lane_order)
{
    struct test_gvsd g;
    struct gvs_client *c;
    struct gvs_buf *reply = gvs_buf_new(64);
    struct releaser r = {0};
    pthread_t th;
    uint64_t id, notes, sum;
    uint8_t ms[4], five[4];
    put_u32(ms, BLOCK_MS);
    put_u32(five, 5);
    struct iovec block = {ms, 4}, note = {five, 4};
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    gvs_client_lock(c);
    ASSERT_EQ(gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_BLOCK, 0,
                                     &block, 1, &id),
              0);
    gvs_client_unlock(c);
    ASSERT_EQ(gvs_client_post(c, ECHO_PLUGIN_ID, ECHO_OP_NOTE, &note, 1), 0);
    usleep(100000);
    ASSERT_EQ(pthread_create(&th, NULL, count_then_release, &r), 0);
    pthread_join(th, NULL);
    ASSERT_EQ(r.rc, 0);
    ASSERT_U64_EQ(r.notes, 0);
    ASSERT_EQ(gvs_client_wait(c, id, reply), 0);
    uint32_t released;
    ASSERT_EQ(gvs_buf_get_u32(reply, &released), 0);
    ASSERT_EQ(released, 1);
    ASSERT_EQ(count_notes(&notes, &sum), 0);
    ASSERT_U64_EQ(notes, 1);
    ASSERT_U64_EQ(sum, 5);
    /* Without a blocking request: a post, then a call, in order. */
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(gvs_client_post(c, ECHO_PLUGIN_ID, ECHO_OP_NOTE, &note, 1),
                  0);
    ASSERT_EQ(count_notes(&notes, &sum), 0);
    ASSERT_U64_EQ(notes, 101);
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

#define SLOW_NOTE_MS 300u

struct counted {
    uint64_t notes;
    int rc;
};

static void *count_sync(void *arg)
{
    struct counted *r = arg;
    struct gvs_client *c;
    struct gvs_buf *reply = gvs_buf_new(64);
    r->rc = gvs_client_get(&c);
    if (r->rc == 0)
        r->rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_COUNT_SYNC, NULL,
                                0, reply);
    if (r->rc == 0)
        r->rc = gvs_buf_get_u64(reply, &r->notes);
    gvs_buf_free(reply);
    return NULL;
}

/* A post of one thread that gvsd is still running orders the blocking
 * request another thread makes after it: the request must not pass it
 * on a free lane thread (as a synchronization must not return before a
 * launch posted ahead of it is in its stream). */
TEST_IMPL(client_blocking_after_running_post)
{
    struct test_gvsd g;
    struct gvs_client *c;
    struct counted r = {0};
    pthread_t th;
    uint8_t ms[4];
    put_u32(ms, SLOW_NOTE_MS);
    struct iovec slow = {ms, 4};
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    long long start = test_now_ms();
    ASSERT_EQ(gvs_client_post(c, ECHO_PLUGIN_ID, ECHO_OP_SLOW_NOTE, &slow, 1),
              0);
    /* Long enough for gvsd to be running the post, not to finish it. */
    usleep(SLOW_NOTE_MS * 1000 / 3);
    ASSERT_EQ(pthread_create(&th, NULL, count_sync, &r), 0);
    pthread_join(th, NULL);
    ASSERT_EQ(r.rc, 0);
    ASSERT_U64_EQ(r.notes, 1);
    ASSERT_GE(test_now_ms() - start, SLOW_NOTE_MS);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

#define TICKS 200u
#define CALL_AT 50u

struct ticks {
    pthread_mutex_t lock;
    uint32_t next;      /* the tick expected next */
    int out_of_order;
    pthread_t thread;   /* where the handler ran */
    int threads;        /* distinct threads seen (1 expected) */
    int call_rc;        /* of the call made from the handler */
};

static struct ticks ticks = {.lock = PTHREAD_MUTEX_INITIALIZER,
                             .call_rc = 1};

static void on_tick(uint16_t op, struct gvs_buf *body, void *arg)
{
    struct ticks *t = arg;
    uint32_t i = 0xffffffffu;
    if (op != ECHO_NOTE_TICK || gvs_buf_get_u32(body, &i) < 0)
        i = 0xffffffffu;
    /* A handler may call the server and wait: the receiver goes on. */
    int rc = i == CALL_AT ? call_u32(ECHO_OP_PING_LANE, 0, 0, NULL) : 0;
    pthread_mutex_lock(&t->lock);
    if (t->threads == 0 || !pthread_equal(t->thread, pthread_self()))
        t->threads++;
    t->thread = pthread_self();
    if (i != t->next)
        t->out_of_order = 1;
    t->next++;
    if (i == CALL_AT)
        t->call_rc = rc;
    pthread_mutex_unlock(&t->lock);
}

TEST_IMPL(client_notifications)
{
    struct test_gvsd g;
    ASSERT_EQ(gvs_client_on_notify(ECHO_PLUGIN_ID, on_tick, &ticks),
              GVS_E_INVAL);
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_on_notify(ECHO_PLUGIN_ID, on_tick, &ticks), 0);
    ASSERT_EQ(call_u32(ECHO_OP_NOTIFY_ME, 1, TICKS, NULL), 0);
    long long deadline = test_now_ms() + 5000;
    uint32_t got;
    do {
        usleep(1000);
        pthread_mutex_lock(&ticks.lock);
        got = ticks.next;
        pthread_mutex_unlock(&ticks.lock);
    } while (got < TICKS && test_now_ms() < deadline);
    ASSERT_EQ(got, TICKS);
    ASSERT_EQ(ticks.out_of_order, 0);
    ASSERT_EQ(ticks.threads, 1);
    ASSERT(!pthread_equal(ticks.thread, pthread_self()));
    ASSERT_EQ(ticks.call_rc, 0);
    /* Handlers are fixed once connected. */
    ASSERT_EQ(gvs_client_on_notify(ECHO_PLUGIN_ID, on_tick, &ticks),
              GVS_E_INVAL);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

static struct ticks inline_ticks = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_inline_tick(uint16_t op, struct gvs_buf *body, void *arg)
{
    struct ticks *t = arg;
    uint32_t i = 0xffffffffu;
    if (op != ECHO_NOTE_TICK || gvs_buf_get_u32(body, &i) < 0)
        i = 0xffffffffu;
    pthread_mutex_lock(&t->lock);
    if (t->threads == 0 || !pthread_equal(t->thread, pthread_self()))
        t->threads++;
    t->thread = pthread_self();
    if (i != t->next)
        t->out_of_order = 1;
    t->next++;
    pthread_mutex_unlock(&t->lock);
}

/* Inline handlers run before the reply that follows their notifications
 * reaches its caller. */
TEST_IMPL(client_inline_notifications)
{
    struct test_gvsd g;
    ASSERT_EQ(gvs_client_on_notify_inline(ECHO_PLUGIN_ID, ECHO_NOTE_TICK,
                                          on_inline_tick, &inline_ticks),
              GVS_E_INVAL);
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_on_notify(ECHO_PLUGIN_ID, on_tick, &ticks), 0);
    ASSERT_EQ(gvs_client_on_notify_inline(ECHO_PLUGIN_ID, ECHO_NOTE_TICK,
                                          on_inline_tick, &inline_ticks),
              0);
    ASSERT_EQ(call_u32(ECHO_OP_NOTIFY_ME, 1, TICKS, NULL), 0);
    pthread_mutex_lock(&inline_ticks.lock);
    ASSERT_EQ(inline_ticks.next, TICKS);
    pthread_mutex_unlock(&inline_ticks.lock);
    ASSERT_EQ(inline_ticks.out_of_order, 0);
    ASSERT_EQ(inline_ticks.threads, 1);
    ASSERT(!pthread_equal(inline_ticks.thread, pthread_self()));
    /* The inline handler took the op from the threaded one. */
    pthread_mutex_lock(&ticks.lock);
    ASSERT_EQ(ticks.next, 0);
    pthread_mutex_unlock(&ticks.lock);
    ASSERT_EQ(gvs_client_on_notify_inline(ECHO_PLUGIN_ID, ECHO_NOTE_TICK,
                                          on_inline_tick, &inline_ticks),
              GVS_E_INVAL);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* Where the bytes of ECHO_NOTE_BYTES went: its head's first byte says
 * whether they have a place. */
static struct {
    uint8_t place[256];
    size_t tail;
    int placed, landed, ok;
} into_seen;

static void *into_place(uint16_t op, const void *head, size_t tail_len,
                        void *arg)
{
    (void)op, (void)arg;
    into_seen.placed++;
    into_seen.tail = tail_len;
    return *(const uint8_t *)head == 1 && tail_len <= sizeof(into_seen.place)
               ? into_seen.place
               : NULL;
}

static void into_landed(uint16_t op, void *dst, int ok, void *arg)
{
    (void)op, (void)arg;
    into_seen.landed += dst == into_seen.place;
    into_seen.ok = ok;
}

static int notify_bytes(const uint8_t *body, size_t len)
{
    struct gvs_client *c;
    struct gvs_buf *rep = gvs_buf_new(64);
    struct iovec iov = {(void *)body, len};
    int rc = rep == NULL ? GVS_E_NOMEM : gvs_client_get(&c);
    if (rc == 0)
        rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_NOTIFY_BYTES, &iov,
                             len > 0 ? 1 : 0, rep);
    gvs_buf_free(rep);
    return rc;
}

/* A notification's bytes go straight to the place its head names before
 * the reply after it reaches its caller; bytes with no place, and a body
 * shorter than the head, are read and dropped, the connection in step. */
TEST_IMPL(client_notify_into)
{
    static const struct gvs_notify_into into = {1, into_place, into_landed};
    static const struct gvs_notify_into too_long = {
        GVS_NOTIFY_HEAD_MAX + 1, into_place, into_landed};
    struct test_gvsd g;
    uint8_t body[201];
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_on_notify_into(ECHO_PLUGIN_ID, ECHO_NOTE_BYTES,
                                        &too_long, NULL),
              GVS_E_INVAL);
    ASSERT_EQ(gvs_client_on_notify_into(ECHO_PLUGIN_ID, ECHO_NOTE_BYTES,
                                        &into, NULL),
              0);
    body[0] = 1;
    for (size_t i = 1; i < sizeof(body); i++)
        body[i] = (uint8_t)(i * 13);
    ASSERT_EQ(notify_bytes(body, sizeof(body)), 0);
    ASSERT_EQ(into_seen.placed, 1);
    ASSERT_EQ(into_seen.landed, 1);
    ASSERT_EQ(into_seen.ok, 1);
    ASSERT_EQ(into_seen.tail, sizeof(body) - 1);
    ASSERT_EQ(memcmp(into_seen.place, body + 1, sizeof(body) - 1), 0);
    body[0] = 0;
    ASSERT_EQ(notify_bytes(body, sizeof(body)), 0);
    ASSERT_EQ(into_seen.placed, 2);
    ASSERT_EQ(into_seen.landed, 1);
    ASSERT_EQ(notify_bytes(body, 0), 0);
    ASSERT_EQ(into_seen.placed, 2);
    uint32_t lane;
    ASSERT_EQ(call_u32(ECHO_OP_PING_LANE, 0, 0, &lane), 0);
    ASSERT_EQ(lane, gvs_client_lane());
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A reply too big for the waiter's buffer fails that wait only. */
TEST_IMPL(client_reply_too_big)
{
    struct test_gvsd g;
    struct gvs_client *c;
    struct gvs_buf *small = gvs_buf_new(8);
    uint8_t data[100] = {1};
    struct iovec iov = {data, sizeof(data)};
    uint64_t id;
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    ASSERT_EQ(gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov, 1,
                              small),
              GVS_E_TOOBIG);
    /* Also when the reply was there before the wait. */
    gvs_client_lock(c);
    ASSERT_EQ(gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, 0,
                                     &iov, 1, &id),
              0);
    gvs_client_unlock(c);
    usleep(100000);
    ASSERT_EQ(gvs_client_wait(c, id, small), GVS_E_TOOBIG);
    uint32_t lane;
    ASSERT_EQ(call_u32(ECHO_OP_PING_LANE, 0, 0, &lane), 0);
    ASSERT_EQ(lane, gvs_client_lane());
    gvs_buf_free(small);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

static void *blocked_until_killed(void *arg)
{
    struct blocker *b = arg;
    b->rc = call_u32(ECHO_OP_BLOCK, 1, BLOCK_MS, &b->released);
    return NULL;
}

/* gvsd killed under several waiting threads: all fail at once, and so
 * does every later call. */
TEST_IMPL(client_killed_waiters)
{
    struct test_gvsd g;
    struct blocker b[3] = {0};
    pthread_t th[3];
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(call_u32(ECHO_OP_PING_LANE, 0, 0, NULL), 0);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, blocked_until_killed, &b[i]),
                  0);
    usleep(200000);
    long long start = test_now_ms();
    kill(g.pid, SIGKILL);
    waitpid(g.pid, NULL, 0);
    g.pid = -1;
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        ASSERT_EQ(b[i].rc, GVS_E_CLOSED);
    }
    ASSERT_EQ(call_u32(ECHO_OP_PING_LANE, 0, 0, NULL), GVS_E_CLOSED);
    ASSERT_LT(test_now_ms() - start, 2000);
    test_gvsd_stop(&g);
    return 0;
}
