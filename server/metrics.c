#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gpus.h"
#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "metrics.h"
#include "reasons.h"
#include "stats.h"

enum { READING, WRITING, DRAINING };

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >>
                24) == 127;
    return sa->sa_family == AF_INET6 &&
           IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static int bind_first(const struct gvs_uri *u, int *loopback)
{
    char port[16];
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res, *a;
    snprintf(port, sizeof(port), "%u", u->port);
    if (getaddrinfo(u->host[0] != '\0' ? u->host : NULL, port, &hints,
                    &res) != 0)
        return -1;
    int fd = -1;
    for (a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family,
                    a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int one = 1;
        if (fd >= 0 &&
            (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) <
                 0 ||
             bind(fd, a->ai_addr, a->ai_addrlen) < 0 ||
             listen(fd, 16) < 0)) {
            close(fd);
            fd = -1;
        }
        if (fd >= 0)
            *loopback = is_loopback(a->ai_addr);
    }
    freeaddrinfo(res);
    return fd;
}

int gvsd_metrics_open(struct gvsd_metrics *m, const struct gvs_config *cfg,
                      const struct gvsd_plugins *ps)
{
    const char *uri = cfg->metrics_listen;
    m->fd = -1;
    m->n = 0;
    m->sessions = cfg->metrics_sessions;
    m->plugins = ps;
    if (uri == NULL)
        return 0;
    struct gvs_uri u;
    if (gvs_uri_parse(uri, &u) < 0 || strcmp(u.scheme, "tcp") != 0) {
        gvs_error("metrics_listen %s: not a tcp:// URI", uri);
        return GVS_E_URI;
    }
    int loopback = 0;
    m->fd = bind_first(&u, &loopback);
    if (m->fd < 0) {
        gvs_error("cannot serve metrics on %s: %s", uri, strerror(errno));
        return GVS_E_IO;
    }
    /* The endpoint asks for no credentials (docs/security.md, "What gvs status and the metrics reveal"). */
    if (!loopback)
        gvs_warn("metrics on %s are open to anyone who can reach it", uri);
    gvs_info("serving metrics on %s", uri);
    gvsd_stats_learn_gpus();
    return 0;
}

void gvsd_metrics_pollfds(const struct gvsd_metrics *m, struct pollfd *pfd)
{
    pfd[0] = (struct pollfd){.fd = m->fd, .events = POLLIN};
    for (int i = 0; i < GVSD_METRICS_CONNS; i++)
        pfd[1 + i] = (struct pollfd){
            .fd = i < m->n ? m->conn[i].fd : -1,
            .events = i < m->n && m->conn[i].state == WRITING ? POLLOUT
                                                              : POLLIN};
}

int gvsd_metrics_timeout(const struct gvsd_metrics *m)
{
    if (m->n == 0)
        return -1;
    long long first = m->conn[0].deadline;
    for (int i = 1; i < m->n; i++)
        if (m->conn[i].deadline < first)
            first = m->conn[i].deadline;
    long long left = first - now_ms();
    return left > 0 ? (int)left : 0;
}

/* The reply under construction; a failed allocation marks it failed and
 * makes every later append a no-op. */
struct text {
    char *p;
    size_t len, cap;
    int failed;
};

__attribute__((format(printf, 2, 3))) static void append(struct text *t,
                                                         const char *fmt,
                                                         ...)
{
    for (int tries = 0; tries < 2 && !t->failed; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p != NULL ? t->p + t->len : NULL,
                          t->p != NULL ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
        } else if (t->p != NULL && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        } else {
            size_t cap = t->cap * 2 > t->len + (size_t)n + 1
                             ? t->cap * 2
                             : t->len + (size_t)n + 4096;
            char *p = gvs_realloc(t->p, cap);
            if (p == NULL)
                t->failed = 1;
            else
                t->p = p, t->cap = cap;
        }
    }
}

