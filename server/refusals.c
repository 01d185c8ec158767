#include <errno.h>
#include <sys/socket.h>
#include <time.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "refusals.h"
#include "session.h"

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The refusal answers a HELLO not read yet: id 0, the id clients give
 * their HELLO. */
void gvsd_refuse(struct gvsd_refusals *r, struct gvs_conn *c,
                 enum gvsd_refusal reason, const char *why,
                 const char *detail)
{
    gvsd_count_refusal(reason);
    gvs_warn("refusing connection from %s: %s (%s)", gvs_conn_peer(c), why,
             detail);
    int rc = gvsd_hello_reply(c, 0, GVS_E_RANGE, why, 0);
    int fd = gvs_conn_fd(c);
    if (rc < 0 || fd < 0 || r->n == GVSD_REFUSALS_MAX ||
        shutdown(fd, SHUT_WR) < 0) {
        gvs_conn_close(c);
        return;
    }
    r->conn[r->n] = c;
    r->deadline[r->n] = now_ms() + GVSD_REFUSAL_LINGER_MS;
    r->n++;
}

int gvsd_refusals_pollfds(const struct gvsd_refusals *r, struct pollfd *pfd)
{
    for (int i = 0; i < r->n; i++)
        pfd[i] = (struct pollfd){.fd = gvs_conn_fd(r->conn[i]),
                                 .events = POLLIN};
    return r->n;
}

int gvsd_refusals_timeout(const struct gvsd_refusals *r)
{
    if (r->n == 0)
        return -1;
    long long first = r->deadline[0];
    for (int i = 1; i < r->n; i++)
        if (r->deadline[i] < first)
            first = r->deadline[i];
    long long left = first - now_ms();
    return left > 0 ? (int)left : 0;
}

/* 1 once the client has closed (or failed); what it sent is dropped. */
static int drained(struct gvs_conn *c)
{
    char sink[4096];
    for (;;) {
        ssize_t n = recv(gvs_conn_fd(c), sink, sizeof(sink), MSG_DONTWAIT);
        if (n > 0)
            continue;
        return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
                          errno != EINTR);
    }
}

void gvsd_refusals_service(struct gvsd_refusals *r, const struct pollfd *pfd)
{
    long long now = now_ms();
    int held = r->n;
    /* Walk backwards: removal moves the last entry into slot i, and pfd
     * keeps the order of the table as it was when polled. */
    for (int i = held - 1; i >= 0; i--) {
        int done = now >= r->deadline[i];
        if (!done && pfd[i].revents != 0)
            done = drained(r->conn[i]);
        if (!done)
            continue;
        gvs_conn_close(r->conn[i]);
        r->n--;
        r->conn[i] = r->conn[r->n];
        r->deadline[i] = r->deadline[r->n];
    }
}

void gvsd_refusals_close_all(struct gvsd_refusals *r, int copies)
{
    for (int i = 0; i < r->n; i++)
        if (copies)
            gvs_conn_close_copy(r->conn[i]);
        else
            gvs_conn_close(r->conn[i]);
    r->n = 0;
}
