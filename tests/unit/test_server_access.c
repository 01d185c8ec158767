/* gvsd's access rules (docs/security.md): no network listener without
 * tokens, socket file mode and group, peer allow-lists, idle timeout,
 * and the client's keepalive that the idle timeout must spare. */
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/client.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

/* Starts gvsd (default listeners) with a config file of text. */
static int start_with(struct test_gvsd *g, const char *text)
{
    char path[256];
    memset(g, 0, sizeof(*g));
    ASSERT_EQ(test_gvsd_init(g), 0);
    ASSERT_EQ(test_write_file(g, "gvs.conf", text, path, sizeof(path)), 0);
    const char *extra[] = {"--config", path, NULL};
    ASSERT_EQ(test_gvsd_start(g, extra), 0);
    return 0;
}

TEST_IMPL(server_listen_exposed)
{
    struct test_gvsd g = {0};
    char uri[64], local[64], plugins[512], path[256];
    int port = test_free_port();
    snprintf(uri, sizeof(uri), "tcp://0.0.0.0:%d", port);
    snprintf(local, sizeof(local), "tcp://127.0.0.1:%d", port);
    snprintf(plugins, sizeof(plugins), "%s/tests/plugins", test_build_dir());
    const char *bare[] = {"--plugin-dir", plugins, "--listen", uri, NULL};
    int status = test_gvsd_run_once(&g, bare);
    ASSERT(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 0);
    ASSERT(test_gvsd_log_has(&g, "not a loopback address and no token", 0));
    test_gvsd_stop(&g); /* removes the directory: nothing runs */

    /* --insecure: the operator has decided. */
    g.no_default_listen = 1;
    const char *insecure[] = {"--listen", uri, "--insecure", NULL};
    ASSERT_EQ(test_gvsd_start(&g, insecure), 0);
    struct gvs_conn *c = test_session(local);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* A token: clients must prove it, so the address may be open. */
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(test_write_file(&g, "gvs.conf",
                              "token = some-secret-0123456789\n", path,
                              sizeof(path)),
              0);
    const char *token[] = {"--listen", uri, "--config", path, NULL};
    ASSERT_EQ(test_gvsd_start(&g, token), 0);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

static int check_socket(const char *path, mode_t mode, gid_t gid)
{
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT(S_ISSOCK(st.st_mode));
    ASSERT_EQ(st.st_mode & 0777, mode);
    ASSERT_EQ(st.st_gid, gid);
    return 0;
}

TEST_IMPL(server_socket_mode)
{
    struct test_gvsd g;
    char shm_path[128], text[256];
    struct group *gr = getgrgid(getgid());
    ASSERT(gr != NULL);

    /* The default: 0660, gvsd's own group. */
    ASSERT_EQ(start_with(&g, "log_level = info\n"), 0);
    snprintf(shm_path, sizeof(shm_path), "%s/gvsd-shm.sock", g.dir);
    ASSERT_EQ(check_socket(g.sock_path, 0660, getgid()), 0);
    ASSERT_EQ(check_socket(shm_path, 0660, getgid()), 0);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* A group by name, a narrower mode: still usable by its owner. */
    snprintf(text, sizeof(text), "socket_mode = 0600\nsocket_group = %s\n",
             gr->gr_name);
    ASSERT_EQ(start_with(&g, text), 0);
    snprintf(shm_path, sizeof(shm_path), "%s/gvsd-shm.sock", g.dir);
    ASSERT_EQ(check_socket(g.sock_path, 0600, getgid()), 0);
    ASSERT_EQ(check_socket(shm_path, 0600, getgid()), 0);
    struct gvs_conn *c = test_session(g.shm_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* By number, a wider mode. */
    snprintf(text, sizeof(text), "socket_mode = 0666\nsocket_group = %u\n",
             (unsigned)getgid());
    ASSERT_EQ(start_with(&g, text), 0);
    ASSERT_EQ(check_socket(g.sock_path, 0666, getgid()), 0);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* A group that does not exist stops gvsd from starting. */
    char path[256], plugins[512];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(test_write_file(&g, "gvs.conf",
                              "socket_group = no-such-group-gvs-test\n", path,
                              sizeof(path)),
              0);
    snprintf(plugins, sizeof(plugins), "%s/tests/plugins", test_build_dir());
    const char *argv[] = {"--plugin-dir", plugins, "--config", path,
                          "--listen", g.unix_uri, NULL};
    int status = test_gvsd_run_once(&g, argv);
    ASSERT(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 0);
    ASSERT(test_gvsd_log_has(&g, "socket_group no-such-group-gvs-test: no "
                                 "such group",
                             0));
    test_gvsd_stop(&g);
    return 0;
}

/* A HELLO on uri: its status and, when refused, the message in msg.
 * Read as libgvs-client reads it: a peer refused at once may find gvsd
 * gone before its HELLO leaves, and the refusal is there all the same. */
static int hello_status(const char *uri, char *msg, size_t len)
{
    struct gvs_conn *c;
    struct gvs_hello hello = {.version = GVS_PROTO_VERSION, .nplugins = 1};
    struct gvs_hello_reply r;
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO};
    hello.plugins[0] = (struct gvs_hello_plugin){
        .id = ECHO_PLUGIN_ID, .table_hash = ECHO_TABLE_HASH};
    snprintf(hello.plugins[0].name, sizeof(hello.plugins[0].name), "%s",
             ECHO_PLUGIN_NAME);
    int rc = gvs_connect(uri, &c);
    if (rc < 0)
        return rc;
    struct gvs_buf *b = gvs_buf_new(8192);
    if (gvs_hello_encode(&hello, b) == 0)
        (void)gvs_frame_send(c, &h, b);
    rc = gvs_conn_set_timeout(c, 5000);
    if (rc == 0)
        rc = gvs_frame_recv(c, 8192, &h, b);
    if (rc == 0)
        rc = gvs_hello_reply_decode(b, &r);
    if (rc == 0) {
        snprintf(msg, len, "%s", r.message);
        rc = r.status;
    }
    if (rc == 0 && test_echo(c, 1, 16) != 0)
        rc = GVS_E_PROTO;
    gvs_buf_free(b);
    gvs_conn_close(c);
    return rc;
}

TEST_IMPL(server_allow_uid)
{
    struct test_gvsd g;
    char text[256], msg[256];
    unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();

    /* Not us: refused on unix and shm, before any session starts; tcp
     * peers have no credentials to check. */
    snprintf(text, sizeof(text), "allow_uid = %u\n", uid + 1);
    ASSERT_EQ(start_with(&g, text), 0);
    ASSERT_EQ(hello_status(g.unix_uri, msg, sizeof(msg)), GVS_E_DENIED);
    ASSERT(strstr(msg, "not allowed") != NULL);
    ASSERT_EQ(hello_status(g.shm_uri, msg, sizeof(msg)), GVS_E_DENIED);
    ASSERT(test_gvsd_log_has(&g, "not in allow_uid/allow_gid", 5000));
    ASSERT(!test_gvsd_log_has(&g, "started, peer uid=", 0));
    ASSERT_EQ(hello_status(g.tcp_uri, msg, sizeof(msg)), 0);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* Our uid among others. */
    snprintf(text, sizeof(text), "allow_uid = %u,%u\n", uid + 1, uid);
    ASSERT_EQ(start_with(&g, text), 0);
    ASSERT_EQ(hello_status(g.unix_uri, msg, sizeof(msg)), 0);
    ASSERT_EQ(hello_status(g.shm_uri, msg, sizeof(msg)), 0);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* Not our uid, but our gid. */
    snprintf(text, sizeof(text), "allow_uid = %u\nallow_gid = %u\n", uid + 1,
             gid);
    ASSERT_EQ(start_with(&g, text), 0);
    ASSERT_EQ(hello_status(g.unix_uri, msg, sizeof(msg)), 0);
    ASSERT_EQ(test_gvsd_stop(&g), 0);

    /* Neither. */
    snprintf(text, sizeof(text), "allow_gid = %u\n", gid + 1);
    ASSERT_EQ(start_with(&g, text), 0);
    ASSERT_EQ(hello_status(g.unix_uri, msg, sizeof(msg)), GVS_E_DENIED);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* Sends a PING and takes its reply. */
static int ping(struct gvs_conn *c, uint64_t id)
{
    struct gvs_buf *reply = gvs_buf_new(64);
    int rc = test_call(c, 0, GVS_CTL_PING, id, NULL, 0, reply);
    gvs_buf_free(reply);
    return rc;
}

TEST_IMPL(server_idle_timeout)
{
    struct test_gvsd g;
    ASSERT_EQ(start_with(&g, "idle_timeout_ms = 300\n"), 0);
    const char *uris[] = {g.unix_uri, g.shm_uri};
    for (int i = 0; i < 2; i++) {
        struct gvs_conn *c = test_session(uris[i]);
        ASSERT(c != NULL);
        ASSERT_EQ(test_echo(c, 1, 10), 0);
        long long t0 = test_now_ms();
        ASSERT(test_wait_closed(c, 5000));
        ASSERT_GE(test_now_ms() - t0, 250);
        gvs_conn_close(c);
    }
    ASSERT(test_gvsd_log_has(&g, "session 1: idle for 300 ms, closing", 5000));
    ASSERT(test_gvsd_log_has(&g, "session 2: idle for 300 ms, closing", 5000));

    /* Traffic more often than the timeout keeps a session. */
    struct gvs_conn *c = test_session(g.tcp_uri);
    ASSERT(c != NULL);
    for (uint64_t id = 1; id <= 12; id++) {
        usleep(100 * 1000);
        ASSERT_EQ(ping(c, id), 0);
    }
    ASSERT_EQ(test_echo(c, 20, 10), 0);
    gvs_conn_close(c);
    ASSERT(!test_gvsd_log_has(&g, "session 3: idle", 0));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

static const struct gvs_client_plugin echo_plugin = {
    ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};

static int echo_call(void)
{
    struct gvs_client *c;
    int rc = gvs_client_get(&c);
    if (rc < 0)
        return rc;
    struct gvs_buf *reply = gvs_buf_new(64);
    struct iovec iov = {"keep", 4};
    rc = gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov, 1, reply);
    gvs_buf_free(reply);
    return rc;
}

/* A client of a gvsd that closes sessions idle for 400 ms, configured
 * with keepalive_ms, makes a call, sleeps past the idle timeout and
 * calls again: the result of the second call. */
static int idle_client(struct test_gvsd *g, unsigned keepalive_ms)
{
    char text[256], path[256];
    ASSERT_EQ(start_with(g, "idle_timeout_ms = 400\n"), 0);
    snprintf(text, sizeof(text), "server = %s\nkeepalive_ms = %u\n",
             g->unix_uri, keepalive_ms);
    ASSERT_EQ(test_write_file(g, "client.conf", text, path, sizeof(path)), 0);
    setenv("GVS_CONFIG", path, 1);
    unsetenv("GVS_SERVER");
    ASSERT_EQ(gvs_client_register(&echo_plugin), 0);
    ASSERT_EQ(echo_call(), 0);
    usleep(1300 * 1000);
    return echo_call();
}

TEST_IMPL(client_keepalive)
{
    struct test_gvsd g;
    ASSERT_EQ(idle_client(&g, 150), 0);
    /* Keepalives are not the program's traffic. */
    struct gvs_client_stats st;
    gvs_client_get_stats(&st);
    ASSERT_EQ(st.posts, 0);
    ASSERT_EQ(st.round_trips, 2);
    ASSERT(!test_gvsd_log_has(&g, "idle for", 0));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* The control: without keepalives the same client is cut off. */
TEST_IMPL(client_keepalive_off)
{
    struct test_gvsd g;
    ASSERT_LT(idle_client(&g, 0), 0);
    ASSERT(test_gvsd_log_has(&g, "session 1: idle for 400 ms, closing", 5000));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
