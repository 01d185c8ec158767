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
    "usage: gvs run [OPTION]... [--] PROGRAM [ARGS...]\n"
    "Runs PROGRAM with its GPU calls served by gvsd: by the server at URI,\n"
    "else by a private gvsd started for the life of the program.\n"
    "\n"
    "  --server URI       the gvsd to use (unix:///path, tcp://host:port,\n"
    "                     tls://host:port, shm:///path; in a guest,\n"
    "                     ivshmem:///sys/bus/pci/devices/ADDR/resource2)\n"
    "  --gvsd PATH        the private gvsd to start (default: the gvsd\n"
    "                     beside gvs)\n"
    "  --log-level LEVEL  the private gvsd's: error, warn (default), info\n"
    "                     or debug\n"
    "  -h, --help         show this text\n"
    "\n"
    "Exit status, as env's and timeout's: PROGRAM's own, 128+N when signal\n"
    "N ended it; 125 when gvs run fails (a bad command line, no private\n"
    "gvsd, a PROGRAM gvs cannot serve: statically linked, or setuid or\n"
    "setgid); 126 when PROGRAM was found but cannot be run; 127 when it\n"
    "was not found.\n";

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

/* 0, 1 after printing the usage, or -1 after saying what is wrong. */
static int parse(int argc, char **argv, struct run_opts *o)
{
    enum { OPT_SERVER = 256, OPT_GVSD, OPT_LOG_LEVEL };
    static const struct option opts[] = {
        {"server", required_argument, NULL, OPT_SERVER},
        {"gvsd", required_argument, NULL, OPT_GVSD},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    /* "+": options end at the program's name even without "--". */
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        if (c == OPT_SERVER) {
            o->server = optarg;
        } else if (c == OPT_GVSD) {
            o->gvsd = optarg;
        } else if (c == OPT_LOG_LEVEL) {
            o->log_level = optarg;
        } else if (c == 'h') {
            fputs(run_usage, stdout);
            return 1;
        } else {
            gvs_option_error("run", c, argv);
            return -1;
        }
    }
    if (optind >= argc) {
        gvs_usage_error("run", "no program given");
        return -1;
    }
    o->argv = argv + optind;
    return 0;
}

/* The frontend libraries go first in the program's library path, and
 * Triton, which links the helpers it compiles with -lcuda from the
 * directory it finds the driver in, is pointed at ours. */
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
    int rc = setenv("LD_LIBRARY_PATH", path, 1) |
             setenv("TRITON_LIBCUDA_PATH", dir, 1) |
             setenv("GVS_SERVER", server, 1);
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
        /* As env: 127 when there is no such program, 126 when there is
         * one that cannot be run. */
        int err = errno;
        fprintf(stderr, "gvs: cannot run %s: %s\n", argv[0], strerror(err));
        _exit(err == ENOENT ? 127 : 126);
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
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : GVS_TOOL_FAILED;
    /* Before any gvsd starts: a program gvs cannot reach is not run. */
    char path[PATH_MAX], why[PATH_MAX + 160];
    if (gvs_program_find(o.argv[0], path, sizeof(path)) == 0 &&
        gvs_program_unservable(path, why, sizeof(why))) {
        fprintf(stderr, "gvs run: %s\n", why);
        return GVS_TOOL_FAILED;
    }
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
        /* The private gvsd shares the user's terminal: only what needs
         * attention, unless asked for more. */
        if (gvs_daemon_start(&d, o.gvsd != NULL ? o.gvsd : gvsd,
                             o.log_level != NULL ? o.log_level : "warn") < 0)
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