/* A label value of the text exposition format, in which backslash,
 * double quote and newline are escaped.  Identities come escaped for
 * display already (gvs/escape.h, by gvsd_stats_snapshot), so their
 * backslashes are doubled here and Prometheus reads back that display
 * form; a value too long for out is cut at a whole character. */
static void label_value(char *out, size_t len, const char *in)
{
    size_t o = 0;
    for (; *in != '\0'; in++) {
        const char *e = *in == '\\' ? "\\\\"
                        : *in == '"'  ? "\\\""
                        : *in == '\n' ? "\\n"
                                      : NULL;
        size_t n = e != NULL ? 2 : 1;
        if (n > len - 1 - o)
            break;
        memcpy(out + o, e != NULL ? e : in, n);
        o += n;
    }
    out[o] = '\0';
}

/* "# HELP" and "# TYPE" of a family. */
static void head(struct text *t, const char *name, const char *type,
                 const char *help)
{
    append(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

struct family {
    const char *name, *type, *help;
};

/* Per session (metrics_sessions): a series each, while it lasts. */
static const struct family families[] = {
    {"gvs_session_memory_bytes", "gauge",
     "GPU memory the session holds, as its plugins report it."},
    {"gvs_session_memory_quota_bytes", "gauge",
     "GPU memory the session may hold; 0 for no limit."},
    {"gvs_session_calls_total", "counter", "Plugin calls served."},
    {"gvs_session_bytes_in_total", "counter",
     "Bytes of frames read from the client."},
    {"gvs_session_bytes_out_total", "counter",
     "Bytes of frames sent to the client."},
    {"gvs_session_uptime_seconds", "gauge", "Time since the session began."},
};

static void session_line(struct text *t, int family,
                         const struct gvsd_stats_view *v)
{
    char id[2 * GVS_IDENTITY_MAX];
    label_value(id, sizeof(id), v->identity);
    append(t, "%s{session=\"%u\",identity=\"%s\"} ", families[family].name,
           (unsigned)v->session, id);
    uint64_t vals[] = {v->memory_used, v->memory_quota, v->calls,
                       v->bytes_in, v->bytes_out};
    if (family < 5)
        append(t, "%llu\n", (unsigned long long)vals[family]);
    else
        append(t, "%.3f\n", (double)v->uptime_ns / 1e9);
}

/* Cumulative counts by reason: a bounded label set (reasons.h), every
 * reason shown from the start so that rates need no missing series. */
static void reasons(struct text *t)
{
    unsigned long long refused[GVSD_REFUSALS_N], ended[GVSD_ENDS_N];
    gvsd_refusal_counts(refused);
    gvsd_end_counts(ended);
    head(t, "gvs_handshakes_refused_total", "counter",
         "Connections refused before they became sessions, by reason.");
    for (int i = 0; i < GVSD_REFUSALS_N; i++)
        append(t, "gvs_handshakes_refused_total{reason=\"%s\"} %llu\n",
               gvsd_refusal_label((enum gvsd_refusal)i), refused[i]);
    head(t, "gvs_sessions_ended_total", "counter",
         "Sessions ended, by reason.");
    for (int i = 0; i < GVSD_ENDS_N; i++)
        append(t, "gvs_sessions_ended_total{reason=\"%s\"} %llu\n",
               gvsd_end_label((enum gvsd_end)i), ended[i]);
}

/* What the table has counted since gvsd started: the calls by plugin
 * (every plugin loaded, from the start) and the bytes each way. */
static void totals(struct text *t, const struct gvsd_plugins *ps)
{
    struct gvsd_stats_totals c;
    gvsd_stats_totals(&c);
    head(t, "gvs_sessions_started_total", "counter",
         "Sessions started: connections past their handshake, status "
         "clients included.");
    append(t, "gvs_sessions_started_total %llu\n",
           (unsigned long long)c.sessions_started);
    head(t, "gvs_calls_total", "counter", "Plugin calls served, by plugin.");
    for (int i = 0; ps != NULL && i < ps->n && i < GVS_MAX_PLUGINS; i++) {
        char name[2 * GVS_NAME_MAX + 2];
        label_value(name, sizeof(name), ps->p[i].desc->name);
        append(t, "gvs_calls_total{plugin=\"%s\"} %llu\n", name,
               (unsigned long long)c.calls[i]);
    }
    head(t, "gvs_bytes_total", "counter",
         "Bytes of frames after the handshakes, from clients (in) and to "
         "them (out).");
    append(t,
           "gvs_bytes_total{direction=\"in\"} %llu\n"
           "gvs_bytes_total{direction=\"out\"} %llu\n",
           (unsigned long long)c.bytes_in, (unsigned long long)c.bytes_out);
}

/* The largest share of its quota a session holds: an alert on a session
 * near its quota needs no per-session series. */
static void quota_ratio(struct text *t, const struct gvsd_stats_view *v,
                        int n)
{
    double max = 0;
    for (int i = 0; i < n; i++)
        if (v[i].memory_quota > 0 &&
            (double)v[i].memory_used / (double)v[i].memory_quota > max)
            max = (double)v[i].memory_used / (double)v[i].memory_quota;
    head(t, "gvs_sessions_quota_used_max_ratio", "gauge",
         "The largest share of its GPU memory quota a session holds; 0 "
         "when no session has a quota.");
    append(t, "gvs_sessions_quota_used_max_ratio %.6f\n", max);
}

/* One GPU of the per-GPU gauges: index is NVML's, -1 for a GPU it did
 * not list (a MIG instance, or no NVML). */
struct gpu_row {
    struct gvsd_gpu_id id;
    int index;
    int sessions;
    uint64_t memory;
};

/* The row of GPU id in rows[0..*n), added with index when it is not
 * there and there is room; NULL when there is none. */
static struct gpu_row *gpu_row(struct gpu_row *rows, int *n,
                               const struct gvsd_gpu_id *id, int index)
{
    for (int i = 0; i < *n; i++)
        if (memcmp(rows[i].id.uuid, id->uuid, sizeof(id->uuid)) == 0)
            return &rows[i];
    if (*n == GVSD_GPUS_MAX)
        return NULL;
    rows[*n] = (struct gpu_row){.id = *id, .index = index};
    return &rows[(*n)++];
}

/* Every GPU NVML listed, with what the sessions reported on it; then
 * those it did not list that a session reported on.  The label set is
 * the host's GPUs: no host has more than GVSD_GPUS_MAX, so rows past
 * that (which only a worker writing nonsense could make) are dropped,
 * and the work of a scrape stays small. */
static void gpus(struct text *t, const struct gvsd_stats_view *v, int n)
{
    struct gpu_row rows[GVSD_GPUS_MAX];
    struct gvsd_gpu_id known[GVSD_GPUS_MAX];
    int valid[GVSD_GPUS_MAX], nrows = 0;
    int nknown = gvsd_stats_gpus(known, valid, GVSD_GPUS_MAX);
    for (int i = 0; i < nknown; i++)
        if (valid[i])
            gpu_row(rows, &nrows, &known[i], i);
    for (int i = 0; i < n; i++) {
        for (int g = 0; g < v[i].ngpus; g++) {
            struct gpu_row *r = gpu_row(rows, &nrows, &v[i].gpu[g], -1);
            if (r != NULL) {
                r->sessions++;
                r->memory += v[i].gpu_memory[g];
            }
        }
    }
    static const char *const names[] = {"gvs_gpu_memory_bytes",
                                        "gvs_gpu_sessions"};
    static const char *const helps[] = {
        "GPU memory the sessions hold on the GPU, as their plugins report "
        "it.",
        "Sessions that have allocated memory on the GPU."};
    for (int f = 0; f < 2; f++) {
        head(t, names[f], "gauge", helps[f]);
        for (int i = 0; i < nrows; i++) {
            const uint8_t *u = rows[i].id.uuid;
            char index[16] = "";
            if (rows[i].index >= 0)
                snprintf(index, sizeof(index), "%d", rows[i].index);
            append(t,
                   "%s{gpu=\"%s\",uuid=\"GPU-%02x%02x%02x%02x-%02x%02x-"
                   "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"} %llu\n",
                   names[f], index, u[0], u[1], u[2], u[3], u[4], u[5], u[6],
                   u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15],
                   f == 0 ? (unsigned long long)rows[i].memory
                          : (unsigned long long)rows[i].sessions);
        }
    }
}

