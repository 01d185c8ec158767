/*
 * Runs one test (argv[1]) or all of them, each in a child process killed
 * after TEST_TIMEOUT_S seconds.  Prints "N passed, N failed".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "test-list.h"

#define TEST_TIMEOUT_S 60

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

static int run_one(const struct test_entry *t)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        alarm(TEST_TIMEOUT_S);
        _exit(t->fn() == 0 ? 0 : 1);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("ok      %s\n", t->name);
        return 0;
    }
    if (WIFSIGNALED(status))
        printf("FAILED  %s (signal %d%s)\n", t->name, WTERMSIG(status),
               WTERMSIG(status) == SIGALRM ? ", timeout" : "");
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
