/* The gvs command. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "test_server_harness.h"

struct run_result {
    int status; /* exit code, 128+signal if killed */
    char out[4096];
    char err[4096];
};

static void slurp(int fd, char *buf, size_t len)
{
    size_t got = 0;
    ssize_t r;
    while (got < len - 1 && (r = read(fd, buf + got, len - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
}

/* Runs bin/gvs with args, capturing stdout and stderr (stderr into a
 * file so that neither pipe can fill while the other is drained). */
static int run_gvs(const char *const *args, struct run_result *r)
{
    char bin[512], errpath[64] = "/tmp/gvs-cli-err-XXXXXX";
    const char *argv[32];
    int n = 0, p[2];
    snprintf(bin, sizeof(bin), "%s/bin/gvs", test_build_dir());
    argv[n++] = bin;
    while (*args != NULL && n < 31)
        argv[n++] = *args++;
    argv[n] = NULL;
    int efd = mkstemp(errpath);
    if (efd < 0 || pipe(p) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        dup2(efd, STDERR_FILENO);
        close(p[0]);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    slurp(p[0], r->out, sizeof(r->out));
    close(p[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    r->status = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                    : WEXITSTATUS(status);
    lseek(efd, 0, SEEK_SET);
    slurp(efd, r->err, sizeof(r->err));
    close(efd);
    unlink(errpath);
    return 0;
}

/* 1 if some process's command line mentions s. */
static int process_mentions(const char *s)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    while (d != NULL && !found && (e = readdir(d)) != NULL) {
        char path[300], cmd[4096];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, cmd, sizeof(cmd) - 1);
        close(fd);
        for (ssize_t i = 0; i < n; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        cmd[n > 0 ? n : 0] = '\0';
        found = strstr(cmd, s) != NULL;
    }
    if (d != NULL)
        closedir(d);
    return found;
}

TEST_IMPL(cli_run_private)
{
    struct run_result r;
    struct stat st;
    char frontend[600];
    const char *const args[] = {
        "run", "--", "/bin/sh", "-c",
        "echo $GVS_SERVER; echo $LD_LIBRARY_PATH; exit 3", NULL};
    unsetenv("GVS_FRONTEND_DIR");
    setenv("LD_LIBRARY_PATH", "/old/lib", 1);
    ASSERT_EQ(run_gvs(args, &r), 0);
    ASSERT_EQ(r.status, 3);
    ASSERT(strncmp(r.out, "unix:///", 8) == 0);
    char *nl = strchr(r.out, '\n');
    ASSERT(nl != NULL);
    *nl = '\0';
    ASSERT(strstr(r.out, "/gvsd.sock") != NULL);
    snprintf(frontend, sizeof(frontend), "%s/bin/../lib/gvs/frontend:/old/lib\n",
             test_build_dir());
    ASSERT_STR_EQ(nl + 1, frontend);
    /* The private directory and the daemon are gone. */
    char *dir = r.out + strlen("unix://");
    *strrchr(dir, '/') = '\0';
    ASSERT(stat(dir, &st) < 0);
    ASSERT(!process_mentions(dir));
    return 0;
}

TEST_IMPL(cli_run_server)
{
    struct run_result r;
    const char *const args[] = {"run", "--server", "tcp://127.0.0.1:1", "/bin/sh",
                                "-c", "echo $GVS_SERVER $LD_LIBRARY_PATH",
                                NULL};
    setenv("GVS_FRONTEND_DIR", "/my/frontend", 1);
    unsetenv("LD_LIBRARY_PATH");
    ASSERT_EQ(run_gvs(args, &r), 0);
    ASSERT_EQ(r.status, 0);
    ASSERT_STR_EQ(r.out, "tcp://127.0.0.1:1 /my/frontend\n");
    return 0;
}

TEST_IMPL(cli_run_status)
{
    struct run_result r;
    const char *const killed[] = {"run", "--", "/bin/sh", "-c", "kill -9 $$",
                                  NULL};
    ASSERT_EQ(run_gvs(killed, &r), 0);
    ASSERT_EQ(r.status, 128 + 9);
    const char *const missing[] = {"run", "--", "/nonexistent/prog", NULL};
    ASSERT_EQ(run_gvs(missing, &r), 0);
    ASSERT_EQ(r.status, 127);
    ASSERT(strstr(r.err, "cannot run /nonexistent/prog") != NULL);
    return 0;
}

TEST_IMPL(cli_run_gvsd_fails)
{
    struct run_result r;
    const char *const args[] = {"run", "--gvsd", "/bin/false", "--", "/bin/true",
                                NULL};
    ASSERT_EQ(run_gvs(args, &r), 0);
    ASSERT_EQ(r.status, 125);
    ASSERT(strstr(r.err, "gvs: /bin/false exited with status 1 before it was "
                         "ready") != NULL);
    return 0;
}

TEST_IMPL(cli_usage)
{
    struct run_result r;
    const char *const help[] = {"help", NULL};
    ASSERT_EQ(run_gvs(help, &r), 0);
    ASSERT_EQ(r.status, 0);
    ASSERT(strstr(r.out, "usage: gvs") != NULL);
    const char *const version[] = {"version", NULL};
    ASSERT_EQ(run_gvs(version, &r), 0);
    ASSERT_EQ(r.status, 0);
    ASSERT(strncmp(r.out, "gvs ", 4) == 0);
    const char *const bogus[] = {"bogus", NULL};
    ASSERT_EQ(run_gvs(bogus, &r), 0);
    ASSERT_EQ(r.status, 125);
    const char *const noprog[] = {"run", "--", NULL};
    ASSERT_EQ(run_gvs(noprog, &r), 0);
    ASSERT_EQ(r.status, 125);
    ASSERT(strstr(r.err, "no program given") != NULL);
    return 0;
}
