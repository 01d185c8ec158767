/* A program killed with posted work queued in gvsd, against one that
 * exits: the library's exit says LEAVING, so gvsd serves what the
 * exiting program posted; a killed one's session ends as vanished.  Over
 * unix:// (shm://'s rings), where gvsd sees the hang-up beside the
 * stream, its requests still in the ring are dropped, so that the
 * session ends at once instead of after seconds of work nobody will see
 * (natively, the driver abandons a killed process's work); over a plain
 * unix socket and tcp, what it sent is read and served first. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/client.h"
#include "gvs/err.h"
#include "test.h"
#include "test_server_harness.h"

/* Posted notes of NOTE_MS each: seconds of queued work. */
#define NOTES 100u
#define NOTE_MS 50u

enum via { VIA_UNIX, VIA_UNIX_PLAIN, VIA_TCP };

/* The child: posts NOTES slow notes through the library, says so on
 * out, then waits to be killed or exits as told. */
static void child_main(const char *uri, int out, int exit_after)
{
    static const struct gvs_client_plugin echo = {
        ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};
    struct gvs_client *c;
    uint8_t ms[4] = {NOTE_MS, 0, 0, 0};
    struct iovec iov = {ms, sizeof(ms)};
    setenv("GVS_CONFIG", "/dev/null", 1);
    setenv("GVS_SERVER", uri, 1);
    if (gvs_client_register(&echo) != 0 || gvs_client_get(&c) != 0)
        _exit(2);
    for (unsigned i = 0; i < NOTES; i++)
        if (gvs_client_post(c, ECHO_PLUGIN_ID, ECHO_OP_SLOW_NOTE, &iov, 1) !=
            0)
            _exit(3);
    /* The library's writer sends buffered posts within its polling
     * (50 us); gvsd takes them from the socket or ring, the first being
     * served meanwhile. */
    usleep(200 * 1000);
    if (exit_after)
        exit(0);
    char b = 'p';
    if (write(out, &b, 1) != 1)
        _exit(5);
    pause();
    _exit(6);
}

static int killed_or_exited(enum via via, int kill_it)
{
    struct test_gvsd g = {0};
    if (via == VIA_UNIX_PLAIN)
        setenv("GVS_UNIX_RINGS", "0", 1);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    const char *uri = via == VIA_TCP ? g.tcp_uri : g.unix_uri;
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(p[0]);
        child_main(uri, p[1], !kill_it);
    }
    close(p[1]);
    long long t0 = test_now_ms();
    if (kill_it) {
        char b;
        ASSERT_EQ(read(p[0], &b, 1), 1);
        ASSERT_EQ(kill(pid, SIGKILL), 0);
    }
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    close(p[0]);
    if (kill_it && via == VIA_UNIX) {
        ASSERT(WIFSIGNALED(st));
        /* Long before the queue's 5 s. */
        ASSERT(test_gvsd_log_has(&g, "session 1: ended after", 1500));
        ASSERT(test_gvsd_log_has(&g, ": vanished", 0));
        ASSERT_LT(test_now_ms() - t0, 3000);
    } else if (kill_it) {
        ASSERT(WIFSIGNALED(st));
        ASSERT(test_gvsd_log_has(&g, "session 1: ended after",
                                 NOTES * NOTE_MS + 10000));
        ASSERT(test_gvsd_log_has(&g, "100 call(s): vanished", 0));
    } else {
        ASSERT(WIFEXITED(st));
        ASSERT_EQ(WEXITSTATUS(st), 0);
        ASSERT(test_gvsd_log_has(&g, "session 1: ended after",
                                 NOTES * NOTE_MS + 10000));
        ASSERT(test_gvsd_log_has(&g, "100 call(s): closed", 0));
    }
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    unsetenv("GVS_UNIX_RINGS");
    return 0;
}

TEST_IMPL(client_killed_unix)
{
    return killed_or_exited(VIA_UNIX, 1);
}

TEST_IMPL(client_killed_unix_plain)
{
    return killed_or_exited(VIA_UNIX_PLAIN, 1);
}

TEST_IMPL(client_killed_tcp)
{
    return killed_or_exited(VIA_TCP, 1);
}

TEST_IMPL(client_exit_served)
{
    return killed_or_exited(VIA_UNIX, 0);
}
