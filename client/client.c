#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "gvs/err.h"
#include "internal.h"

enum client_state { CLIENT_IDLE, CLIENT_READY, CLIENT_FAILED };

/* The process's only client.  state and err are atomic so that
 * gvs_client_get can answer without the lock, which a long round trip
 * may hold; everything else is guarded by lock. */
struct gvs_client {
    pthread_mutex_t lock;
    _Atomic int state;
    _Atomic int err;
    struct gvs_conn *conn;
    uint64_t next_id;
    char server[512];
};

static struct gvs_client the_client = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Holding the lock across fork() leaves the child's copy of the client in
 * a consistent state. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&the_client.lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&the_client.lock);
}

/* The child must not talk on the parent's session: it closes its copy of
 * the descriptor without a BYE and connects afresh on its next call.  A
 * failed client stays failed. */
static void fork_child(void)
{
    struct gvs_client *c = &the_client;
    if (atomic_load(&c->state) == CLIENT_READY) {
        gvs_conn_close(c->conn);
        c->conn = NULL;
        atomic_store(&c->state, CLIENT_IDLE);
    }
    client_stats_reset();
    pthread_mutex_unlock(&c->lock);
}

static void client_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void ensure_init(void)
{
    pthread_once(&init_once, client_init);
}

/* Enters the failed state for good, reporting why on one stderr line. */
__attribute__((format(printf, 3, 4))) static int fail(struct gvs_client *c,
                                                      int err,
                                                      const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "gvs: %s\n", line);
    if (c->conn != NULL) {
        gvs_conn_close(c->conn);
        c->conn = NULL;
    }
    atomic_store(&c->err, err);
    atomic_store(&c->state, CLIENT_FAILED);
    return err;
}

static int broken(struct gvs_client *c, int err)
{
    return fail(c, err, "connection to server %s lost: %s", c->server,
                gvs_strerror(err));
}

static int client_open(struct gvs_client *c)
{
    struct client_settings s;
    char why[512] = "";
    int rc = client_settings_load(&s, why, sizeof(why));
    snprintf(c->server, sizeof(c->server), "%s", s.server);
    if (rc < 0)
        return fail(c, rc, "cannot use server %s: %s", c->server, why);
    struct gvs_conn *conn;
    rc = gvs_connect(c->server, &conn);
    if (rc < 0)
        return fail(c, rc, "cannot use server %s: connect failed: %s",
                    c->server, gvs_strerror(rc));
    rc = client_handshake(conn, s.handshake_timeout_ms, why, sizeof(why));
    if (rc < 0) {
        gvs_conn_close(conn);
        return fail(c, rc, "cannot use server %s: handshake failed: %s",
                    c->server, why);
    }
    c->conn = conn;
    c->next_id = CLIENT_HELLO_ID + 1;
    atomic_store(&c->state, CLIENT_READY);
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
    struct gvs_frame_hdr h = {
        .plugin = plugin, .op = op, .flags = flags, .id = c->next_id++};
    rc = gvs_frame_sendv(c->conn, &h, iov, n);
    if (rc < 0)
        return broken(c, rc);
    client_stats_sent(GVS_FRAME_HDR_LEN + (uint64_t)h.len,
                      (flags & GVS_F_NOREPLY) != 0);
    if (id != NULL)
        *id = h.id;
    return 0;
}

int gvs_client_recv_locked(struct gvs_client *c, uint64_t id,
                           struct gvs_buf *reply)
{
    if (atomic_load(&c->state) != CLIENT_READY)
        return atomic_load(&c->state) == CLIENT_FAILED ? atomic_load(&c->err)
                                                       : GVS_E_INVAL;
    struct gvs_frame_hdr h;
    int rc = gvs_frame_recv(c->conn, gvs_buf_max(reply), &h, reply);
    if (rc < 0)
        return broken(c, rc);
    if (!(h.flags & GVS_F_REPLY) || h.id != id)
        return broken(c, GVS_E_PROTO);
    client_stats_reply(GVS_FRAME_HDR_LEN + (uint64_t)h.len);
    return 0;
}

int gvs_client_call(struct gvs_client *c, uint16_t plugin, uint16_t op,
                    const struct iovec *iov, int n, struct gvs_buf *reply)
{
    uint64_t id;
    gvs_client_lock(c);
    int rc = gvs_client_send_locked(c, plugin, op, 0, iov, n, &id);
    if (rc == 0)
        rc = gvs_client_recv_locked(c, id, reply);
    gvs_client_unlock(c);
    return rc;
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
