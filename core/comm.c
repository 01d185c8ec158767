#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "comm_impl.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/spin.h"

/* Every transport, by scheme.  A new transport adds one line here. */
static const struct gvs_transport *const transports[] = {
    &gvs_transport_unix,
    &gvs_transport_tcp,
    &gvs_transport_shm,
    &gvs_transport_tls,
    &gvs_transport_ivshmem,
};

const struct gvs_transport *gvs_transport_find(const char *scheme)
{
    for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
        if (strcmp(transports[i]->scheme, scheme) == 0)
            return transports[i];
    return NULL;
}

struct gvs_conn *gvs_conn_alloc(const struct gvs_conn_ops *ops)
{
    struct gvs_conn *c = gvs_calloc(1, sizeof(*c));
    if (c != NULL) {
        c->ops = ops;
        c->fd = -1;
    }
    return c;
}

struct gvs_listener *gvs_listener_alloc(const struct gvs_transport *t)
{
    struct gvs_listener *l = gvs_calloc(1, sizeof(*l));
    if (l != NULL) {
        l->transport = t;
        l->fd = -1;
    }
    return l;
}

/* Per thread: a program's threads may connect at once. */
static _Thread_local char comm_why[256];

const char *gvs_comm_why(void)
{
    return comm_why;
}

int gvs_comm_fail(int err, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(comm_why, sizeof(comm_why), fmt, ap);
    va_end(ap);
    if (e != 0 && n >= 0 && (size_t)n < sizeof(comm_why))
        snprintf(comm_why + n, sizeof(comm_why) - (size_t)n, ": %s",
                 strerror(e));
    return err;
}

static int lookup(const char *uri, struct gvs_uri *u,
                  const struct gvs_transport **t)
{
    int r = gvs_uri_parse(uri, u);
    if (r < 0)
        return r;
    *t = gvs_transport_find(u->scheme);
    return *t != NULL ? 0 : GVS_E_URI;
}

int gvs_listen(const char *uri, struct gvs_listener **out)
{
    struct gvs_uri u;
    const struct gvs_transport *t;
    *out = NULL;
    comm_why[0] = '\0';
    int r = lookup(uri, &u, &t);
    return r < 0 ? r : t->listen(&u, out);
}

int gvs_accept(struct gvs_listener *l, struct gvs_conn **out)
{
    *out = NULL;
    return l->transport->accept(l, out);
}

int gvs_listener_fd(const struct gvs_listener *l)
{
    return l->fd;
}

void gvs_listener_close(struct gvs_listener *l, int keep_path)
{
    if (l == NULL)
        return;
    l->close(l, keep_path);
    gvs_free(l);
}

const char *gvs_listener_uri(const struct gvs_listener *l)
{
    return l->uri;
}

int gvs_connect(const char *uri, struct gvs_conn **out)
{
    struct gvs_uri u;
    const struct gvs_transport *t;
    *out = NULL;
    comm_why[0] = '\0';
    int r = lookup(uri, &u, &t);
    return r < 0 ? r : t->connect(&u, out);
}

int gvs_conn_sendv(struct gvs_conn *c, const struct iovec *iov, int iovcnt)
{
    if (iovcnt < 0 || (iovcnt > 0 && iov == NULL))
        return GVS_E_INVAL;
    return c->ops->sendv(c, iov, iovcnt);
}

int gvs_conn_send(struct gvs_conn *c, const void *p, size_t len)
{
    struct iovec iov = {.iov_base = (void *)(uintptr_t)p, .iov_len = len};
    return c->ops->sendv(c, &iov, 1);
}

/* Milliseconds left before c's deadline, rounded up; GVS_E_TIMEOUT once
 * it has passed; 0 in *ms when there is none. */
static int time_left_ms(const struct gvs_conn *c, unsigned *ms)
{
    *ms = 0;
    if (c->deadline_ns == 0)
        return 0;
    long long left = c->deadline_ns - gvs_now_ns();
    if (left <= 0)
        return GVS_E_TIMEOUT;
    long long m = (left + 999999) / 1000000;
    *ms = m > 3600000 ? 3600000u : (unsigned)m;
    return 0;
}

