/*
 * The `gvs` command: subcommands share these helpers.
 */
#ifndef GVS_TOOL_H
#define GVS_TOOL_H

#include <stddef.h>
#include <sys/types.h>

/* Exit status of `gvs` itself when it cannot do what was asked.  `gvs
 * run` returns it for a command line it cannot read too: like env's and
 * timeout's, its own failures are 125, apart from the program's statuses
 * (docs/man/gvs.1.md, "Exit status"). */
#define GVS_TOOL_FAILED 125

/* Exit status of `gvs` and `gvs status` for a command line they cannot
 * read. */
#define GVS_TOOL_USAGE 2

/* Prints "gvs CMD: " and the message on stderr, then where the usage
 * is (`gvs CMD --help`).  cmd is "" for `gvs` itself. */
__attribute__((format(printf, 2, 3))) void gvs_usage_error(const char *cmd,
                                                          const char *fmt,
                                                          ...);

/* gvs_usage_error for getopt_long's error c (gvs/cli.h). */
void gvs_option_error(const char *cmd, int c, char *const *argv);

/* `gvs run`: argv[0] is "run".  Returns the exit status. */
int gvs_cmd_run(int argc, char **argv);

/* `gvs status`: argv[0] is "status".  Returns the exit status. */
int gvs_cmd_status(int argc, char **argv);

/* The file execvp(name) runs: name itself when it holds a '/', else the
 * first executable regular file named name in a directory of $PATH
 * (/bin:/usr/bin when it is unset), written to out (len bytes).  0, or
 * -1 when there is none. */
int gvs_program_find(const char *name, char *out, size_t len);

/* 1 when `gvs run` cannot serve the program file at path, with why in
 * why (len bytes): an ELF executable without a dynamic loader (no
 * PT_INTERP: statically linked, so gvs's libraries never enter it), or
 * one whose setuid or setgid bit changes who runs it (the loader then
 * ignores LD_LIBRARY_PATH).  Else 0, also for a file it cannot read or
 * that is not ELF: exec tells what is wrong with those. */
int gvs_program_unservable(const char *path, char *why, size_t len);

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
