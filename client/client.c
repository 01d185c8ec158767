#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gvs/err.h"
#include "gvs/escape.h"
#include "gvs/spin.h"
#include "gvs/tls.h"
#include "gvs/trace.h"
#include "internal.h"

static struct gvs_client the_client = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .rlock = PTHREAD_MUTEX_INITIALIZER,
    .wlock = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* How long the exit-time flush waits for a thread that holds the lock. */
#define EXIT_FLUSH_WAIT_S 1

/* Holding every lock across fork() leaves the child's copy of the client
 * in a consistent state.  Posts still buffered leave first: the parent
 * has nobody else to write them while it forks. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&the_client.lock);
    (void)client_out_flush(&the_client);
    pthread_mutex_lock(&the_client.wlock);
    client_notify_fork_prepare();
}

static void fork_parent(void)
{
    client_notify_fork_parent();
    pthread_mutex_unlock(&the_client.wlock);
    pthread_mutex_unlock(&the_client.lock);
}

/* The child must not talk on the parent's session, and its copy has no
 * receiver thread: it closes its copy of the connection (no shutdown,
 * which would cut the parent's session too) and connects afresh on its
 * next call.  A failed client stays failed. */
static void fork_child(void)
{
    struct gvs_client *c = &the_client;
    if (c->conn != NULL) {
        gvs_conn_close_copy(c->conn);
        c->conn = NULL;
    }
    if (atomic_load(&c->state) == CLIENT_READY)
        atomic_store(&c->state, CLIENT_IDLE);
    client_pending_fork_child(c);
    /* Whoever read the parent's connection is not in the child. */
    pthread_mutex_init(&c->rlock, NULL);
    atomic_store(&c->leaders, 0);
    client_out_fork_child(c);
    client_notify_fork_child();
    client_stats_reset();
    pthread_mutex_unlock(&c->wlock);
    pthread_mutex_unlock(&c->lock);
}

static void client_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Posts still buffered when the process exits (or the library is
 * unloaded) go out, behind a LEAVING: the server serves what it has read
 * of a session that ends so, and drops what a killed program's left
 * (GVS_CTL_LEAVING).  The wait for the lock is bounded, so that a thread
 * stuck in the middle of a request cannot hang the exit. */
__attribute__((destructor)) static void client_exit(void)
{
    struct timespec until;
    struct gvs_client *c = &the_client;
    atomic_store(&c->exiting, 1);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += EXIT_FLUSH_WAIT_S;
    if (pthread_mutex_timedlock(&c->lock, &until) != 0)
        return;
    if (atomic_load(&c->state) == CLIENT_READY) {
        struct gvs_frame_hdr h = {.op = GVS_CTL_LEAVING,
                                  .flags = GVS_F_NOREPLY,
                                  .id = c->next_id++};
        (void)client_out_send(c, &h, NULL, 0);
    }
    (void)client_out_flush(c);
    if (atomic_load(&c->state) == CLIENT_READY)
        gvs_conn_leaving(c->conn);
    pthread_mutex_unlock(&c->lock);
}

static void ensure_init(void)
{
    pthread_once(&init_once, client_init);
}

/* Enters the failed state for good, reporting why on one stderr line.
 * Caller holds the lock, before the connection is ready. */
__attribute__((format(printf, 3, 4))) static int fail(struct gvs_client *c,
                                                      int err,
                                                      const char *fmt, ...)
{
    char line[1024], shown[GVS_ESCAPED_SIZE(256)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* The line may hold the server's refusal message: a server cannot
     * write to the program's terminal through it. */
    gvs_escape(shown, sizeof(shown), line, strlen(line));
    fprintf(stderr, "gvs: %s\n", shown);
    if (c->conn != NULL) {
        gvs_conn_close(c->conn);
        c->conn = NULL;
    }
    atomic_store(&c->err, err);
    atomic_store(&c->state, CLIENT_FAILED);
    return err;
}

int client_break(struct gvs_client *c, int err)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&c->err, &none, err)) {
        if (!atomic_load(&c->exiting))
            fprintf(stderr, "gvs: connection to server %s lost: %s\n",
                    c->server, gvs_strerror(err));
        atomic_store(&c->state, CLIENT_FAILED);
        gvs_conn_shutdown(c->conn);
    }
    return atomic_load(&c->err);
}

