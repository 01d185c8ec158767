#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "gvs/auth.h"
#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/spin.h"
#include "metrics.h"
#include "plugins.h"
#include "reasons.h"
#include "refusals.h"
#include "session.h"
#include "signals.h"
#include "stats.h"
#include "workers.h"

struct gvsd {
    pid_t pid;
    int sig_fd;
    struct gvs_listener *listeners[GVS_CONFIG_MAX_LISTEN];
    int nlisteners;
    struct gvsd_plugins plugins;
    struct gvsd_workers workers;
    struct gvsd_refusals refusals;
    struct gvsd_metrics metrics;
    struct gvsd_session_opts session; /* id: the next session's */
    unsigned handshake_kill_ms; /* gvsd_workers_expire; 0: never */
};

/* A worker whose handshake outlives its own deadline by this much is
 * killed by the parent. */
#define HANDSHAKE_KILL_GRACE_MS 2000u

static void close_listeners(struct gvsd *d, int keep_path)
{
    for (int i = 0; i < d->nlisteners; i++)
        gvs_listener_close(d->listeners[i], keep_path);
    d->nlisteners = 0;
}

/* Access (docs/security.md) ---------------------------------------- */

/* Without a token, gvsd serves only this host unless told otherwise. */
static int check_exposure(const struct gvs_config *cfg)
{
    for (int i = 0; i < cfg->nlisten; i++) {
        int exposed = gvs_auth_uri_exposed(cfg->listen[i]);
        if (exposed < 0) {
            gvs_error("cannot listen on %s: %s", cfg->listen[i],
                      gvs_strerror(exposed));
            return exposed;
        }
        if (exposed && cfg->ntokens == 0 && !cfg->insecure) {
            gvs_error("refusing to listen on %s: not a loopback address and "
                      "no token is configured (add a token, or pass "
                      "--insecure)",
                      cfg->listen[i]);
            return GVS_E_CONFIG;
        }
    }
    return 0;
}

/* Makes the missing directories above a socket, as a service manager
 * makes /run/gvs: searchable by everyone whatever the umask, since who
 * may connect is decided by the socket's own mode and group. */
static int make_socket_dir(const char *uri, const char *path)
{
    char dir[sizeof(((struct gvs_uri *)0)->path)];
    snprintf(dir, sizeof(dir), "%s", path);
    char *end = strrchr(dir, '/');
    if (end == NULL || end == dir)
        return 0;
    *end = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char was = *p;
        *p = '\0';
        if (mkdir(dir, 0755) == 0 ? chmod(dir, 0755) < 0 : errno != EEXIST) {
            gvs_error("cannot create %s, the directory of %s: %s", dir, uri,
                      strerror(errno));
            return GVS_E_IO;
        }
        if (was == '\0')
            return 0;
        *p = was;
    }
}

/* A unix socket file is made owner-only (umask) and then given
 * socket_mode and socket_group, so that nobody else can connect in
 * between.  Every failure is logged with the URI and the OS's reason. */
