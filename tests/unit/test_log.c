#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "test.h"
#include "test_server_harness.h"

TEST_IMPL(log_levels)
{
    enum gvs_log_level l = GVS_LOG_ERROR;
    ASSERT_EQ(gvs_log_get_level(), GVS_LOG_WARN);
    ASSERT_EQ(gvs_log_parse_level("debug", &l), 0);
    ASSERT_EQ(l, GVS_LOG_DEBUG);
    ASSERT_EQ(gvs_log_parse_level("error", &l), 0);
    ASSERT_EQ(l, GVS_LOG_ERROR);
    ASSERT_EQ(gvs_log_parse_level("info", &l), 0);
    ASSERT_EQ(gvs_log_parse_level("warn", &l), 0);
    ASSERT_EQ(l, GVS_LOG_WARN);
    ASSERT_EQ(gvs_log_parse_level("WARN", &l), GVS_E_INVAL);
    ASSERT_EQ(gvs_log_parse_level("", &l), GVS_E_INVAL);
    ASSERT_EQ(gvs_log_parse_level("debug2", &l), GVS_E_INVAL);
    return 0;
}

TEST_IMPL(log_format)
{
    int p[2];
    char out[4096], want[128];
    ASSERT_EQ(pipe(p), 0);
    ASSERT_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    ASSERT_GE(dup2(p[1], STDERR_FILENO), 0);
    gvs_log_setup("gvsd", GVS_LOG_INFO);
    ASSERT_EQ(gvs_log_get_level(), GVS_LOG_INFO);
    gvs_info("hello %d", 5);
    gvs_debug("hidden %d", 6);
    gvs_log(GVS_LOG_DEBUG, "hidden too");
    gvs_error("bad %s", "thing");
    ssize_t n = read(p[0], out, sizeof(out) - 1);
    ASSERT_GT(n, 0);
    out[n] = '\0';
    snprintf(want, sizeof(want), "gvsd[%ld] INFO: hello 5\ngvsd[%ld] ERROR: bad thing\n",
             (long)getpid(), (long)getpid());
    ASSERT_STR_EQ(out, want);

    /* An overlong message is cut but still ends its line. */
    char big[3000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    gvs_warn("%s", big);
    n = read(p[0], out, sizeof(out) - 1);
    ASSERT_GT(n, 100);
    ASSERT_LT(n, 1100);
    ASSERT_EQ(out[n - 1], '\n');
    ASSERT(memchr(out, '\n', (size_t)n - 1) == NULL);
    return 0;
}

/* Whatever a message holds, it is one line, with nothing a terminal
 * acts on: newlines and escapes are shown as \xNN. */
TEST_IMPL(log_one_line)
{
    int p[2];
    char out[4096], want[256];
    ASSERT_EQ(pipe(p), 0);
    ASSERT_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    ASSERT_GE(dup2(p[1], STDERR_FILENO), 0);
    gvs_log_setup("gvsd", GVS_LOG_INFO);
    gvs_info("session 1: program %s pid %d", "x\nERR:\x1b[2J", 5);
    ssize_t n = read(p[0], out, sizeof(out) - 1);
    ASSERT_GT(n, 0);
    out[n] = '\0';
    snprintf(want, sizeof(want),
             "gvsd[%ld] INFO: session 1: program x\\x0aERR:\\x1b[2J pid 5\n",
             (long)getpid());
    ASSERT_STR_EQ(out, want);
    ASSERT(memchr(out, 0x1b, (size_t)n) == NULL);

    /* Escapes that outgrow the line are cut whole, and marked. */
    char big[1000];
    memset(big, '\n', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    gvs_warn("%s", big);
    n = read(p[0], out, sizeof(out) - 1);
    ASSERT_GT(n, 100);
    ASSERT_LE(n, 1024);
    out[n] = '\0';
    ASSERT_EQ(out[n - 1], '\n');
    ASSERT(memchr(out, '\n', (size_t)n - 1) == NULL);
    ASSERT_STR_EQ(out + n - 4, "...\n");
    ASSERT(strstr(out, "\\x0a\\x0a") != NULL);
    const char *dots = strstr(out, "...");
    ASSERT(dots != NULL);
    ASSERT_EQ((dots - strchr(out, '\\')) % 4, 0);
    return 0;
}

/* gvsd's default level is info (docs/config.md, log_level), so what it
 * loads and serves is on record without a flag. */
TEST_IMPL(log_gvsd_default)
{
    struct test_gvsd g = {0};
    char conf[300], plugins[512];
    ASSERT_EQ(test_gvsd_init(&g), 0);
    ASSERT_EQ(test_write_file(&g, "gvs.conf", "# no log_level\n", conf,
                              sizeof(conf)),
              0);
    snprintf(plugins, sizeof(plugins), "%s/tests/plugins", test_build_dir());
    /* A socket it cannot create stops it once the plugins are loaded. */
    const char *const args[] = {"--config", conf, "--plugin-dir", plugins,
                                "--plugin", "echo", "--listen",
                                "unix:///proc/gvs-test/s.sock", NULL};
    int status = test_gvsd_run_once(&g, args);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    ASSERT(test_gvsd_log_has(&g, "INFO: plugin echo: loaded", 0));
    test_gvsd_stop(&g); /* removes the directory: nothing runs */
    return 0;
}