/* Before each wait under a deadline: the wait gets what is left. */
static int bound_wait(struct gvs_conn *c)
{
    unsigned ms;
    int r = time_left_ms(c, &ms);
    return r < 0 || ms == 0 ? r : c->ops->set_timeout(c, ms);
}

int gvs_conn_set_deadline(struct gvs_conn *c, long long deadline_ns)
{
    if (deadline_ns < 0)
        return GVS_E_INVAL;
    c->deadline_ns = deadline_ns;
    return deadline_ns == 0 ? c->ops->set_timeout(c, 0) : 0;
}

int gvs_conn_recv_some(struct gvs_conn *c, void *p, size_t len, size_t *got)
{
    *got = 0;
    if (len == 0)
        return 0;
    int r = bound_wait(c);
    return r < 0 ? r : c->ops->recv_some(c, p, len, got);
}

int gvs_conn_recv(struct gvs_conn *c, void *p, size_t len)
{
    uint8_t *dst = p;
    while (len > 0) {
        size_t got;
        int r = bound_wait(c);
        if (r == 0)
            r = c->ops->recv_some(c, dst, len, &got);
        if (r < 0)
            return r;
        dst += got;
        len -= got;
    }
    return 0;
}

int gvs_conn_fd(const struct gvs_conn *c)
{
    return c->fd;
}

int gvs_conn_set_timeout(struct gvs_conn *c, unsigned ms)
{
    return c->ops->set_timeout(c, ms);
}

const char *gvs_conn_peer(const struct gvs_conn *c)
{
    return c->peer;
}

unsigned gvs_conn_caps(const struct gvs_conn *c)
{
    void *base;
    size_t len;
    unsigned caps = c->ops->caps | c->caps;
    if (c->ops->area != NULL &&
        c->ops->area((struct gvs_conn *)c, &base, &len) == 0)
        caps |= GVS_CONN_CAP_AREA;
    return caps;
}

int gvs_conn_area(struct gvs_conn *c, void **base, size_t *len)
{
    *base = NULL;
    *len = 0;
    return c->ops->area != NULL ? c->ops->area(c, base, len) : GVS_E_NOTSUP;
}

int gvs_conn_send_fd(struct gvs_conn *c, int fd, uint64_t tag)
{
    if (c->ops->send_fd == NULL)
        return GVS_E_NOTSUP;
    return c->ops->send_fd(c, fd, tag);
}

int gvs_conn_recv_fd(struct gvs_conn *c, unsigned timeout_ms, int *fd,
                     uint64_t *tag)
{
    *fd = -1;
    *tag = 0;
    if (c->ops->recv_fd == NULL)
        return GVS_E_NOTSUP;
    return c->ops->recv_fd(c, timeout_ms, fd, tag);
}

int gvs_conn_start(struct gvs_conn *c, unsigned timeout_ms)
{
    if (c->ops->start == NULL)
        return 0;
    unsigned left;
    int r = time_left_ms(c, &left);
    if (r < 0)
        return r;
    if (left != 0 && (timeout_ms == 0 || left < timeout_ms))
        timeout_ms = left;
    return c->ops->start(c, timeout_ms);
}

int gvs_conn_wait_readable(struct gvs_conn *c)
{
    if (c->ops->wait_readable == NULL)
        return GVS_E_NOTSUP;
    return c->ops->wait_readable(c);
}

void gvs_conn_leaving(struct gvs_conn *c)
{
    if (c->ops->leaving != NULL)
        c->ops->leaving(c);
}

int gvs_conn_vanished(struct gvs_conn *c)
{
    return c->ops->vanished != NULL && c->ops->vanished(c);
}

void gvs_conn_shutdown(struct gvs_conn *c)
{
    c->ops->shutdown(c);
}

static void conn_close(struct gvs_conn *c, int copy)
{
    if (c == NULL)
        return;
    c->ops->close(c, copy);
    gvs_free(c);
}

void gvs_conn_close(struct gvs_conn *c)
{
    conn_close(c, 0);
}

void gvs_conn_close_copy(struct gvs_conn *c)
{
    conn_close(c, 1);
}
