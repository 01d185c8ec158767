/* gvsd serving sessions: transports, control ops, isolation between
 * sessions, limits, shutdown, options and plugin loading. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "gvs/plugin.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

#define SESSIONS 16
#define ECHOES_PER_SESSION 50

TEST_IMPL(server_echo)
{
    struct test_gvsd g = {0};
    const size_t sizes[] = {0, 1, 4096, (size_t)1 << 20, GVS_BULK_CHUNK};
    struct gvs_buf *reply = gvs_buf_new(16);
    struct gvs_frame_hdr h;
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    const char *uris[] = {g.unix_uri, g.tcp_uri, g.shm_uri};
    for (int u = 0; u < 3; u++) {
        struct gvs_conn *c = test_session(uris[u]);
        ASSERT(c != NULL);
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            ASSERT_EQ(test_echo(c, i + 1, sizes[i]), 0);
        ASSERT_EQ(test_call(c, 0, GVS_CTL_PING, 99, NULL, 0, reply), 0);
        ASSERT_EQ(gvs_buf_len(reply), 0);
        h = (struct gvs_frame_hdr){.op = GVS_CTL_BYE, .id = 100};
        ASSERT_EQ(gvs_frame_send(c, &h, NULL), 0);
        ASSERT(test_wait_closed(c, 5000));
        gvs_conn_close(c);
    }
    ASSERT(test_gvsd_log_has(&g, "session 1: started, peer uid=", 5000));
    ASSERT(test_gvsd_log_has(&g, "session 2: started, peer 127.0.0.1:", 5000));
    ASSERT(test_gvsd_log_has(&g, "session 3: started, peer uid=", 5000));
    ASSERT(test_gvsd_log_has(&g, "session 3: ended after", 5000));
    ASSERT(test_gvsd_log_has(&g, "session 2: ended after", 5000));
    ASSERT(test_gvsd_log_has(&g, "5 call(s)", 5000));
    ASSERT(test_gvsd_log_has(&g, "session 2: worker", 5000));
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_posted_notes)
{
    struct test_gvsd g = {0};
    struct gvs_buf *reply = gvs_buf_new(64);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    for (uint32_t v = 1; v <= 100; v++) {
        uint8_t body[4] = {(uint8_t)v, 0, 0, 0};
        struct iovec iov = {body, sizeof(body)};
        struct gvs_frame_hdr h = {.plugin = ECHO_PLUGIN_ID,
                                  .op = ECHO_OP_NOTE,
                                  .flags = GVS_F_NOREPLY,
                                  .id = v};
        ASSERT_EQ(gvs_frame_sendv(c, &h, &iov, 1), 0);
    }
    ASSERT_EQ(test_call(c, ECHO_PLUGIN_ID, ECHO_OP_COUNT, 101, NULL, 0, reply),
              0);
    uint64_t notes, sum;
    ASSERT_EQ(gvs_buf_get_u64(reply, &notes), 0);
    ASSERT_EQ(gvs_buf_get_u64(reply, &sum), 0);
    ASSERT_U64_EQ(notes, 100);
    ASSERT_U64_EQ(sum, 5050);
    gvs_conn_close(c);
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_crash_isolated)
{
    struct test_gvsd g = {0};
    struct gvs_buf *reply = gvs_buf_new(64);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *a = test_session(g.unix_uri);
    struct gvs_conn *b = test_session(g.tcp_uri);
    ASSERT(a != NULL && b != NULL);
    ASSERT(test_call(b, ECHO_PLUGIN_ID, ECHO_OP_CRASH, 1, NULL, 0, reply) < 0);
    ASSERT(test_gvsd_log_has(&g, "session 2: worker", 5000));
    ASSERT(test_gvsd_log_has(&g, "killed by signal 6", 5000));
    ASSERT_EQ(test_still_serving(&g, a), 0);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_buf_free(reply);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

struct echo_worker {
    const char *uri;
    int index;
    int failures;
};

static void *echo_many(void *arg)
{
    struct echo_worker *w = arg;
    struct gvs_conn *c = test_session(w->uri);
    if (c == NULL) {
        w->failures++;
        return NULL;
    }
    for (int i = 0; i < ECHOES_PER_SESSION; i++)
        if (test_echo(c, (uint64_t)w->index * 1000 + (uint64_t)i,
                      (size_t)(w->index * 97 + i * 13)) != 0)
            w->failures++;
    gvs_conn_close(c);
    return NULL;
}

TEST_IMPL(server_many_sessions)
{
    struct test_gvsd g = {0};
    pthread_t th[SESSIONS];
    struct echo_worker w[SESSIONS];
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    for (int i = 0; i < SESSIONS; i++) {
        const char *uris[] = {g.unix_uri, g.tcp_uri, g.shm_uri};
        w[i] = (struct echo_worker){uris[i % 3], i, 0};
        ASSERT_EQ(pthread_create(&th[i], NULL, echo_many, &w[i]), 0);
    }
    for (int i = 0; i < SESSIONS; i++) {
        pthread_join(th[i], NULL);
        ASSERT_EQ(w[i].failures, 0);
    }
    ASSERT(test_gvsd_log_has(&g, "session 16: started", 5000));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_sigterm)
{
    struct test_gvsd g = {0};
    struct stat st;
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(stat(g.sock_path, &st), 0);
    kill(g.pid, SIGTERM);
    int status;
    ASSERT_EQ(waitpid(g.pid, &status, 0), g.pid);
    g.pid = -1;
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT(stat(g.sock_path, &st) < 0);
    ASSERT(test_wait_closed(c, 5000));
    ASSERT(test_gvsd_log_has(&g, "shutting down", 0));
    gvs_conn_close(c);
    test_gvsd_stop(&g);
    return 0;
}

/* Refused with a HELLO reply, or closed if the session-count race has the
 * refusal meet our HELLO after it closed. */
