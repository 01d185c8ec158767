/* gvsd's start: what it says when its config, its endpoints or its
 * plugins are not what they should be (issue 14, items 5, 9 and 10). */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gvs/err.h"
#include "test.h"
#include "test_server_harness.h"

static const char *test_plugins(void)
{
    static char dir[512];
    snprintf(dir, sizeof(dir), "%s/tests/plugins", test_build_dir());
    return dir;
}

/* Runs gvsd with argv extra to its end: 0 when it exited with status. */
static int exits(struct test_gvsd *g, const char *const *extra, int status)
{
    int st = test_gvsd_run_once(g, extra);
    if (WIFEXITED(st) && WEXITSTATUS(st) == status)
        return 0;
    fprintf(stderr, "gvsd: wait status %#x, expected exit %d\n", st, status);
    return 1;
}

/* Only the default config may be absent; a bad line is named by file and
 * line. */
TEST_IMPL(server_config_errors)
{
    struct test_gvsd g = {0};
    char path[300], text[600];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    const char *const plain[] = {"--plugin-dir", test_plugins(), "--listen",
                                 g.unix_uri, NULL};
    snprintf(path, sizeof(path), "%s/missing.conf", g.dir);
    setenv("GVS_CONFIG", path, 1);
    ASSERT_EQ(exits(&g, plain, 2), 0);
    snprintf(text, sizeof(text),
             "gvsd: config file %s: No such file or directory (the file "
             "GVS_CONFIG names)",
             path);
    ASSERT(test_gvsd_log_has(&g, text, 0));

    /* A file that cannot be read (as root every file can: a directory
     * cannot). */
    const char *const dir[] = {"--config", g.dir, "--listen", g.unix_uri,
                               NULL};
    ASSERT_EQ(exits(&g, dir, 2), 0);
    snprintf(text, sizeof(text), "gvsd: config file %s: Is a directory",
             g.dir);
    ASSERT(test_gvsd_log_has(&g, text, 0));

    ASSERT_EQ(test_write_file(&g, "typo.conf",
                              "max_sessions = 4\nlisen = unix:///x\n", path,
                              sizeof(path)),
              0);
    setenv("GVS_CONFIG", path, 1);
    ASSERT_EQ(exits(&g, plain, 2), 0);
    snprintf(text, sizeof(text),
             "gvsd: config file %s:2: unknown key 'lisen'", path);
    ASSERT(test_gvsd_log_has(&g, text, 0));
    unsetenv("GVS_CONFIG");
    test_gvsd_stop(&g);
    return 0;
}

