/*
 * The `gvs` command: subcommands share these helpers.
 */
#ifndef GVS_TOOL_H
#define GVS_TOOL_H

#include <stddef.h>
#include <sys/types.h>

/* Exit status of `gvs` itself when it cannot do what was asked. */
#define GVS_TOOL_FAILED 125

/* `gvs run`: argv[0] is "run".  Returns the exit status. */
int gvs_cmd_run(int argc, char **argv);

/* `gvs status`: argv[0] is "status".  Returns the exit status. */
int gvs_cmd_status(int argc, char **argv);

/* Directory of the running executable, or a negative GVS_E_* code. */
int gvs_exe_dir(char *out, size_t len);

/* A private gvsd started by `gvs run`. */
struct gvs_private_daemon {
    pid_t pid;
    char dir[256];   /* mkdtemp'd directory holding the socket */
    char uri[320];   /* unix://DIR/gvsd.sock */
};

/* Starts gvsd (path) on a socket in a new private directory and waits
 * until it is ready (10 s at most).  log_level may be NULL.  On failure
 * prints why, cleans up and returns a negative GVS_E_* code. */
int gvs_daemon_start(struct gvs_private_daemon *d, const char *gvsd,
                     const char *log_level);

/* SIGTERMs the daemon, waits for it (SIGKILL if it lingers) and removes
 * its directory. */
void gvs_daemon_stop(struct gvs_private_daemon *d);

#endif
