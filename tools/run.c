#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gvs.h"
#include "gvs/mem.h"

static const char run_usage[] =
    "usage: gvs run [--server URI] [--gvsd PATH] [--log-level LEVEL] -- "
    "PROGRAM [ARGS...]\n";

struct run_opts {
    const char *server;
    const char *gvsd;
    const char *log_level;
    char **argv; /* the program and its arguments */
};

static volatile sig_atomic_t program_pid;

/* SIGTERM and SIGHUP sent to gvs are meant for the program; gvs stays to
 * stop the daemon once the program is gone. */
static void forward(int sig)
{
    if (program_pid > 0)
        kill((pid_t)program_pid, sig);
}

static int parse(int argc, char **argv, struct run_opts *o)
{
    enum { OPT_SERVER = 256, OPT_GVSD, OPT_LOG_LEVEL };
    static const struct option opts[] = {
        {"server", required_argument, NULL, OPT_SERVER},
        {"gvsd", required_argument, NULL, OPT_GVSD},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    /* "+": options end at the program's name even without "--". */
    while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (c == OPT_SERVER)
            o->server = optarg;
        else if (c == OPT_GVSD)
            o->gvsd = optarg;
        else if (c == OPT_LOG_LEVEL)
            o->log_level = optarg;
        else {
            fprintf(stderr, "gvs run: bad option %s\n%s", argv[optind - 1],
                    run_usage);
            return -1;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gvs run: no program given\n%s", run_usage);
        return -1;
    }
    o->argv = argv + optind;
    return 0;
}

/* The frontend libraries go first in the program's library path. */
static int program_env(const char *exe_dir, const char *server)
{
    char dir[PATH_MAX];
    const char *env = getenv("GVS_FRONTEND_DIR");
    int n;
    if (env != NULL && env[0] != '\0')
        n = snprintf(dir, sizeof(dir), "%s", env);
    else
        n = snprintf(dir, sizeof(dir), "%s/../lib/gvs/frontend", exe_dir);
    if (n < 0 || (size_t)n >= sizeof(dir))
        return -1;
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t len = strlen(dir) + (old != NULL ? strlen(old) : 0) + 2;
    char *path = gvs_malloc(len);
    if (path == NULL)
        return -1;
    snprintf(path, len, "%s%s%s", dir, old != NULL && old[0] ? ":" : "",
             old != NULL ? old : "");
    int rc = setenv("LD_LIBRARY_PATH", path, 1) | setenv("GVS_SERVER", server, 1);
    gvs_free(path);
    return rc;
}

static int run_program(char **argv)
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gvs: fork: %s\n", strerror(errno));
        return GVS_TOOL_FAILED;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "gvs: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    program_pid = pid;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return GVS_TOOL_FAILED;
    program_pid = 0;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

int gvs_cmd_run(int argc, char **argv)
{
    struct run_opts o = {0};
    char exe_dir[PATH_MAX], gvsd[PATH_MAX + 8];
    struct gvs_private_daemon d = {.pid = -1};
    if (parse(argc, argv, &o) < 0)
        return GVS_TOOL_FAILED;
    if (gvs_exe_dir(exe_dir, sizeof(exe_dir)) < 0) {
        fprintf(stderr, "gvs: cannot find my own executable\n");
        return GVS_TOOL_FAILED;
    }
    /* Like system(): ^C is for the program; gvs waits and cleans up. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTERM, forward);
    signal(SIGHUP, forward);
    if (o.server == NULL) {
        snprintf(gvsd, sizeof(gvsd), "%s/gvsd", exe_dir);
        if (gvs_daemon_start(&d, o.gvsd != NULL ? o.gvsd : gvsd,
                             o.log_level) < 0)
            return GVS_TOOL_FAILED;
        o.server = d.uri;
    }
    int status = GVS_TOOL_FAILED;
    if (program_env(exe_dir, o.server) == 0)
        status = run_program(o.argv);
    else
        fprintf(stderr, "gvs: cannot set up the environment\n");
    gvs_daemon_stop(&d);
    return status;
}