static int client_open(struct gvs_client *c)
{
    struct client_settings s;
    char why[512] = "";
    int rc = client_settings_load(&s, why, sizeof(why));
    snprintf(c->server, sizeof(c->server), "%s", s.server);
    /* The token is wiped as soon as it is of no more use. */
    if (rc < 0) {
        explicit_bzero(s.token, sizeof(s.token));
        return fail(c, rc, "cannot use server %s: %s", c->server, why);
    }
    struct gvs_conn *conn;
    struct gvs_tls_files tls = {s.tls_ca, s.tls_cert, s.tls_key};
    gvs_tls_files_env(&tls);
    rc = gvs_tls_configure(&tls);
    if (rc == 0)
        rc = gvs_connect(c->server, &conn);
    if (rc < 0) {
        explicit_bzero(s.token, sizeof(s.token));
        const char *os = gvs_comm_why();
        /* Most often nobody serves there, or the program looks in the
         * wrong place: say where the URI came from. */
        if (rc == GVS_E_CONNECT)
            return fail(c, rc, "cannot use server %s: %s (is gvsd running? "
                        "%s)",
                        c->server, os[0] != '\0' ? os : gvs_strerror(rc),
                        s.origin);
        return fail(c, rc, "cannot use server %s: connect failed: %s",
                    c->server, os[0] != '\0' ? os : gvs_strerror(rc));
    }
    /* Before the first wait: polling for gvsd's answers slows no local
     * gvsd down. */
    if (gvs_conn_caps(conn) & GVS_CONN_CAP_PEER_AWAY)
        gvs_spin_peer_away();
    /* Found out when gvsd's host or the network vanishes. */
    rc = gvs_conn_set_keepalive(conn, &s.tcp_keepalive);
    if (rc < 0) {
        explicit_bzero(s.token, sizeof(s.token));
        gvs_conn_close(conn);
        return fail(c, rc, "cannot use server %s: cannot set TCP keepalive",
                    c->server);
    }
    rc = client_handshake(conn, &s, why, sizeof(why));
    explicit_bzero(s.token, sizeof(s.token));
    if (rc < 0) {
        gvs_conn_close(conn);
        return fail(c, rc, "cannot use server %s: handshake failed: %s",
                    c->server, why);
    }
    c->conn = conn;
    c->next_id = CLIENT_HELLO_ID + 1;
    atomic_store(&c->caps, gvs_conn_caps(conn));
    /* Ready before the receiver starts: a break it sees at once must
     * not be overwritten. */
    atomic_store(&c->state, CLIENT_READY);
    rc = client_notify_start();
    if (rc == 0)
        rc = client_out_open(c);
    if (rc == 0)
        rc = client_receiver_start(c, s.keepalive_ms, s.tcp_ack_timeout_ms);
    if (rc < 0)
        return fail(c, rc, "cannot use server %s: cannot start a thread: %s",
                    c->server, gvs_strerror(rc));
    return 0;
}

/* Caller holds the lock.  Connects if needed (first use, or first use
 * in a forked child). */
static int client_usable(struct gvs_client *c)
{
    switch (atomic_load(&c->state)) {
    case CLIENT_READY:
        return 0;
    case CLIENT_IDLE:
        return client_open(c);
    default:
        return atomic_load(&c->err);
    }
}

int gvs_client_register(const struct gvs_client_plugin *p)
{
    ensure_init();
    pthread_mutex_lock(&the_client.lock);
    /* The session's plugin list is fixed by its handshake. */
    int rc = atomic_load(&the_client.state) == CLIENT_READY
                 ? GVS_E_INVAL
                 : client_registry_add(p);
    pthread_mutex_unlock(&the_client.lock);
    return rc;
}

int gvs_client_on_notify(uint16_t plugin, gvs_notify_fn fn, void *arg)
{
    ensure_init();
    pthread_mutex_lock(&the_client.lock);
    /* The notify thread reads the handlers without a lock. */
    int rc = atomic_load(&the_client.state) == CLIENT_READY
                 ? GVS_E_INVAL
                 : client_registry_set_notify(plugin, fn, arg);
    pthread_mutex_unlock(&the_client.lock);
    return rc;
}

static int set_inline(uint16_t plugin, uint16_t op, gvs_notify_fn fn,
                      const struct gvs_notify_into *into, void *arg)
{
    ensure_init();
    pthread_mutex_lock(&the_client.lock);
    /* The receiver thread reads the handlers without a lock. */
    int rc = atomic_load(&the_client.state) == CLIENT_READY
                 ? GVS_E_INVAL
                 : client_registry_set_inline(plugin, op, fn, into, arg);
    pthread_mutex_unlock(&the_client.lock);
    return rc;
}

int gvs_client_on_notify_inline(uint16_t plugin, uint16_t op,
                                gvs_notify_fn fn, void *arg)
{
    return set_inline(plugin, op, fn, NULL, arg);
}

int gvs_client_on_notify_into(uint16_t plugin, uint16_t op,
                              const struct gvs_notify_into *into, void *arg)
{
    if (into == NULL || into->head_len > GVS_NOTIFY_HEAD_MAX ||
        into->place == NULL || into->landed == NULL)
        return GVS_E_INVAL;
    return set_inline(plugin, op, NULL, into, arg);
}