static void body(struct text *t, const struct gvsd_metrics *m)
{
    int max = gvsd_stats_slots();
    struct gvsd_stats_view *v =
        gvs_calloc(max > 0 ? (size_t)max : 1, sizeof(*v));
    if (v == NULL) {
        t->failed = 1;
        return;
    }
    int n = gvsd_stats_snapshot(v, max);
    append(t,
           "# HELP gvs_build_info gvsd's version and wire protocol.\n"
           "# TYPE gvs_build_info gauge\n"
           "gvs_build_info{version=\"%s\",protocol=\"%u\"} 1\n"
           "# HELP gvs_uptime_seconds Time since gvsd started.\n"
           "# TYPE gvs_uptime_seconds gauge\n"
           "gvs_uptime_seconds %.3f\n"
           "# HELP gvs_sessions Sessions being served.\n"
           "# TYPE gvs_sessions gauge\n"
           "gvs_sessions %d\n"
           "# HELP gvs_sessions_max Sessions gvsd serves at most.\n"
           "# TYPE gvs_sessions_max gauge\n"
           "gvs_sessions_max %d\n",
           GVS_VERSION, GVS_PROTO_VERSION,
           (double)gvsd_stats_uptime_ns() / 1e9, n,
           gvsd_stats_max_sessions());
    totals(t, m->plugins);
    reasons(t);
    quota_ratio(t, v, n);
    gpus(t, v, n);
    for (int f = 0;
         m->sessions && f < (int)(sizeof(families) / sizeof(families[0]));
         f++) {
        head(t, families[f].name, families[f].type, families[f].help);
        for (int i = 0; i < n; i++)
            session_line(t, f, &v[i]);
    }
    gvs_free(v);
}

