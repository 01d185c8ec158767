/* memconn.h */
#include "memconn.h"

#include <string.h>

#include "comm_impl.h"
#include "gvs/err.h"

static int mem_sendv(struct gvs_conn *c, const struct iovec *iov, int n)
{
    struct memconn *m = c->priv;
    for (int i = 0; m->sent != NULL && i < n; i++) {
        int r = gvs_buf_put_bytes(m->sent, iov[i].iov_base, iov[i].iov_len);
        if (r < 0)
            return r;
    }
    return 0;
}

static int mem_recv_some(struct gvs_conn *c, void *p, size_t len,
                         size_t *got)
{
    struct memconn *m = c->priv;
    *got = 0;
    size_t piece = len;
    if (m->npattern > 0) {
        uint8_t v = m->pattern[m->next++ % m->npattern];
        if (v == MEMCONN_TIMEOUT)
            return GVS_E_TIMEOUT;
        piece = (size_t)v + 1;
    }
    if (m->off == m->len)
        return GVS_E_CLOSED;
    if (piece > len)
        piece = len;
    if (piece > m->len - m->off)
        piece = m->len - m->off;
    memcpy(p, m->data + m->off, piece);
    m->off += piece;
    *got = piece;
    return 0;
}

static int mem_set_timeout(struct gvs_conn *c, unsigned ms)
{
    (void)c;
    (void)ms;
    return 0;
}

static void mem_shutdown(struct gvs_conn *c)
{
    (void)c;
}

static void mem_close(struct gvs_conn *c, int copy)
{
    (void)c;
    (void)copy;
}

static const struct gvs_conn_ops mem_ops = {
    .sendv = mem_sendv,
    .recv_some = mem_recv_some,
    .set_timeout = mem_set_timeout,
    .shutdown = mem_shutdown,
    .close = mem_close,
};

struct gvs_conn *memconn_new(struct memconn *m)
{
    struct gvs_conn *c = gvs_conn_alloc(&mem_ops);
    if (c != NULL)
        c->priv = m;
    return c;
}