/* gvsd makes the directory of its socket, or says which it could not. */
TEST_IMPL(server_socket_dir)
{
    struct test_gvsd g = {.no_default_listen = 1};
    char uri[400], dir[128], text[1024], file[300];
    struct stat st;
    ASSERT_EQ(test_gvsd_init(&g), 0);
    snprintf(dir, sizeof(dir), "%s/run/gvs", g.dir);
    snprintf(uri, sizeof(uri), "unix://%s/gvsd.sock", dir);
    const char *const made[] = {"--listen", uri, NULL};
    umask(077);
    ASSERT_EQ(test_gvsd_start(&g, made), 0);
    umask(022);
    ASSERT_EQ(stat(dir, &st), 0);
    ASSERT(S_ISDIR(st.st_mode));
    /* Searchable by all: the socket's mode says who may connect. */
    ASSERT_EQ(st.st_mode & 0777, 0755);
    struct gvs_conn *c = test_session(uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    gvs_conn_close(c);
    kill(g.pid, SIGTERM);
    ASSERT_EQ(waitpid(g.pid, NULL, 0), g.pid);

    ASSERT_EQ(test_write_file(&g, "file", "", file, sizeof(file)), 0);
    snprintf(uri, sizeof(uri), "unix://%s/sub/gvsd.sock", file);
    const char *const blocked[] = {"--plugin-dir", test_plugins(), "--listen",
                                   uri, NULL};
    ASSERT_EQ(exits(&g, blocked, 1), 0);
    snprintf(text, sizeof(text),
             "cannot create %s/sub, the directory of %s: Not a directory",
             file, uri);
    ASSERT(test_gvsd_log_has(&g, text, 0));
    test_gvsd_stop(&g);
    return 0;
}

/* Every bind error names the URI and the OS's reason. */
TEST_IMPL(server_listen_errors)
{
    struct test_gvsd g = {0};
    char text[600];
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct test_gvsd other = {0};
    ASSERT_EQ(test_gvsd_init(&other), 0);
    const char *const taken[] = {"--plugin-dir", test_plugins(), "--listen",
                                 g.tcp_uri, NULL};
    ASSERT_EQ(exits(&other, taken, 1), 0);
    snprintf(text, sizeof(text), "cannot listen on %s: bind %s: Address "
                                 "already in use",
             g.tcp_uri, g.tcp_uri + strlen("tcp://"));
    ASSERT(test_gvsd_log_has(&other, text, 0));
    test_gvsd_stop(&other);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* gvs status names the URI and the OS's reason when it cannot connect. */
TEST_IMPL(server_status_connect_error)
{
    char cmd[600], out[1024];
    snprintf(cmd, sizeof(cmd),
             "GVS_CONFIG=/dev/null %s/bin/gvs status --server "
             "unix:///tmp/gvs-test-no-such.sock 2>&1",
             test_build_dir());
    FILE *p = popen(cmd, "r");
    ASSERT(p != NULL);
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    ASSERT_NE(pclose(p), 0);
    ASSERT(strstr(out, "gvs status: unix:///tmp/gvs-test-no-such.sock: "
                       "connect /tmp/gvs-test-no-such.sock: No such file or "
                       "directory\n") != NULL);
    return 0;
}

/* A socket file left by a gvsd that died, as SIGKILL leaves it. */
static int leave_socket(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return -1;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    int rc = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
                     listen(fd, 1) == 0
                 ? 0
                 : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}

/* A second gvsd never takes the endpoint of a live one, unix or shm; a
 * socket nobody answers on is taken over. */
TEST_IMPL(server_endpoint_taken)
{
    struct test_gvsd g = {0}, second = {0};
    char text[1024];
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    ASSERT_EQ(test_gvsd_init(&second), 0);
    const char *uris[] = {g.unix_uri, g.shm_uri};
    const char *paths[] = {g.sock_path, g.shm_uri + strlen("shm://")};
    for (int i = 0; i < 2; i++) {
        const char *const again[] = {"--plugin-dir", test_plugins(),
                                     "--listen", uris[i], NULL};
        ASSERT_EQ(exits(&second, again, 1), 0);
        snprintf(text, sizeof(text),
                 "%s is served by another gvsd: a connection to %s was "
                 "accepted; stop that one first, or listen on another path",
                 uris[i], paths[i]);
        ASSERT(test_gvsd_log_has(&second, text, 0));
    }
    /* The first one goes on serving, on the files it made. */
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_still_serving(&g, c), 0);
    gvs_conn_close(c);

    /* Stale: nobody listens on the file any more. */
    struct test_gvsd third = {.no_default_listen = 1};
    ASSERT_EQ(test_gvsd_init(&third), 0);
    char stale[200];
    snprintf(stale, sizeof(stale), "unix://%s/stale.sock", third.dir);
    ASSERT_EQ(leave_socket(stale + strlen("unix://")), 0);
    const char *const take[] = {"--listen", stale, NULL};
    ASSERT_EQ(test_gvsd_start(&third, take), 0);
    c = test_session(stale);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 10), 0);
    gvs_conn_close(c);

    /* A file that is not a socket is never removed. */
    char file[300], uri[320];
    ASSERT_EQ(test_write_file(&second, "data", "keep me\n", file,
                              sizeof(file)),
              0);
    snprintf(uri, sizeof(uri), "unix://%s", file);
    const char *const clash[] = {"--plugin-dir", test_plugins(), "--listen",
                                 uri, NULL};
    ASSERT_EQ(exits(&second, clash, 1), 0);
    snprintf(text, sizeof(text), "cannot listen on %s: %s exists and is "
                                 "not a socket",
             uri, file);
    ASSERT(test_gvsd_log_has(&second, text, 0));
    ASSERT_EQ(access(file, F_OK), 0);
    ASSERT_EQ(test_gvsd_stop(&third), 0);
    test_gvsd_stop(&second);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A plugin asked for that is not there stops gvsd, and so does having no
 * plugin at all. */
TEST_IMPL(server_plugin_missing)
{
    struct test_gvsd g = {0};
    char text[800], empty[200];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    const char *const nope[] = {"--plugin-dir", test_plugins(), "--plugin",
                                "echo", "--plugin", "nope", "--listen",
                                g.unix_uri, NULL};
    ASSERT_EQ(exits(&g, nope, 1), 0);
    snprintf(text, sizeof(text), "no plugin nope in %s (found: echo, peer)",
             test_plugins());
    ASSERT(test_gvsd_log_has(&g, text, 0));

    snprintf(empty, sizeof(empty), "%s/plugins", g.dir);
    ASSERT_EQ(mkdir(empty, 0755), 0);
    const char *const named[] = {"--plugin-dir", empty, "--plugin", "cudart",
                                 "--listen", g.unix_uri, NULL};
    ASSERT_EQ(exits(&g, named, 1), 0);
    snprintf(text, sizeof(text), "no plugin cudart in %s (found: none)",
             empty);
    ASSERT(test_gvsd_log_has(&g, text, 0));

    const char *const none[] = {"--plugin-dir", empty, "--listen", g.unix_uri,
                                NULL};
    ASSERT_EQ(exits(&g, none, 1), 0);
    snprintf(text, sizeof(text), "no plugin loaded from %s: nothing to serve",
             empty);
    ASSERT(test_gvsd_log_has(&g, text, 0));
    ASSERT(access(g.sock_path, F_OK) != 0);
    test_gvsd_stop(&g);
    return 0;
}