int gvs_client_get(struct gvs_client **out)
{
    struct gvs_client *c = &the_client;
    ensure_init();
    int state = atomic_load(&c->state);
    int rc = state == CLIENT_READY ? 0 : atomic_load(&c->err);
    if (state == CLIENT_IDLE) {
        pthread_mutex_lock(&c->lock);
        rc = client_usable(c);
        pthread_mutex_unlock(&c->lock);
    }
    *out = rc == 0 ? c : NULL;
    return rc;
}

const char *gvs_client_server(void)
{
    struct gvs_client *c = &the_client;
    ensure_init();
    pthread_mutex_lock(&c->lock);
    if (c->server[0] == '\0') {
        struct client_settings s;
        char why[512];
        client_settings_load(&s, why, sizeof(why));
        explicit_bzero(s.token, sizeof(s.token));
        snprintf(c->server, sizeof(c->server), "%s", s.server);
    }
    pthread_mutex_unlock(&c->lock);
    return c->server;
}

void gvs_client_lock(struct gvs_client *c)
{
    pthread_mutex_lock(&c->lock);
}

void gvs_client_unlock(struct gvs_client *c)
{
    pthread_mutex_unlock(&c->lock);
}

int gvs_client_send_locked(struct gvs_client *c, uint16_t plugin,
                           uint16_t op, uint32_t flags,
                           const struct iovec *iov, int n, uint64_t *id)
{
    /* Of the control operations only PING is the caller's to send. */
    if ((flags & ~(uint32_t)GVS_F_NOREPLY) != 0 ||
        (plugin == 0 && op != GVS_CTL_PING))
        return GVS_E_INVAL;
    int rc = client_usable(c);
    if (rc < 0)
        return rc;
    int post = (flags & GVS_F_NOREPLY) != 0;
    int slot = client_stats_slot(plugin, op);
    long long t0 = slot >= 0 ? gvs_now_ns() : 0;
    struct gvs_frame_hdr h = {.plugin = plugin,
                              .op = op,
                              .flags = flags,
                              .lane = gvs_client_lane(),
                              .id = c->next_id++};
    gvs_trace(h.id, plugin, op, GVS_TRACE_SEND);
    /* Registered before it leaves: the reply may beat the wait. */
    if (!post && (rc = client_pending_add(c, h.id, slot)) < 0)
        return rc;
    /* A post may stay buffered; anything else also writes what is. */
    rc = client_out_send(c, &h, iov, n);
    if (rc < 0) {
        if (!post)
            client_pending_drop(c, h.id);
        return rc;
    }
    gvs_trace(h.id, plugin, op, GVS_TRACE_SENT);
    client_stats_sent(GVS_FRAME_HDR_LEN + (uint64_t)h.len, post);
    client_stats_op(slot, post, slot >= 0 ? gvs_now_ns() - t0 : 0);
    if (id != NULL)
        *id = h.id;
    return 0;
}

int gvs_client_call(struct gvs_client *c, uint16_t plugin, uint16_t op,
                    const struct iovec *iov, int n, struct gvs_buf *reply)
{
    uint64_t id;
    gvs_client_lock(c);
    int rc = gvs_client_send_locked(c, plugin, op, 0, iov, n, &id);
    gvs_client_unlock(c);
    return rc < 0 ? rc : gvs_client_wait(c, id, reply);
}

int gvs_client_post(struct gvs_client *c, uint16_t plugin, uint16_t op,
                    const struct iovec *iov, int n)
{
    gvs_client_lock(c);
    int rc = gvs_client_send_locked(c, plugin, op, GVS_F_NOREPLY, iov, n,
                                    NULL);
    gvs_client_unlock(c);
    return rc;
}

unsigned gvs_client_caps(struct gvs_client *c)
{
    return atomic_load(&c->state) == CLIENT_READY ? atomic_load(&c->caps)
                                                  : 0;
}

int gvs_client_area(struct gvs_client *c, void **base, size_t *len)
{
    *base = NULL;
    *len = 0;
    if (!(gvs_client_caps(c) & GVS_CONN_CAP_AREA))
        return GVS_E_NOTSUP;
    return gvs_conn_area(c->conn, base, len);
}

int gvs_client_send_fd_locked(struct gvs_client *c, int fd, uint64_t tag)
{
    int rc = client_usable(c);
    if (rc < 0)
        return rc;
    if (!(gvs_conn_caps(c->conn) & GVS_CONN_CAP_FDS))
        return GVS_E_NOTSUP;
    rc = gvs_conn_send_fd(c->conn, fd, tag);
    return rc < 0 ? client_break(c, rc) : 0;
}
