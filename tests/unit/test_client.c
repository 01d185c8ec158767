/* libgvs-client against a real gvsd with the echo plugin, and against
 * hand-played servers for what gvsd never does. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../client/internal.h"
#include "../plugins/echo.h"
#include "gvs/client.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

#define THREADS 8
#define CALLS_PER_THREAD 100

static const struct gvs_client_plugin echo_plugin = {
    ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};

/* stderr into a pipe until capture_end, which returns what was written. */
struct capture {
    int saved;
    int rfd;
    char text[4096];
};

static int capture_begin(struct capture *c)
{
    int p[2];
    fflush(stderr);
    if (pipe(p) < 0)
        return -1;
    c->saved = dup(STDERR_FILENO);
    dup2(p[1], STDERR_FILENO);
    close(p[1]);
    c->rfd = p[0];
    return 0;
}

static const char *capture_end(struct capture *c)
{
    size_t got = 0;
    ssize_t r;
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    while (got < sizeof(c->text) - 1 &&
           (r = read(c->rfd, c->text + got, sizeof(c->text) - 1 - got)) > 0)
        got += (size_t)r;
    close(c->rfd);
    c->text[got] = '\0';
    return c->text;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s != '\0'; s++)
        n += *s == '\n';
    return n;
}

/* Points the client at uri with no config file in the way. */
static void use_server(const char *uri)
{
    setenv("GVS_CONFIG", "/dev/null", 1);
    setenv("GVS_SERVER", uri, 1);
}

/* The client talks to it over shm when shm is set, else unix. */
static int start_echo_server_on(struct test_gvsd *g, int shm)
{
    memset(g, 0, sizeof(*g));
    ASSERT_EQ(test_gvsd_start(g, NULL), 0);
    use_server(shm ? g->shm_uri : g->unix_uri);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    return 0;
}

static int start_echo_server(struct test_gvsd *g)
{
    return start_echo_server_on(g, 0);
}

static int echo_call(struct gvs_client *c, const void *p, size_t len)
{
    struct gvs_buf *reply = gvs_buf_new(len + 16);
    struct iovec iov = {(void *)p, len};
    int rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov, 1, reply);
    if (rc == 0 && (gvs_buf_len(reply) != len ||
                    memcmp(gvs_buf_ptr(reply), p, len) != 0))
        rc = GVS_E_PROTO;
    gvs_buf_free(reply);
    return rc;
}

static int call_u32(struct gvs_client *c, uint16_t op, uint32_t *out)
{
    struct gvs_buf *reply = gvs_buf_new(64);
    int rc = gvs_client_call(c, ECHO_PLUGIN_ID, op, NULL, 0, reply);
    if (rc == 0)
        rc = gvs_buf_get_u32(reply, out);
    gvs_buf_free(reply);
    return rc;
}

struct get_result {
    int rc;
};

static void *get_thread(void *arg)
{
    struct gvs_client *c;
    ((struct get_result *)arg)->rc = gvs_client_get(&c);
    return NULL;
}