static int refused(const char *uri)
{
    struct gvs_conn *c;
    char msg[256] = "";
    int rc = test_hello(uri, GVS_PROTO_VERSION, ECHO_PLUGIN_ID,
                        ECHO_PLUGIN_NAME, ECHO_TABLE_HASH, &c, msg,
                        sizeof(msg));
    gvs_conn_close(c);
    if (rc != GVS_E_RANGE || strcmp(msg, "too many sessions") != 0)
        fprintf(stderr, "not refused: %d %s\n", rc, msg);
    return rc == GVS_E_RANGE && strcmp(msg, "too many sessions") == 0;
}

TEST_IMPL(server_max_sessions)
{
    struct test_gvsd g = {0};
    const char *const extra[] = {"--max-sessions", "2", NULL};
    ASSERT_EQ(test_gvsd_start(&g, extra), 0);
    struct gvs_conn *a = test_session(g.unix_uri);
    struct gvs_conn *b = test_session(g.tcp_uri);
    ASSERT(a != NULL && b != NULL);
    ASSERT(refused(g.unix_uri));
    ASSERT(refused(g.tcp_uri));
    ASSERT(refused(g.shm_uri));
    ASSERT(test_gvsd_log_has(&g, "too many sessions (2 of max_sessions 2)",
                             5000));
    ASSERT_EQ(test_echo(a, 1, 10), 0);
    /* Once a session ends (and its worker is reaped) there is room. */
    gvs_conn_close(b);
    ASSERT(test_gvsd_log_has(&g, "session 2: worker", 5000));
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 2, 10), 0);
    gvs_conn_close(a);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_config_file)
{
    struct test_gvsd g = {.no_default_listen = 1};
    char conf[512], path[300], cfg_uri[200], flag_uri[200];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    snprintf(cfg_uri, sizeof(cfg_uri), "unix://%s/cfg.sock", g.dir);
    snprintf(flag_uri, sizeof(flag_uri), "unix://%s/flag.sock", g.dir);
    snprintf(conf, sizeof(conf),
             "# test config\nlisten = %s\nmax_sessions = 1\n"
             "log_level = error\n",
             cfg_uri);
    ASSERT_EQ(test_write_file(&g, "gvs.conf", conf, path, sizeof(path)), 0);

    /* The file's listen is used, its max_sessions overridden by a flag. */
    const char *const a[] = {"--config", path, "--max-sessions", "2", NULL};
    ASSERT_EQ(test_gvsd_start(&g, a), 0);
    struct gvs_conn *c1 = test_session(cfg_uri);
    struct gvs_conn *c2 = test_session(cfg_uri);
    ASSERT(c1 != NULL && c2 != NULL);
    ASSERT(refused(cfg_uri));
    gvs_conn_close(c1);
    gvs_conn_close(c2);
    kill(g.pid, SIGTERM);
    ASSERT_EQ(waitpid(g.pid, NULL, 0), g.pid);

    /* --listen replaces the file's listen, and the harness's --log-level
     * info beats the file's log_level (which would hide "listening"). */
    const char *const b[] = {"--config", path, "--listen", flag_uri, NULL};
    ASSERT_EQ(test_gvsd_start(&g, b), 0);
    struct gvs_conn *c3 = test_session(flag_uri);
    ASSERT(c3 != NULL);
    ASSERT_EQ(test_echo(c3, 1, 10), 0);
    ASSERT(gvs_connect(cfg_uri, &c1) < 0);
    ASSERT(test_gvsd_log_has(&g, "listening on ", 5000));
    gvs_conn_close(c3);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_options)
{
    struct test_gvsd g = {0};
    char path[300];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    const char *const none[] = {NULL};
    int st = test_gvsd_run_once(&g, none);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    ASSERT(test_gvsd_log_has(&g, "no listen URI", 0));
    const char *const bad[] = {"--listen", g.unix_uri, "--bogus", NULL};
    st = test_gvsd_run_once(&g, bad);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    const char *const level[] = {"--listen", g.unix_uri, "--log-level",
                                 "loud", NULL};
    st = test_gvsd_run_once(&g, level);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    const char *const help[] = {"--help", NULL};
    st = test_gvsd_run_once(&g, help);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ASSERT_EQ(test_write_file(&g, "bad.conf", "nonsense\n", path,
                              sizeof(path)),
              0);
    const char *const conf[] = {"--config", path, "--listen", g.unix_uri,
                                NULL};
    st = test_gvsd_run_once(&g, conf);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    const char *const missing[] = {"--config", "/nonexistent/gvs.conf",
                                   "--listen", g.unix_uri, NULL};
    st = test_gvsd_run_once(&g, missing);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    ASSERT(test_gvsd_log_has(&g, "config file /nonexistent/gvs.conf: No such "
                                 "file or directory",
                             0));
    const char *const scheme[] = {"--listen", "bogus://x", NULL};
    st = test_gvsd_run_once(&g, scheme);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    ASSERT(test_gvsd_log_has(&g, "bad --listen bogus://x", 0));
    const char *const frame[] = {"--listen", g.unix_uri, "--max-frame", "1K",
                                 NULL};
    st = test_gvsd_run_once(&g, frame);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    /* A socket gvsd cannot bind: /proc takes no sockets. */
    char plugins[512];
    snprintf(plugins, sizeof(plugins), "%s/tests/plugins", test_build_dir());
    const char *const listen[] = {"--plugin-dir", plugins, "--listen",
                                  "unix:///proc/gvsd.sock", NULL};
    st = test_gvsd_run_once(&g, listen);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    ASSERT(test_gvsd_log_has(&g, "cannot listen on unix:///proc/gvsd.sock: "
                                 "bind /proc/gvsd.sock: ",
                             0));
    test_gvsd_stop(&g);
    return 0;
}