/* Splits "METHOD TARGET HTTP/1.x" off the head; 0, or -1 when the line
 * is anything else. */
static int request_line(const char *in, char *method, size_t mlen,
                        char *target, size_t tlen)
{
    size_t m = 0, t = 0;
    while (in[m] >= 'A' && in[m] <= 'Z' && m + 1 < mlen)
        method[m] = in[m], m++;
    method[m] = '\0';
    if (m == 0 || in[m] != ' ')
        return -1;
    in += m + 1;
    while (in[t] > ' ' && in[t] < 0x7f && t + 1 < tlen)
        target[t] = in[t], t++;
    target[t] = '\0';
    if (t == 0 || in[t] != ' ' || strncmp(in + t + 1, "HTTP/1.", 7) != 0)
        return -1;
    in += t + 8;
    if (*in < '0' || *in > '9')
        return -1;
    in++;
    return strncmp(in, "\r\n", 2) == 0 || *in == '\n' ? 0 : -1;
}

/* The reply to a request head (complete: it ended with an empty line
 * within GVSD_METRICS_REQUEST_MAX bytes): status line, headers, body. */
static void respond(const struct gvsd_metrics *m, struct gvsd_metrics_conn *c,
                    int complete)
{
    char method[8], target[256];
    c->in[c->inlen < sizeof(c->in) ? c->inlen : sizeof(c->in) - 1] = '\0';
    int ok = complete && request_line(c->in, method, sizeof(method), target,
                                      sizeof(target)) == 0;
    const char *status = "400 Bad Request";
    struct text b = {0};
    if (ok && strcmp(method, "GET") != 0) {
        status = "405 Method Not Allowed";
    } else if (ok && (strcmp(target, "/metrics") == 0 ||
                      strncmp(target, "/metrics?", 9) == 0)) {
        status = "200 OK";
        body(&b, m);
    } else if (ok) {
        status = "404 Not Found";
    }
    if (b.failed)
        status = "500 Internal Server Error";
    struct text r = {0};
    append(&r,
           "HTTP/1.1 %s\r\n"
           "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
           "Content-Length: %zu\r\n"
           "Connection: close\r\n\r\n",
           status, b.failed ? 0 : b.len);
    if (!b.failed && b.len > 0)
        append(&r, "%.*s", (int)b.len, b.p);
    gvs_free(b.p);
    c->out = r.p;
    c->outlen = r.failed ? 0 : r.len;
    c->outoff = 0;
    c->state = WRITING;
}

