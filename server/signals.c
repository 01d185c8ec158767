#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>

#include "gvs/err.h"
#include "signals.h"

static int pipe_fds[2] = {-1, -1};
static const int handled[] = {SIGTERM, SIGINT, SIGCHLD};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    /* A full pipe already holds a wake-up: a failed write loses nothing. */
    ssize_t w = write(pipe_fds[1], &b, 1);
    (void)w;
    errno = saved;
}

int gvsd_signals_install(void)
{
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
        return GVS_E_IO;
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
        if (sigaction(handled[i], &sa, NULL) < 0)
            return GVS_E_IO;
    signal(SIGPIPE, SIG_IGN);
    return pipe_fds[0];
}

void gvsd_signals_drain(int *stop, int *child)
{
    unsigned char buf[64];
    ssize_t n;
    while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == SIGCHLD)
                *child = 1;
            else
                *stop = 1;
        }
    }
}

void gvsd_signals_reset(void)
{
    for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
        signal(handled[i], SIG_DFL);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    pipe_fds[0] = pipe_fds[1] = -1;
}