TEST_IMPL(server_bad_plugins)
{
    struct test_gvsd g = {0};
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/tests/plugins/bad", test_build_dir());
    const char *const extra[] = {"--plugin-dir", dir, "--log-level", "debug",
                                 NULL};
    char abi[64];
    snprintf(abi, sizeof(abi), "plugin abi: rejected: abi %u",
             GVS_PLUGIN_ABI + 1);
    ASSERT_EQ(test_gvsd_start(&g, extra), 0);
    ASSERT(test_gvsd_log_has(&g, abi, 0));
    ASSERT(test_gvsd_log_has(&g, "plugin flags: rejected: op 1: both "
                                 "blocking and inline",
                             0));
    ASSERT(test_gvsd_log_has(&g, "plugin dupop: rejected: op 1 listed twice",
                             0));
    ASSERT(test_gvsd_log_has(&g, "plugin twin: rejected: id 200 already "
                                 "taken",
                             0));
    ASSERT(test_gvsd_log_has(&g, "plugin entryfail: entry failed", 0));
    ASSERT(test_gvsd_log_has(&g, "no symbol gvs_plugin_entry", 0));
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    /* The host API's log names the plugin. */
    ASSERT(test_gvsd_log_has(&g, "DEBUG: echo: session opened", 5000));
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* An explicit --plugin list loads only those: here one that is
     * rejected, which leaves gvsd nothing to serve. */
    char none[600];
    snprintf(none, sizeof(none), "no plugin loaded from %s: nothing to serve",
             dir);
    const char *const only[] = {"--plugin-dir", dir, "--plugin", "dupop",
                                "--listen", g.unix_uri, NULL};
    int st = test_gvsd_run_once(&g, only);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    ASSERT(test_gvsd_log_has(&g, "plugin dupop: rejected", 0));
    ASSERT(test_gvsd_log_has(&g, none, 0));
    test_gvsd_stop(&g);
    return 0;
}

