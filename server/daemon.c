#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "daemon.h"
#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "plugins.h"
#include "refusals.h"
#include "session.h"
#include "signals.h"
#include "workers.h"

struct gvsd {
    pid_t pid;
    int sig_fd;
    struct gvs_listener *listeners[GVS_CONFIG_MAX_LISTEN];
    int nlisteners;
    struct gvsd_plugins plugins;
    struct gvsd_workers workers;
    struct gvsd_refusals refusals;
    struct gvsd_session_opts session; /* id: the next session's */
};

static void close_listeners(struct gvsd *d, int keep_path)
{
    for (int i = 0; i < d->nlisteners; i++)
        gvs_listener_close(d->listeners[i], keep_path);
    d->nlisteners = 0;
}

static int open_listeners(struct gvsd *d, const struct gvs_config *cfg)
{
    for (int i = 0; i < cfg->nlisten; i++) {
        struct gvs_listener *l;
        int rc = gvs_listen(cfg->listen[i], &l);
        if (rc < 0) {
            gvs_error("cannot listen on %s: %s", cfg->listen[i],
                      gvs_strerror(rc));
            return rc;
        }
        d->listeners[d->nlisteners++] = l;
        gvs_info("listening on %s", gvs_listener_uri(l));
    }
    return 0;
}

/* The worker must not outlive gvsd, must not hold the listening sockets
 * (nor remove their files) and must not see the parent's signals. */
__attribute__((noreturn)) static void worker_main(struct gvsd *d,
                                                  struct gvs_conn *c)
{
    gvsd_signals_reset();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != d->pid)
        _exit(1);
    close_listeners(d, 1);
    gvsd_refusals_close_all(&d->refusals, 1);
    gvsd_workers_free(&d->workers);
    int rc = gvsd_session_run(c, &d->plugins, &d->session);
    exit(rc == 0 ? 0 : 1);
}

static void accept_one(struct gvsd *d, struct gvs_listener *l)
{
    struct gvs_conn *c;
    int rc = gvs_accept(l, &c);
    if (rc == GVS_E_TIMEOUT)
        return;
    if (rc < 0) {
        gvs_warn("accept on %s failed: %s", gvs_listener_uri(l),
                 gvs_strerror(rc));
        return;
    }
    if (gvsd_workers_full(&d->workers)) {
        gvsd_refuse(&d->refusals, c, d->workers.max);
        return;
    }
    uint32_t id = d->session.id;
    gvs_info("session %u: started, peer %s on %s", id, gvs_conn_peer(c),
             gvs_listener_uri(l));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        worker_main(d, c);
    if (pid < 0)
        gvs_error("session %u: fork failed: %s", id, strerror(errno));
    else
        gvsd_workers_add(&d->workers, pid, id);
    d->session.id++;
    gvs_conn_close_copy(c);
}

static int serve(struct gvsd *d)
{
    struct pollfd pfd[1 + GVS_CONFIG_MAX_LISTEN + GVSD_REFUSALS_MAX];
    struct pollfd *lpfd = &pfd[1];
    struct pollfd *rpfd = &pfd[1 + d->nlisteners];
    pfd[0] = (struct pollfd){.fd = d->sig_fd, .events = POLLIN};
    for (int i = 0; i < d->nlisteners; i++)
        lpfd[i] = (struct pollfd){.fd = gvs_listener_fd(d->listeners[i]),
                                  .events = POLLIN};
    for (;;) {
        int nref = gvsd_refusals_pollfds(&d->refusals, rpfd);
        int n = poll(pfd, (nfds_t)(1 + d->nlisteners + nref),
                     gvsd_refusals_timeout(&d->refusals));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            gvs_error("poll failed: %s", strerror(errno));
            return 1;
        }
        if (pfd[0].revents) {
            int stop = 0, child = 0;
            gvsd_signals_drain(&stop, &child);
            if (child)
                gvsd_workers_reap(&d->workers);
            if (stop)
                return 0;
        }
        gvsd_refusals_service(&d->refusals, rpfd);
        for (int i = 0; i < d->nlisteners; i++)
            if (lpfd[i].revents)
                accept_one(d, d->listeners[i]);
    }
}

static void signal_ready(int fd)
{
    if (fd < 0)
        return;
    static const char msg[] = "ready\n";
    if (write(fd, msg, sizeof(msg) - 1) != (ssize_t)(sizeof(msg) - 1))
        gvs_warn("cannot write to the ready descriptor %d: %s", fd,
                 strerror(errno));
    close(fd);
}

int gvsd_run(const struct gvs_config *cfg, int ready_fd)
{
    struct gvsd d = {.pid = getpid(),
                     .session = {.id = 1,
                                 .max_frame = cfg->max_frame,
                                 .handshake_timeout_ms =
                                     cfg->handshake_timeout_ms,
                                 .cfg = cfg}};
    if (cfg->nlisten == 0) {
        gvs_error("nothing to listen on");
        return 1;
    }
    int rc = gvsd_plugins_load(&d.plugins, cfg->plugin_dir,
                               cfg->nplugins > 0 ? cfg->plugins : NULL,
                               cfg->nplugins);
    if (rc == 0)
        rc = gvsd_workers_init(&d.workers, cfg->max_sessions);
    if (rc == 0)
        rc = d.sig_fd = gvsd_signals_install();
    if (rc >= 0)
        rc = open_listeners(&d, cfg);
    int status = 1;
    if (rc >= 0) {
        if (d.plugins.n == 0)
            gvs_warn("no plugin loaded from %s", cfg->plugin_dir);
        signal_ready(ready_fd);
        status = serve(&d);
        gvs_info("shutting down");
    } else {
        gvs_error("cannot start: %s", gvs_strerror(rc));
    }
    close_listeners(&d, 0);
    gvsd_refusals_close_all(&d.refusals, 0);
    gvsd_workers_stop(&d.workers, GVSD_STOP_GRACE_MS);
    gvsd_workers_free(&d.workers);
    gvsd_plugins_unload(&d.plugins);
    return status;
}