static int listen_one(const struct gvs_config *cfg, const char *uri,
                      struct gvs_listener **l)
{
    struct gvs_uri u;
    int rc = gvs_uri_parse(uri, &u);
    if (rc < 0) {
        gvs_error("cannot listen on %s: %s", uri, gvs_strerror(rc));
        return rc;
    }
    int local = u.path[0] != '\0';
    uint32_t gid = (uint32_t)-1;
    if (local && cfg->socket_group != NULL &&
        (rc = gvs_auth_group_id(cfg->socket_group, &gid)) < 0) {
        gvs_error("socket_group %s: no such group", cfg->socket_group);
        return rc;
    }
    if (local && (rc = make_socket_dir(uri, u.path)) < 0)
        return rc;
    if (strcmp(u.scheme, "ivshmem") == 0 &&
        (rc = gvs_ivshmem_set_layout(cfg->ivshmem_slots, cfg->ivshmem_area)) <
            0) {
        gvs_error("cannot listen on %s: %u slots (ivshmem_slots) of %llu "
                  "bytes (ivshmem_area) pass the largest region, %llu GiB",
                  uri, cfg->ivshmem_slots,
                  (unsigned long long)cfg->ivshmem_area,
                  GVS_IVSHMEM_REGION_MAX >> 30);
        return rc;
    }
    mode_t old = umask(0177);
    rc = gvs_listen(uri, l);
    umask(old);
    if (rc == GVS_E_INUSE && local)
        gvs_error("%s is served by another gvsd: %s; stop that one first, "
                  "or listen on another path",
                  uri, gvs_comm_why());
    else if (rc < 0)
        gvs_error("cannot listen on %s: %s", uri,
                  gvs_comm_why()[0] != '\0' ? gvs_comm_why()
                                            : gvs_strerror(rc));
    if (rc < 0 || !local)
        return rc;
    if (chmod(u.path, cfg->socket_mode & 0777) < 0 ||
        (gid != (uint32_t)-1 && chown(u.path, (uid_t)-1, (gid_t)gid) < 0)) {
        gvs_error("cannot set the mode or group of %s: %s", u.path,
                  strerror(errno));
        gvs_listener_close(*l, 0);
        *l = NULL;
        return GVS_E_IO;
    }
    struct stat st;
    if (strcmp(u.scheme, "ivshmem") == 0 && stat(u.path, &st) == 0)
        gvs_info("%s: a region of %lld MiB (QEMU's size=%lldM), %u slots",
                 uri, (long long)st.st_size >> 20,
                 (long long)st.st_size >> 20, cfg->ivshmem_slots);
    return 0;
}

/* Whether a local peer may open a session: if not, it is told why and
 * the connection is closed, before any call.  Peers without
 * credentials (tcp, tls) are not subject to the allow-lists. */
static int peer_allowed(const struct gvs_config *cfg, struct gvs_conn *c,
                        const struct gvs_listener *l)
{
    uint32_t uid, gid;
    int32_t pid;
    if (cfg->nallow_uid == 0 && cfg->nallow_gid == 0)
        return 1;
    int rc = gvs_conn_peer_cred(c, &uid, &gid, &pid);
    if (rc == GVS_E_NOTSUP || (rc == 0 && gvs_auth_peer_allowed(cfg, uid, gid)))
        return 1;
    gvs_warn("refusing connection from %s on %s: %s", gvs_conn_peer(c),
             gvs_listener_uri(l),
             rc < 0 ? "no peer credentials" : "not in allow_uid/allow_gid");
    gvsd_count_refusal(GVSD_REFUSED_NOT_ALLOWED);
    /* The client reads this even when its HELLO finds us gone. */
    (void)gvsd_hello_reply(c, 0, GVS_E_DENIED,
                           "this user is not allowed to use gvsd", 0);
    gvs_conn_close(c);
    return 0;
}

static int open_listeners(struct gvsd *d, const struct gvs_config *cfg)
{
    for (int i = 0; i < cfg->nlisten; i++) {
        struct gvs_listener *l;
        int rc = listen_one(cfg, cfg->listen[i], &l);
        if (rc < 0)
            return rc;
        d->listeners[d->nlisteners++] = l;
        /* Accepted only when poll says so, and then without waiting: a
         * connection aborted in between, or an ivshmem tick with no slot
         * claimed, must not hold gvsd's loop. */
        int fd = gvs_listener_fd(l);
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
            gvs_error("cannot make %s non-blocking: %s", gvs_listener_uri(l),
                      strerror(errno));
            return GVS_E_IO;
        }
        gvs_info("listening on %s", gvs_listener_uri(l));
    }
    return 0;
}

/* The worker must not outlive gvsd, must not hold the listening sockets
 * (nor remove their files) and must not see the parent's signals. */
