#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gvs.h"
#include "gvs/err.h"

#define READY_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS 5000
#define STOP_POLL_MS 10

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A short directory: a unix socket path must fit in 108 bytes. */
static int make_dir(struct gvs_private_daemon *d)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0' || strlen(tmp) > 64)
        tmp = "/tmp";
    snprintf(d->dir, sizeof(d->dir), "%s/gvs-run-XXXXXX", tmp);
    if (mkdtemp(d->dir) == NULL) {
        fprintf(stderr, "gvs: cannot create a directory in %s: %s\n", tmp,
                strerror(errno));
        return GVS_E_IO;
    }
    snprintf(d->uri, sizeof(d->uri), "unix://%s/gvsd.sock", d->dir);
    return 0;
}

/* In the forked child.  The daemon gets its own process group, so a
 * terminal's ^C reaches the program but not gvsd, which must outlive the
 * program to answer its last calls; PDEATHSIG stops it if gvs dies. */
__attribute__((noreturn)) static void exec_gvsd(const struct gvs_private_daemon *d,
                                                const char *gvsd,
                                                const char *log_level,
                                                int ready_fd)
{
    char fd_text[16], listen[400];
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    /* dup() clears close-on-exec: only this end reaches gvsd. */
    int fd = dup(ready_fd);
    snprintf(fd_text, sizeof(fd_text), "%d", fd);
    snprintf(listen, sizeof(listen), "%s", d->uri);
    char *argv[] = {(char *)gvsd, "--listen", listen, "--ready-fd", fd_text,
                    log_level != NULL ? "--log-level" : NULL,
                    (char *)log_level, NULL};
    if (fd >= 0)
        execv(gvsd, argv);
    fprintf(stderr, "gvs: cannot run %s: %s\n", gvsd, strerror(errno));
    _exit(127);
}

static void describe_exit(const char *gvsd, int status)
{
    if (WIFSIGNALED(status))
        fprintf(stderr, "gvs: %s was killed by signal %d before it was ready\n",
                gvsd, WTERMSIG(status));
    else
        fprintf(stderr, "gvs: %s exited with status %d before it was ready\n",
                gvsd, WEXITSTATUS(status));
}

/* Reads "ready\n" from fd; on EOF or timeout gvsd failed to start. */
static int wait_ready(struct gvs_private_daemon *d, const char *gvsd, int fd)
{
    char buf[16];
    size_t got = 0;
    long long deadline = now_ms() + READY_TIMEOUT_MS;
    while (got < 6) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        long long left = deadline - now_ms();
        int n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            fprintf(stderr, "gvs: %s was not ready within %d s\n", gvsd,
                    READY_TIMEOUT_MS / 1000);
            return GVS_E_TIMEOUT;
        }
        ssize_t r = read(fd, buf + got, sizeof(buf) - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int status;
            if (waitpid(d->pid, &status, 0) == d->pid) {
                d->pid = -1;
                describe_exit(gvsd, status);
            }
            return GVS_E_CLOSED;
        }
        got += (size_t)r;
    }
    if (memcmp(buf, "ready\n", 6) != 0) {
        fprintf(stderr, "gvs: %s said something other than ready\n", gvsd);
        return GVS_E_PROTO;
    }
    return 0;
}

int gvs_daemon_start(struct gvs_private_daemon *d, const char *gvsd,
                     const char *log_level)
{
    int p[2];
    d->pid = -1;
    int rc = make_dir(d);
    if (rc < 0)
        return rc;
    if (pipe2(p, O_CLOEXEC) < 0) {
        fprintf(stderr, "gvs: pipe: %s\n", strerror(errno));
        gvs_daemon_stop(d);
        return GVS_E_IO;
    }
    d->pid = fork();
    if (d->pid == 0) {
        close(p[0]);
        exec_gvsd(d, gvsd, log_level, p[1]);
    }
    close(p[1]);
    rc = d->pid < 0 ? GVS_E_IO : wait_ready(d, gvsd, p[0]);
    if (d->pid < 0 && rc == GVS_E_IO)
        fprintf(stderr, "gvs: fork: %s\n", strerror(errno));
    close(p[0]);
    if (rc < 0)
        gvs_daemon_stop(d);
    return rc;
}

/* Waits up to ms for the daemon; 1 when it has been reaped. */
static int reap_within(pid_t pid, long long ms)
{
    long long deadline = now_ms() + ms;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return 1;
        if (now_ms() >= deadline)
            return 0;
        usleep(STOP_POLL_MS * 1000);
    }
}

void gvs_daemon_stop(struct gvs_private_daemon *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        if (!reap_within(d->pid, STOP_TIMEOUT_MS)) {
            kill(d->pid, SIGKILL);
            reap_within(d->pid, STOP_TIMEOUT_MS);
        }
        d->pid = -1;
    }
    if (d->dir[0] != '\0') {
        char sock[300];
        /* gvsd removes its socket on a clean stop; not after a crash. */
        snprintf(sock, sizeof(sock), "%s/gvsd.sock", d->dir);
        unlink(sock);
        if (rmdir(d->dir) < 0)
            fprintf(stderr, "gvs: cannot remove %s: %s\n", d->dir,
                    strerror(errno));
        d->dir[0] = '\0';
    }
}