/* A session naming echo and peer, in that order; the open connection, or
 * NULL after printing why. */
static struct gvs_conn *two_plugin_session(const char *uri, int with_peer)
{
    struct gvs_hello hello = {.version = GVS_PROTO_VERSION,
                              .pid = (uint32_t)getpid(),
                              .nplugins = with_peer ? 2 : 1};
    struct gvs_hello_reply r;
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO};
    snprintf(hello.program, sizeof(hello.program), "gvs-unit-tests");
    hello.plugins[0].id = ECHO_PLUGIN_ID;
    hello.plugins[0].table_hash = ECHO_TABLE_HASH;
    snprintf(hello.plugins[0].name, sizeof(hello.plugins[0].name), "%s",
             ECHO_PLUGIN_NAME);
    hello.plugins[1].id = PEER_PLUGIN_ID;
    hello.plugins[1].table_hash = 1;
    snprintf(hello.plugins[1].name, sizeof(hello.plugins[1].name), "%s",
             PEER_PLUGIN_NAME);
    struct gvs_conn *c = NULL;
    struct gvs_buf *b = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    int rc = b == NULL ? GVS_E_NOMEM : gvs_connect(uri, &c);
    if (rc == 0)
        rc = gvs_hello_encode(&hello, b);
    if (rc == 0)
        rc = gvs_frame_send(c, &h, b);
    if (rc == 0)
        rc = gvs_frame_recv(c, GVS_FRAME_MAX_DEFAULT, &h, b);
    if (rc == 0)
        rc = gvs_hello_reply_decode(b, &r);
    if (rc == 0 && r.status != 0) {
        fprintf(stderr, "HELLO refused: %s\n", r.message);
        rc = r.status;
    }
    gvs_buf_free(b);
    if (rc == 0)
        return c;
    fprintf(stderr, "session on %s: %s\n", uri, gvs_strerror(rc));
    gvs_conn_close(c);
    return NULL;
}

/* ECHO_OP_PEER's two values. */
static int peer_values(struct gvs_conn *c, uint32_t *at_open, uint32_t *now)
{
    struct gvs_buf *reply = gvs_buf_new(64);
    int rc = reply == NULL ? GVS_E_NOMEM
                           : test_call(c, ECHO_PLUGIN_ID, ECHO_OP_PEER, 1,
                                       NULL, 0, reply);
    if (rc == 0)
        rc = gvs_buf_get_u32(reply, at_open);
    if (rc == 0)
        rc = gvs_buf_get_u32(reply, now);
    gvs_buf_free(reply);
    return rc;
}

/* A plugin finds what another plugin of its session offers (host->peer),
 * already from its session_open: gvsd opens the plugins that offer one
 * first, whatever the HELLO's order.  A session without it finds none. */
TEST_IMPL(server_plugin_peer)
{
    struct test_gvsd g = {0};
    uint32_t at_open, now;
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = two_plugin_session(g.unix_uri, 1);
    ASSERT(c != NULL);
    ASSERT_EQ(peer_values(c, &at_open, &now), 0);
    ASSERT_EQ(at_open, PEER_PLUGIN_VALUE);
    ASSERT_EQ(now, PEER_PLUGIN_VALUE);
    gvs_conn_close(c);
    c = two_plugin_session(g.tcp_uri, 0);
    ASSERT(c != NULL);
    ASSERT_EQ(peer_values(c, &at_open, &now), 0);
    ASSERT_EQ(at_open, 0);
    ASSERT_EQ(now, 0);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