__attribute__((noreturn)) static void worker_main(struct gvsd *d,
                                                  struct gvs_conn *c,
                                                  int stats_slot)
{
    gvsd_signals_reset();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != d->pid)
        _exit(1);
    close_listeners(d, 1);
    gvsd_refusals_close_all(&d->refusals, 1);
    gvsd_workers_free(&d->workers);
    gvsd_metrics_close(&d->metrics);
    gvsd_stats_adopt(stats_slot);
    int rc = gvsd_session_run(c, &d->plugins, &d->session);
    gvsd_stats_leave();
    exit(rc == 0 ? 0 : 1);
}

/* The key of the per-peer handshake limit (workers.h). */
static void peer_key(const struct gvs_conn *c, char *out, size_t len)
{
    uint32_t uid, gid;
    int32_t pid;
    if (gvs_conn_peer_cred(c, &uid, &gid, &pid) == 0) {
        snprintf(out, len, "uid=%u", (unsigned)uid);
        return;
    }
    const char *p = gvs_conn_peer(c);
    const char *port = strrchr(p, ':');
    int n = port != NULL ? (int)(port - p) : (int)strlen(p);
    snprintf(out, len, "%.*s", n, p);
}

/* Sessions, and connections still in their handshake, are limited apart:
 * connections that never finish theirs (each is ended by its deadline)
 * cannot take the places of tenants that do.  0 when c may go on, else
 * it has been refused. */
static int room_for(struct gvsd *d, struct gvs_conn *c, const char *peer)
{
    const struct gvs_config *cfg = d->session.cfg;
    struct gvsd_load n;
    char detail[160];
    const char *why = NULL;
    enum gvsd_refusal reason = GVSD_REFUSED_MAX_SESSIONS;
    gvsd_workers_load(&d->workers, peer, &n);
    if (d->workers.n >= d->workers.max) {
        /* Workers that have left their slots but are not reaped yet
         * count as neither, and still hold a row of the table. */
        why = "too many sessions";
        snprintf(detail, sizeof(detail), "%d workers, of which %d ending",
                 d->workers.n, d->workers.n - n.sessions - n.handshakes);
    } else if (n.sessions >= cfg->max_sessions) {
        why = "too many sessions";
        snprintf(detail, sizeof(detail), "%d of max_sessions %d",
                 n.sessions, cfg->max_sessions);
    } else if (n.handshakes >= cfg->max_handshakes) {
        why = "too many connections in their handshake";
        reason = GVSD_REFUSED_MAX_HANDSHAKES;
        snprintf(detail, sizeof(detail), "%d of max_handshakes %d",
                 n.handshakes, cfg->max_handshakes);
    } else if (n.peer_handshakes >= cfg->max_handshakes_per_peer) {
        why = "too many connections in their handshake from this peer";
        reason = GVSD_REFUSED_MAX_HANDSHAKES_PER_PEER;
        snprintf(detail, sizeof(detail),
                 "%d from %s of max_handshakes_per_peer %d",
                 n.peer_handshakes, peer, cfg->max_handshakes_per_peer);
    }
    if (why == NULL)
        return 0;
    gvsd_refuse(&d->refusals, c, reason, why, detail);
    return -1;
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
    d->session.accepted_ns = gvs_now_ns();
    /* A tcp or tls peer that vanishes without a FIN is found out. */
    rc = gvs_conn_set_keepalive(c, &d->session.cfg->tcp_keepalive);
    if (rc < 0)
        gvs_warn("cannot set TCP keepalive for %s on %s: %s",
                 gvs_conn_peer(c), gvs_listener_uri(l), gvs_strerror(rc));
    if (!peer_allowed(d->session.cfg, c, l))
        return;
    char peer[GVSD_PEER_KEY_MAX];
    peer_key(c, peer, sizeof(peer));
    if (room_for(d, c, peer) < 0)
        return;
    uint32_t id = d->session.id;
    gvs_info("session %u: started, peer %s on %s", id, gvs_conn_peer(c),
             gvs_listener_uri(l));
    fflush(NULL);
    int slot = gvsd_stats_claim(id);
    pid_t pid = fork();
    if (pid == 0)
        worker_main(d, c, slot);
    if (pid < 0) {
        gvs_error("session %u: fork failed: %s", id, strerror(errno));
        gvsd_stats_release(slot, id);
    } else {
        gvsd_workers_add(&d->workers, pid, id, slot, peer);
    }
    d->session.id++;
    gvs_conn_close_copy(c);
}

