/*
 * What a timed-out test was doing, printed before the runner kills it:
 * every process of its group (the test, what it forked, the gvsd it
 * started and that gvsd's workers), each thread with its name, state,
 * kernel wait channel and system call, its kernel stack when readable,
 * and user stacks through gdb when gdb is installed.  A hang seen once
 * in CI is then diagnosed from its log.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "hang_report.h"

/* Reads /proc/<path> into buf, newlines kept; "" when unreadable.
 * Returns the bytes read. */
static size_t read_proc(const char *path, char *buf, size_t len)
{
    char full[256];
    snprintf(full, sizeof(full), "/proc/%s", path);
    buf[0] = '\0';
    FILE *f = fopen(full, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return n;
}

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '\n')
        s[--n] = '\0';
}

/* The process group of pid, from /proc/<pid>/stat (field 5, after the
 * parenthesized name, which may itself hold spaces and parentheses). */
static pid_t group_of(int pid)
{
    char path[64], stat[1024];
    snprintf(path, sizeof(path), "%d/stat", pid);
    read_proc(path, stat, sizeof(stat));
    const char *p = strrchr(stat, ')');
    char state;
    int ppid, pgrp;
    if (p == NULL || sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
        return -1;
    return (pid_t)pgrp;
}

static void report_thread(int pid, int tid)
{
    char path[128], comm[64], wchan[128], sys[256], status[2048];
    snprintf(path, sizeof(path), "%d/task/%d/comm", pid, tid);
    read_proc(path, comm, sizeof(comm));
    snprintf(path, sizeof(path), "%d/task/%d/wchan", pid, tid);
    read_proc(path, wchan, sizeof(wchan));
    snprintf(path, sizeof(path), "%d/task/%d/syscall", pid, tid);
    read_proc(path, sys, sizeof(sys));
    snprintf(path, sizeof(path), "%d/task/%d/status", pid, tid);
    read_proc(path, status, sizeof(status));
    chomp(comm);
    chomp(wchan);
    chomp(sys);
    const char *state = strstr(status, "State:");
    char st[32] = "?";
    if (state != NULL)
        sscanf(state, "State: %31[^\n]", st);
    fprintf(stderr, "  thread %d %-16s %-14s wchan=%s syscall=%.60s\n", tid,
            comm, st, wchan[0] ? wchan : "-", sys);
    char stack[4096];
    snprintf(path, sizeof(path), "%d/task/%d/stack", pid, tid);
    read_proc(path, stack, sizeof(stack));
    for (char *line = strtok(stack, "\n"); line != NULL;
         line = strtok(NULL, "\n"))
        fprintf(stderr, "      %s\n", line);
}

static void report_process(int pid)
{
    char path[64], cmd[512];
    snprintf(path, sizeof(path), "%d/cmdline", pid);
    size_t n = read_proc(path, cmd, sizeof(cmd));
    for (size_t i = 0; i + 1 < n; i++)
        if (cmd[i] == '\0')
            cmd[i] = ' ';
    fprintf(stderr, "process %d: %s\n", pid, cmd);
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (isdigit((unsigned char)e->d_name[0]))
            report_thread(pid, atoi(e->d_name));
    closedir(d);
    char gdb[256];
    snprintf(gdb, sizeof(gdb),
             "command -v gdb >/dev/null && timeout 30 gdb -nx -batch -p %d "
             "-ex 'thread apply all bt' 2>/dev/null | grep -E '^(Thread|#)' "
             ">&2",
             pid);
    fflush(stderr);
    if (system(gdb) != 0)
        fprintf(stderr, "  (no user stacks: gdb missing or failed)\n");
}

void hang_report(pid_t group)
{
    fprintf(stderr, "--- hang report: process group %d ---\n", (int)group);
    DIR *d = opendir("/proc");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (isdigit((unsigned char)e->d_name[0]) &&
            group_of(atoi(e->d_name)) == group)
            report_process(atoi(e->d_name));
    closedir(d);
    fprintf(stderr, "--- end of hang report ---\n");
}
