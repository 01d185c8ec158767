#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "stats.h"
#include "workers.h"

/* How often gvsd_workers_stop looks for ended workers. */
#define STOP_POLL_MS 10

int gvsd_workers_init(struct gvsd_workers *ws, int max)
{
    ws->w = gvs_calloc((size_t)max, sizeof(*ws->w));
    ws->n = 0;
    ws->max = max;
    return ws->w != NULL ? 0 : GVS_E_NOMEM;
}

void gvsd_workers_free(struct gvsd_workers *ws)
{
    gvs_free(ws->w);
    ws->w = NULL;
    ws->n = ws->max = 0;
}

void gvsd_workers_add(struct gvsd_workers *ws, pid_t pid, uint32_t session,
                      int stats_slot)
{
    struct gvsd_worker *w = &ws->w[ws->n++];
    w->pid = pid;
    w->session = session;
    w->stopping = 0;
    w->stats_slot = stats_slot;
    clock_gettime(CLOCK_MONOTONIC, &w->start);
}

/* Logs how the worker ended and frees its slot of the session table. */
static void ended(const struct gvsd_worker *w, int status)
{
    gvsd_stats_release(w->stats_slot, w->session);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double secs = (double)(now.tv_sec - w->start.tv_sec) +
                  (double)(now.tv_nsec - w->start.tv_nsec) / 1e9;
    if (WIFSIGNALED(status) && w->stopping && WTERMSIG(status) == SIGTERM)
        gvs_info("session %u: worker %ld stopped by the shutdown after %.3f s",
                 w->session, (long)w->pid, secs);
    else if (WIFSIGNALED(status))
        gvs_warn("session %u: worker %ld killed by signal %d (%s) after "
                 "%.3f s",
                 w->session, (long)w->pid, WTERMSIG(status),
                 strsignal(WTERMSIG(status)), secs);
    else
        gvs_info("session %u: worker %ld exited with status %d after %.3f s",
                 w->session, (long)w->pid, WEXITSTATUS(status), secs);
}

void gvsd_workers_reap(struct gvsd_workers *ws)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < ws->n; i++) {
            if (ws->w[i].pid != pid)
                continue;
            ended(&ws->w[i], status);
            ws->w[i] = ws->w[--ws->n];
            break;
        }
    }
}

void gvsd_workers_stop(struct gvsd_workers *ws, unsigned grace_ms)
{
    for (int i = 0; i < ws->n; i++) {
        ws->w[i].stopping = 1;
        kill(ws->w[i].pid, SIGTERM);
    }
    for (unsigned waited = 0; ws->n > 0 && waited < grace_ms;
         waited += STOP_POLL_MS) {
        gvsd_workers_reap(ws);
        if (ws->n > 0)
            usleep(STOP_POLL_MS * 1000);
    }
    for (int i = 0; i < ws->n; i++)
        kill(ws->w[i].pid, SIGKILL);
    while (ws->n > 0) {
        int status;
        pid_t pid = waitpid(ws->w[0].pid, &status, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid > 0)
            ended(&ws->w[0], status);
        ws->w[0] = ws->w[--ws->n];
    }
}