/* The sooner of two poll timeouts, -1 meaning none. */
static int sooner(int a, int b)
{
    return a < 0 ? b : b < 0 || a < b ? a : b;
}

static int serve(struct gvsd *d)
{
    struct pollfd pfd[1 + GVS_CONFIG_MAX_LISTEN + GVSD_METRICS_POLLFDS +
                      GVSD_REFUSALS_MAX];
    struct pollfd *lpfd = &pfd[1];
    struct pollfd *mpfd = &pfd[1 + d->nlisteners];
    struct pollfd *rpfd = mpfd + GVSD_METRICS_POLLFDS;
    pfd[0] = (struct pollfd){.fd = d->sig_fd, .events = POLLIN};
    for (int i = 0; i < d->nlisteners; i++)
        lpfd[i] = (struct pollfd){.fd = gvs_listener_fd(d->listeners[i]),
                                  .events = POLLIN};
    for (;;) {
        int nref = gvsd_refusals_pollfds(&d->refusals, rpfd);
        gvsd_metrics_pollfds(&d->metrics, mpfd);
        int expire = gvsd_workers_expire(&d->workers, d->handshake_kill_ms);
        int n = poll(pfd,
                     (nfds_t)(1 + d->nlisteners + GVSD_METRICS_POLLFDS + nref),
                     sooner(sooner(gvsd_refusals_timeout(&d->refusals),
                                   gvsd_metrics_timeout(&d->metrics)),
                            expire));
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
        gvsd_metrics_service(&d->metrics, mpfd);
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
                     .metrics = {.fd = -1},
                     .session = {.id = 1,
                                 .max_frame = cfg->max_frame,
                                 .handshake_timeout_ms =
                                     cfg->handshake_timeout_ms,
                                 .cfg = cfg}};
    if (cfg->nlisten == 0) {
        gvs_error("nothing to listen on");
        return 1;
    }
    if (cfg->handshake_timeout_ms != 0)
        d.handshake_kill_ms =
            cfg->handshake_timeout_ms + HANDSHAKE_KILL_GRACE_MS;
    int nworkers = cfg->max_sessions + cfg->max_handshakes;
    if (check_exposure(cfg) < 0)
        return 1;
    int rc = gvsd_plugins_load(&d.plugins, cfg->plugin_dir,
                               cfg->nplugins > 0 ? cfg->plugins : NULL,
                               cfg->nplugins);
    /* Without a plugin every session would be refused: better not to
     * start, where the operator sees it, than to serve nothing. */
    if (rc == 0 && d.plugins.n == 0) {
        gvs_error("no plugin loaded from %s: nothing to serve",
                  cfg->plugin_dir);
        rc = GVS_E_PLUGIN;
    }
    if (rc == 0)
        rc = gvsd_workers_init(&d.workers, nworkers);
    /* Before any fork: every worker shares the parent's table. */
    if (rc == 0)
        rc = gvsd_stats_create(nworkers, cfg->max_sessions);
    if (rc == 0)
        rc = gvsd_metrics_open(&d.metrics, cfg, &d.plugins);
    if (rc == 0)
        rc = d.sig_fd = gvsd_signals_install();
    if (rc >= 0)
        rc = open_listeners(&d, cfg);
    int status = 1;
    if (rc >= 0) {
        signal_ready(ready_fd);
        status = serve(&d);
        gvs_info("shutting down");
    } else {
        gvs_error("cannot start: %s", gvs_strerror(rc));
    }
    close_listeners(&d, 0);
    gvsd_refusals_close_all(&d.refusals, 0);
    gvsd_metrics_close(&d.metrics);
    gvsd_workers_stop(&d.workers, GVSD_STOP_GRACE_MS);
    gvsd_workers_free(&d.workers);
    gvsd_stats_destroy();
    gvsd_plugins_unload(&d.plugins);
    return status;
}
