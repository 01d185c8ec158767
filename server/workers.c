#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "reasons.h"
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
                      int stats_slot, const char *peer)
{
    struct gvsd_worker *w = &ws->w[ws->n++];
    w->pid = pid;
    w->session = session;
    w->stopping = 0;
    w->killed = 0;
    w->stats_slot = stats_slot;
    snprintf(w->peer, sizeof(w->peer), "%s", peer);
    clock_gettime(CLOCK_MONOTONIC, &w->start);
}

void gvsd_workers_load(const struct gvsd_workers *ws, const char *peer,
                       struct gvsd_load *out)
{
    *out = (struct gvsd_load){0};
    for (int i = 0; i < ws->n; i++) {
        enum gvsd_slot_state st = gvsd_stats_state(ws->w[i].stats_slot,
                                                  ws->w[i].session);
        if (st == GVSD_SLOT_ACTIVE || st == GVSD_SLOT_STATUS) {
            out->sessions++;
        } else if (st == GVSD_SLOT_STARTING) {
            out->handshakes++;
            out->peer_handshakes += strcmp(ws->w[i].peer, peer) == 0;
        }
    }
}

static long long ms_since(const struct timespec *t, const struct timespec *now)
{
    return (long long)(now->tv_sec - t->tv_sec) * 1000 +
           (now->tv_nsec - t->tv_nsec) / 1000000;
}

int gvsd_workers_expire(struct gvsd_workers *ws, unsigned limit_ms)
{
    if (limit_ms == 0)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long next = -1;
    for (int i = 0; i < ws->n; i++) {
        struct gvsd_worker *w = &ws->w[i];
        if (w->killed || gvsd_stats_state(w->stats_slot, w->session) !=
                              GVSD_SLOT_STARTING)
            continue;
        long long left = (long long)limit_ms - ms_since(&w->start, &now);
        if (left > 0) {
            next = next < 0 || left < next ? left : next;
            continue;
        }
        gvs_warn("session %u: handshake still under way after %u ms, "
                 "killing worker %ld",
                 w->session, limit_ms, (long)w->pid);
        kill(w->pid, SIGKILL);
        w->killed = 1;
    }
    return (int)next;
}

/* Logs how the worker ended and frees its slot of the session table.  A
 * worker that could not leave its slot died: its session or handshake
 * is counted here. */
static void ended(const struct gvsd_worker *w, int status)
{
    enum gvsd_slot_state left = gvsd_stats_release(w->stats_slot, w->session);
    if (left == GVSD_SLOT_STARTING)
        gvsd_count_refusal(w->killed ? GVSD_REFUSED_TIMEOUT
                                     : GVSD_REFUSED_INTERNAL);
    else if (left != GVSD_SLOT_FREE)
        gvsd_count_end(GVSD_END_KILLED);
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