/* A request head ends with an empty line. */
static int head_complete(const struct gvsd_metrics_conn *c)
{
    for (size_t i = 0; i + 1 < c->inlen; i++)
        if (c->in[i] == '\n' &&
            (c->in[i + 1] == '\n' ||
             (c->in[i + 1] == '\r' && i + 2 < c->inlen &&
              c->in[i + 2] == '\n')))
            return 1;
    return 0;
}

/* Moves c along as far as its socket allows; 1 once it is done with. */
static int step(const struct gvsd_metrics *m, struct gvsd_metrics_conn *c)
{
    if (c->state == READING) {
        ssize_t n =
            recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return 1;
        if (n > 0)
            c->inlen += (size_t)n;
        int complete = head_complete(c);
        if (!complete && c->inlen < sizeof(c->in))
            return 0;
        /* A head that fills the buffer is answered as malformed. */
        respond(m, c, complete);
    }
    if (c->state == WRITING) {
        while (c->outoff < c->outlen) {
            ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
                             MSG_NOSIGNAL);
            if (n < 0)
                return errno != EAGAIN && errno != EINTR;
            c->outoff += (size_t)n;
        }
        /* Closing with unread input would reset the connection and
         * could lose the reply: say we are done, then drain. */
        shutdown(c->fd, SHUT_WR);
        c->state = DRAINING;
    }
    char sink[1024];
    ssize_t n;
    while ((n = recv(c->fd, sink, sizeof(sink), 0)) > 0)
        ;
    return n == 0 || (errno != EAGAIN && errno != EINTR);
}

static void drop(struct gvsd_metrics *m, int i)
{
    close(m->conn[i].fd);
    gvs_free(m->conn[i].out);
    m->n--;
    if (i != m->n)
        m->conn[i] = m->conn[m->n];
}

static void accept_pending(struct gvsd_metrics *m)
{
    for (int tries = 0; tries < GVSD_METRICS_CONNS; tries++) {
        int fd = accept4(m->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (m->n == GVSD_METRICS_CONNS) {
            close(fd);
            continue;
        }
        struct gvsd_metrics_conn *c = &m->conn[m->n++];
        c->fd = fd;
        c->state = READING;
        c->deadline = now_ms() + GVSD_METRICS_TIMEOUT_MS;
        c->inlen = 0;
        c->out = NULL;
        c->outlen = c->outoff = 0;
    }
}

void gvsd_metrics_service(struct gvsd_metrics *m, const struct pollfd *pfd)
{
    if (m->fd < 0)
        return;
    long long now = now_ms();
    /* Backwards: a drop moves the last entry into i, and pfd keeps the
     * table's order as it was polled. */
    for (int i = m->n - 1; i >= 0; i--) {
        int done = now >= m->conn[i].deadline;
        if (!done && pfd[1 + i].revents != 0)
            done = step(m, &m->conn[i]);
        if (done)
            drop(m, i);
    }
    if (pfd[0].revents != 0)
        accept_pending(m);
}

void gvsd_metrics_close(struct gvsd_metrics *m)
{
    while (m->n > 0)
        drop(m, m->n - 1);
    if (m->fd >= 0)
        close(m->fd);
    m->fd = -1;
}