/* Plays the server side of a handshake on an accepted connection. */
static int fake_handshake(struct gvs_conn *conn, struct gvs_hello *hello)
{
    struct gvs_buf *b = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    struct gvs_frame_hdr h;
    struct gvs_hello_reply r = {.version = GVS_PROTO_VERSION, .session = 1};
    int rc = gvs_frame_recv(conn, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (rc == 0)
        rc = h.op == GVS_CTL_HELLO ? gvs_hello_decode(b, hello) : GVS_E_PROTO;
    gvs_buf_reset(b);
    if (rc == 0)
        rc = gvs_hello_reply_encode(&r, b);
    h.flags = GVS_F_REPLY;
    if (rc == 0)
        rc = gvs_frame_send(conn, &h, b);
    gvs_buf_free(b);
    return rc;
}

TEST_IMPL(client_lazy_connect)
{
    struct test_gvsd g = {0};
    struct gvs_listener *l;
    struct gvs_conn *conn;
    struct gvs_hello hello;
    pthread_t th;
    struct get_result res = {1};
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(gvs_listen(g.unix_uri, &l), 0);
    use_server(g.unix_uri);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    ASSERT_STR_EQ(gvs_client_server(), g.unix_uri);
    struct pollfd pfd = {.fd = gvs_listener_fd(l), .events = POLLIN};
    ASSERT_EQ(poll(&pfd, 1, 200), 0);

    ASSERT_EQ(pthread_create(&th, NULL, get_thread, &res), 0);
    ASSERT_EQ(gvs_accept(l, &conn), 0);
    ASSERT_EQ(fake_handshake(conn, &hello), 0);
    pthread_join(th, NULL);
    ASSERT_EQ(res.rc, 0);
    ASSERT_EQ(hello.version, GVS_PROTO_VERSION);
    ASSERT_EQ(hello.pid, getpid());
    ASSERT_STR_EQ(hello.program, "gvs-unit-tests");
    ASSERT_EQ(hello.nplugins, 1);
    ASSERT_EQ(hello.plugins[0].id, ECHO_PLUGIN_ID);
    ASSERT_STR_EQ(hello.plugins[0].name, ECHO_PLUGIN_NAME);
    ASSERT_U64_EQ(hello.plugins[0].table_hash, ECHO_TABLE_HASH);
    /* The session's plugin list is fixed now. */
    struct gvs_client_plugin late = {201, "late", 1};
    ASSERT_EQ(gvs_client_register(&late), GVS_E_INVAL);
    gvs_conn_close(conn);
    gvs_listener_close(l, 0);
    test_gvsd_stop(&g);
    return 0;
}

TEST_IMPL(client_register)
{
    struct gvs_client_plugin p = echo_plugin;
    ASSERT_EQ(gvs_client_register(&p), 0);
    ASSERT_EQ(gvs_client_register(&p), 0);
    p.table_hash++;
    ASSERT_EQ(gvs_client_register(&p), GVS_E_INVAL);
    p = (struct gvs_client_plugin){0, "zero", 1};
    ASSERT_EQ(gvs_client_register(&p), GVS_E_INVAL);
    p = (struct gvs_client_plugin){5, NULL, 1};
    ASSERT_EQ(gvs_client_register(&p), GVS_E_INVAL);
    p = (struct gvs_client_plugin){5, ECHO_PLUGIN_NAME, 1};
    ASSERT_EQ(gvs_client_register(&p), GVS_E_INVAL);
    char names[GVS_MAX_PLUGINS][16];
    for (int i = 1; i < GVS_MAX_PLUGINS; i++) {
        snprintf(names[i], sizeof(names[i]), "p%d", i);
        p = (struct gvs_client_plugin){(uint16_t)i, names[i], 1};
        ASSERT_EQ(gvs_client_register(&p), 0);
    }
    p = (struct gvs_client_plugin){99, "one-too-many", 1};
    ASSERT_EQ(gvs_client_register(&p), GVS_E_TOOBIG);
    return 0;
}

TEST_IMPL(client_no_server)
{
    struct capture cap;
    struct gvs_client *c;
    use_server("unix:///nonexistent/gvsd.sock");
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    ASSERT_EQ(capture_begin(&cap), 0);
    long long start = test_now_ms();
    int rc = gvs_client_get(&c);
    int rc2 = gvs_client_get(&c);
    long long took = test_now_ms() - start;
    const char *err = capture_end(&cap);
    ASSERT_EQ(rc, GVS_E_CONNECT);
    ASSERT_EQ(rc2, rc);
    ASSERT_LT(took, 1000);
    /* The OS's reason, and where the URI came from. */
    ASSERT_STR_EQ(err, "gvs: cannot use server unix:///nonexistent/gvsd.sock: "
                       "connect /nonexistent/gvsd.sock: No such file or "
                       "directory (is gvsd running? GVS_SERVER is "
                       "unix:///nonexistent/gvsd.sock)\n");
    return 0;
}

/* A config file named by GVS_CONFIG must be there, and the default
 * server is named as such when the connect fails. */
TEST_IMPL(client_config_errors)
{
    struct capture cap;
    struct gvs_client *c;
    setenv("GVS_CONFIG", "/nonexistent/gvs.conf", 1);
    setenv("GVS_SERVER", "unix:///nonexistent/gvsd.sock", 1);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    ASSERT_EQ(capture_begin(&cap), 0);
    int rc = gvs_client_get(&c);
    const char *err = capture_end(&cap);
    ASSERT_EQ(rc, GVS_E_IO);
    ASSERT_STR_EQ(err, "gvs: cannot use server unix:///nonexistent/gvsd.sock: "
                       "config file /nonexistent/gvs.conf: No such file or "
                       "directory (the file GVS_CONFIG names)\n");
    return 0;
}

TEST_IMPL(client_default_server_hint)
{
    struct capture cap;
    struct gvs_client *c;
    setenv("GVS_CONFIG", "/dev/null", 1);
    unsetenv("GVS_SERVER");
    if (access("/run/gvs/gvsd.sock", F_OK) == 0) {
        fprintf(stderr, "a gvsd serves the default socket here: nothing "
                        "to check\n");
        return 0;
    }
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    ASSERT_EQ(capture_begin(&cap), 0);
    int rc = gvs_client_get(&c);
    const char *err = capture_end(&cap);
    ASSERT_EQ(rc, GVS_E_CONNECT);
    ASSERT(strstr(err, "(is gvsd running? GVS_SERVER is unset, and no config "
                       "file names a server: this is the default)\n") != NULL);
    return 0;
}

TEST_IMPL(client_silent_server)
{
    struct test_gvsd g = {0};
    struct gvs_listener *l;
    struct capture cap;
    struct gvs_client *c;
    char conf[300], path[300], expect[400];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(gvs_listen(g.tcp_uri, &l), 0);
    /* The server comes from the config file's "server" key. */
    snprintf(conf, sizeof(conf), "server = %s\nhandshake_timeout_ms = 300\n",
             g.tcp_uri);
    ASSERT_EQ(test_write_file(&g, "gvs.conf", conf, path, sizeof(path)), 0);
    unsetenv("GVS_SERVER");
    setenv("GVS_CONFIG", path, 1);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    ASSERT_EQ(capture_begin(&cap), 0);
    long long start = test_now_ms();
    int rc = gvs_client_get(&c);
    long long took = test_now_ms() - start;
    const char *err = capture_end(&cap);
    ASSERT_EQ(rc, GVS_E_TIMEOUT);
    ASSERT_LT(took, 2000);
    ASSERT_GE(took, 250);
    snprintf(expect, sizeof(expect),
             "gvs: cannot use server %s: handshake failed: timed out\n",
             g.tcp_uri);
    ASSERT_STR_EQ(err, expect);
    ASSERT_STR_EQ(gvs_client_server(), g.tcp_uri);
    gvs_listener_close(l, 0);
    test_gvsd_stop(&g);
    return 0;
}

TEST_IMPL(client_handshake_refused)
{
    struct test_gvsd g = {0};
    struct capture cap;
    struct gvs_client *c;
    struct gvs_client_plugin wrong = echo_plugin;
    wrong.table_hash ^= 1;
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    use_server(g.unix_uri);
    ASSERT_EQ(gvs_client_register(&wrong), 0);
    ASSERT_EQ(capture_begin(&cap), 0);
    int rc = gvs_client_get(&c);
    const char *err = capture_end(&cap);
    ASSERT_EQ(rc, GVS_E_MISMATCH);
    ASSERT(strstr(err, "handshake failed: plugin echo: operation table "
                       "mismatch") != NULL);
    ASSERT_EQ(count_lines(err), 1);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

struct caller {
    int index;
    int failures;
};

static void *call_many(void *arg)
{
    struct caller *w = arg;
    uint8_t data[600];
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        struct gvs_client *c;
        size_t len = (size_t)(w->index * 37 + i * 5) % sizeof(data);
        for (size_t k = 0; k < len; k++)
            data[k] = (uint8_t)(w->index * 131 + i + k);
        if (gvs_client_get(&c) != 0 || echo_call(c, data, len) != 0)
            w->failures++;
    }
    return NULL;
}

/* Over shm, a frame larger than a ring goes each way too. */
static int threads_on(int shm)
{
    struct test_gvsd g;
    pthread_t th[THREADS];
    struct caller w[THREADS];
    struct gvs_client_stats st;
    ASSERT_EQ(start_echo_server_on(&g, shm), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct caller){i, 0};
        ASSERT_EQ(pthread_create(&th[i], NULL, call_many, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        ASSERT_EQ(w[i].failures, 0);
    }
    gvs_client_get_stats(&st);
    ASSERT_U64_EQ(st.round_trips, THREADS * CALLS_PER_THREAD);
    if (shm) {
        static uint8_t big[12 << 20];
        struct gvs_client *c;
        for (size_t k = 0; k < sizeof(big); k++)
            big[k] = (uint8_t)(k * 7 + (k >> 13));
        ASSERT_EQ(gvs_client_get(&c), 0);
        ASSERT_EQ(echo_call(c, big, sizeof(big)), 0);
    }
    /* One connection for all threads. */
    ASSERT(test_gvsd_log_has(&g, "session 1: started", 5000));
    ASSERT(!test_gvsd_log_has(&g, "session 2: started", 0));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(client_threads)
{
    return threads_on(0);
}

TEST_IMPL(client_shm_threads)
{
    return threads_on(1);
}

/* Threads that spin for their replies read them themselves when nobody
 * else is reading (leader/follower); asked for here, as the test
 * machine may be too small to spin by default. */
static int leaders_on(int shm)
{
    ASSERT_EQ(setenv("GVS_SPIN_US", "200", 1), 0);
    ASSERT_EQ(threads_on(shm), 0);
    ASSERT(gvs_client_own_reads() > 0);
    return 0;
}

TEST_IMPL(client_threads_leaders)
{
    return leaders_on(0);
}

TEST_IMPL(client_shm_threads_leaders)
{
    return leaders_on(1);
}

/* After a pause longer than anything polls for, the receiver waits for
 * the next frame without holding the reading (shm://), so that the
 * caller, polling for its reply, reads it as it comes: before, the
 * receiver slept in the read holding the reading (rlock), and the reply
 * waited for it to wake.  Seen as rlock free after each of 5 pauses of
 * 20 ms (whether the caller then wins the race for its reply depends on
 * the scheduler: on a loaded machine the receiver, just woken, often
 * runs first). */
TEST_IMPL(client_shm_idle_reading_free)
{
    struct test_gvsd g;
    struct gvs_client *c;
    ASSERT_EQ(setenv("GVS_SPIN_US", "200", 1), 0);
    ASSERT_EQ(start_echo_server_on(&g, 1), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(echo_call(c, "call", 4), 0);
        struct timespec pause = {0, 20 * 1000000L};
        nanosleep(&pause, NULL);
        ASSERT_EQ(pthread_mutex_trylock(&c->rlock), 0);
        pthread_mutex_unlock(&c->rlock);
    }
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(client_stats)
{
    struct test_gvsd g;
    struct gvs_client *c;
    struct gvs_client_stats st;
    struct gvs_buf *reply = gvs_buf_new(64);
    uint8_t ten[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    ASSERT_EQ(start_echo_server(&g), 0);
    gvs_client_get_stats(&st);
    ASSERT_U64_EQ(st.round_trips + st.posts + st.bytes_sent, 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(echo_call(c, ten, sizeof(ten)), 0);
    for (uint32_t v = 1; v <= 7; v++) {
        uint8_t body[4] = {(uint8_t)v, 0, 0, 0};
        struct iovec iov = {body, sizeof(body)};
        ASSERT_EQ(gvs_client_post(c, ECHO_PLUGIN_ID, ECHO_OP_NOTE, &iov, 1),
                  0);
    }
    ASSERT_EQ(gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_COUNT, NULL, 0,
                              reply),
              0);
    uint64_t notes, sum;
    ASSERT_EQ(gvs_buf_get_u64(reply, &notes), 0);
    ASSERT_EQ(gvs_buf_get_u64(reply, &sum), 0);
    ASSERT_U64_EQ(notes, 7);
    ASSERT_U64_EQ(sum, 28);
    gvs_client_get_stats(&st);
    ASSERT_U64_EQ(st.round_trips, 6);
    ASSERT_U64_EQ(st.posts, 7);
    ASSERT_U64_EQ(st.bytes_sent, 5 * (28 + 10) + 7 * (28 + 4) + 28);
    ASSERT_U64_EQ(st.bytes_received, 5 * (28 + 10) + 28 + 16);
    /* A flag beyond NOREPLY is not the caller's to send. */
    struct iovec iov = {ten, sizeof(ten)};
    gvs_client_lock(c);
    ASSERT_EQ(gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO,
                                     1u << 3, &iov, 1, NULL),
              GVS_E_INVAL);
    gvs_client_unlock(c);
    /* A PING goes through too; other control ops are not the caller's. */
    ASSERT_EQ(gvs_client_call(c, 0, GVS_CTL_PING, NULL, 0, reply), 0);
    ASSERT_EQ(gvs_client_call(c, 0, GVS_CTL_BYE, NULL, 0, reply),
              GVS_E_INVAL);
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(client_pipelining)
{
    struct test_gvsd g;
    struct gvs_client *c;
    uint64_t ids[3];
    struct gvs_buf *reply = gvs_buf_new(64);
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    gvs_client_lock(c);
    for (int i = 0; i < 3; i++) {
        uint8_t b = (uint8_t)i;
        struct iovec iov = {&b, 1};
        ASSERT_EQ(gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, 0,
                                         &iov, 1, &ids[i]),
                  0);
    }
    ASSERT_EQ(gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO,
                                     GVS_F_REPLY, NULL, 0, NULL),
              GVS_E_INVAL);
    gvs_client_unlock(c);
    ASSERT(ids[0] < ids[1] && ids[1] < ids[2]);
    /* Collected in any order: the later replies, there first, were kept. */
    usleep(100000);
    for (int i = 2; i >= 0; i--) {
        ASSERT_EQ(gvs_client_wait(c, ids[i], reply), 0);
        ASSERT_EQ(gvs_buf_len(reply), 1);
        ASSERT_EQ(gvs_buf_ptr(reply)[0], i);
    }
    /* Each reply is collected once. */
    ASSERT_EQ(gvs_client_wait(c, ids[0], reply), GVS_E_INVAL);
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

static int send_quiet(struct gvs_client *c, uint32_t quiet, uint64_t *id)
{
    uint8_t b[4] = {(uint8_t)quiet, 0, 0, 0};
    struct iovec iov = {b, sizeof(b)};
    gvs_client_lock(c);
    int rc = gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_QUIET, 0, &iov,
                                    1, id);
    gvs_client_unlock(c);
    return rc;
}

/* A request the server answers otherwise (no reply) is withdrawn once;
 * one whose reply came cannot be, and is waited for; a reply that comes
 * for a withdrawn request is a peer's lie: the connection breaks. */
TEST_IMPL(client_withdraw)
{
    struct test_gvsd g;
    struct gvs_client *c;
    uint64_t quiet, loud, slow;
    struct gvs_buf *reply = gvs_buf_new(64);
    uint8_t ms[4] = {50, 0, 0, 0}, one = 1;
    struct iovec sleep_iov = {ms, sizeof(ms)}, iov1 = {&one, 1};
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    ASSERT_EQ(send_quiet(c, 1, &quiet), 0);
    ASSERT_EQ(send_quiet(c, 0, &loud), 0);
    usleep(200000);
    ASSERT_EQ(gvs_client_withdraw(c, quiet), 0);
    ASSERT_EQ(gvs_client_withdraw(c, quiet), GVS_E_INVAL);
    ASSERT_EQ(gvs_client_wait(c, quiet, reply), GVS_E_INVAL);
    ASSERT_EQ(gvs_client_withdraw(c, loud), GVS_E_INVAL);
    ASSERT_EQ(gvs_client_wait(c, loud, reply), 0);
    ASSERT_EQ(gvs_buf_len(reply), 0);
    ASSERT_EQ(gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov1, 1,
                              reply),
              0);
    ASSERT_EQ(gvs_buf_ptr(reply)[0], 1);
    gvs_client_lock(c);
    ASSERT_EQ(gvs_client_send_locked(c, ECHO_PLUGIN_ID, ECHO_OP_SLEEP, 0,
                                     &sleep_iov, 1, &slow),
              0);
    gvs_client_unlock(c);
    ASSERT_EQ(gvs_client_withdraw(c, slow), 0);
    usleep(200000);
    ASSERT_EQ(gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov1, 1,
                              reply),
              GVS_E_PROTO);
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

static void *sleep_call(void *arg)
{
    struct gvs_client *c;
    struct gvs_buf *reply = gvs_buf_new(64);
    uint8_t ms[4] = {0x10, 0x27, 0, 0}; /* 10000 */
    struct iovec iov = {ms, sizeof(ms)};
    int *rc = arg;
    *rc = gvs_client_get(&c);
    if (*rc == 0)
        *rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_SLEEP, &iov, 1,
                              reply);
    gvs_buf_free(reply);
    return NULL;
}

/* A call waiting when gvsd dies fails promptly, as do later ones. */
static int server_killed_on(int shm)
{
    struct test_gvsd g;
    struct gvs_client *c;
    struct capture cap;
    pthread_t th;
    int rc = 1;
    ASSERT_EQ(start_echo_server_on(&g, shm), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    ASSERT_EQ(echo_call(c, "hi", 2), 0);
    ASSERT_EQ(capture_begin(&cap), 0);
    ASSERT_EQ(pthread_create(&th, NULL, sleep_call, &rc), 0);
    usleep(300000);
    long long start = test_now_ms();
    kill(g.pid, SIGKILL);
    waitpid(g.pid, NULL, 0);
    g.pid = -1;
    pthread_join(th, NULL);
    long long took = test_now_ms() - start;
    int rc2 = echo_call(c, "hi", 2);
    const char *err = capture_end(&cap);
    ASSERT_LT(rc, 0);
    ASSERT_LT(took, 2000);
    ASSERT_EQ(rc2, rc);
    ASSERT(strstr(err, shm ? "gvs: connection to server shm://"
                           : "gvs: connection to server unix://") != NULL);
    ASSERT_EQ(count_lines(err), 1);
    test_gvsd_stop(&g);
    return 0;
}

TEST_IMPL(client_server_killed)
{
    return server_killed_on(0);
}

TEST_IMPL(client_shm_server_killed)
{
    return server_killed_on(1);
}

TEST_IMPL(client_reply_mismatch)
{
    struct test_gvsd g = {0};
    struct gvs_listener *l;
    struct gvs_conn *conn;
    struct gvs_hello hello;
    struct capture cap;
    struct gvs_client *c;
    struct gvs_frame_hdr h;
    struct gvs_buf *b = gvs_buf_new(1024);
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(gvs_listen(g.unix_uri, &l), 0);
    use_server(g.unix_uri);
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    /* A forked fake server answers with the wrong request id. */
    pid_t pid = fork();
    if (pid == 0) {
        ASSERT_EQ(gvs_accept(l, &conn), 0);
        ASSERT_EQ(fake_handshake(conn, &hello), 0);
        ASSERT_EQ(gvs_frame_recv(conn, 1024, &h, b), 0);
        h.flags = GVS_F_REPLY;
        h.id++;
        ASSERT_EQ(gvs_frame_send(conn, &h, b), 0);
        /* The client must give up on the session. */
        _exit(gvs_frame_recv(conn, 1024, &h, b) == GVS_E_CLOSED ? 0 : 1);
    }
    ASSERT_EQ(gvs_client_get(&c), 0);
    ASSERT_EQ(capture_begin(&cap), 0);
    int rc = echo_call(c, "abc", 3);
    int rc2 = echo_call(c, "abc", 3);
    const char *err = capture_end(&cap);
    ASSERT_EQ(rc, GVS_E_PROTO);
    ASSERT_EQ(rc2, GVS_E_PROTO);
    ASSERT_EQ(count_lines(err), 1);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    gvs_buf_free(b);
    gvs_listener_close(l, 0);
    test_gvsd_stop(&g);
    return 0;
}

/* In the forked child: a session of its own, fresh counters, and the
 * GVS_STATS lines at exit (by operation: the child reads GVS_STATS=ops
 * at the fork, the parent read it unset at its start). */
static int fork_child(uint32_t parent_worker)
{
    struct gvs_client *c;
    struct gvs_client_stats st;
    uint32_t worker;
    uint8_t v[4] = {1, 0, 0, 0};
    struct iovec iov = {v, sizeof(v)};
    ASSERT_EQ(gvs_client_get(&c), 0);
    ASSERT_EQ(call_u32(c, ECHO_OP_PID, &worker), 0);
    ASSERT_NE(worker, parent_worker);
    ASSERT_EQ(gvs_client_post(c, ECHO_PLUGIN_ID, ECHO_OP_NOTE, &iov, 1), 0);
    gvs_client_get_stats(&st);
    ASSERT_U64_EQ(st.round_trips, 1);
    ASSERT_U64_EQ(st.posts, 1);
    return 0;
}

TEST_IMPL(client_fork)
{
    struct test_gvsd g;
    struct gvs_client *c;
    uint32_t worker, again;
    int p[2];
    char out[512] = "";
    ASSERT_EQ(start_echo_server(&g), 0);
    ASSERT_EQ(gvs_client_get(&c), 0);
    ASSERT_EQ(call_u32(c, ECHO_OP_PID, &worker), 0);
    ASSERT_EQ(pipe(p), 0);
    setenv("GVS_STATS", "ops", 1);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        close(p[1]);
        /* exit(), not _exit(): the stats lines are printed at exit. */
        exit(fork_child(worker));
    }
    unsetenv("GVS_STATS");
    close(p[1]);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_GT(read(p[0], out, sizeof(out) - 1), 0);
    close(p[0]);
    ASSERT(strncmp(out, "gvs-stats: round_trips=1 posts=1 bytes_sent=", 44) ==
           0);
    /* The call waited for its reply; the post did not. */
    unsigned long long send_us, wait_us;
    const char *call = strstr(out, "\ngvs-stats: plugin=200 op=7 calls=1 "
                                   "posts=0 send_us=");
    const char *post = strstr(out, "\ngvs-stats: plugin=200 op=4 calls=0 "
                                   "posts=1 send_us=");
    ASSERT(call != NULL && post != NULL);
    ASSERT_EQ(sscanf(strstr(call, "send_us="), "send_us=%llu wait_us=%llu",
                     &send_us, &wait_us),
              2);
    ASSERT_GT(wait_us, 0);
    ASSERT_EQ(sscanf(strstr(post, "send_us="), "send_us=%llu wait_us=%llu",
                     &send_us, &wait_us),
              2);
    ASSERT_EQ(wait_us, 0);
    ASSERT_EQ(count_lines(out), 3);
    /* The parent's session was left alone. */
    ASSERT_EQ(call_u32(c, ECHO_OP_PID, &again), 0);
    ASSERT_EQ(again, worker);
    ASSERT(test_gvsd_log_has(&g, "session 2: started", 5000));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
