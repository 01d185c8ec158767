/*
 * Runs one test (argv[1]) or all of them, each in a child process of its
 * own process group, killed with everything it started after
 * TEST_TIMEOUT_S seconds, once hang_report has said what each of its
 * threads was waiting for.  Prints "N passed, N failed".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hang_report.h"
#include "test.h"
#include "test-list.h"

/* GVS_TEST_TIMEOUT_S overrides it (slower builds, or to see a report). */
#define TEST_TIMEOUT_S 60
#define POLL_NS 5000000L

#define TEST_DECLARE(name) int test_##name(void);
TEST_LIST(TEST_DECLARE)

struct test_entry {
    const char *name;
    int (*fn)(void);
};

#define TEST_ROW(name) {#name, test_##name},
static const struct test_entry tests[] = {TEST_LIST(TEST_ROW){NULL, NULL}};

const char *test_build_dir(void)
{
    const char *d = getenv("GVS_BUILD_DIR");
    return d != NULL ? d : ".";
}

static int timeout_s(void)
{
    const char *env = getenv("GVS_TEST_TIMEOUT_S");
    int s = env != NULL ? atoi(env) : 0;
    return s > 0 ? s : TEST_TIMEOUT_S;
}

static int run_one(const struct test_entry *t)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_IGN);
        _exit(t->fn() == 0 ? 0 : 1);
    }
    /* Both sides set the group: whichever runs first, it exists before
     * the runner may signal it. */
    setpgid(pid, pid);
    int status;
    pid_t r;
    const struct timespec tick = {0, POLL_NS};
    long long left = (long long)timeout_s() * 1000000000 / POLL_NS;
    while (((r = waitpid(pid, &status, WNOHANG)) == 0 ||
            (r < 0 && errno == EINTR)) &&
           left-- > 0)
        nanosleep(&tick, NULL);
    if (r <= 0) {
        hang_report(pid);
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        printf("FAILED  %s (timeout after %d s)\n", t->name, timeout_s());
        return 1;
    }
    /* What the test started and left behind ends with it. */
    kill(-pid, SIGKILL);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("ok      %s\n", t->name);
        return 0;
    }
    if (WIFSIGNALED(status))
        printf("FAILED  %s (signal %d)\n", t->name, WTERMSIG(status));
    else
        printf("FAILED  %s\n", t->name);
    return 1;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, found = 0;
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (const struct test_entry *t = tests; t->name; t++)
            printf("%s\n", t->name);
        return 0;
    }
    for (const struct test_entry *t = tests; t->name; t++) {
        if (argc > 1 && strcmp(argv[1], t->name) != 0)
            continue;
        found++;
        if (run_one(t) == 0)
            passed++;
        else
            failed++;
    }
    if (argc > 1 && found == 0) {
        fprintf(stderr, "no test named %s\n", argv[1]);
        return 2;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
