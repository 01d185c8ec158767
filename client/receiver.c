/* The receiver thread: reads every frame of the connection, hands each
 * reply to the thread waiting for it (its announced tail straight to
 * where the caller wants it) and each notification to the notify
 * thread. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/thread.h"
#include "gvs/trace.h"
#include "gvs/spin.h"
#include "internal.h"

/* A waiter polls for its reply for gvs_spin_busy_ns() before sleeping:
 * a reply often comes back within tens or hundreds of microseconds, and
 * a futex sleep and wake-up adds tens of microseconds again.  Spinning
 * pays only on a spare core: at most one waiter per two cores beyond the
 * first spins (one where spinning was asked for on a smaller machine),
 * the others sleep at once.  A spinning waiter reads its own reply when
 * nobody else is reading (lead). */

enum { PENDING_OPEN, PENDING_SLEEPING, PENDING_DONE };

/* A request whose reply is awaited.  Fields but state are guarded by
 * wlock while the entry is in the table; once out of it they belong to
 * whoever took it out, until state is PENDING_DONE, after which the
 * waiter frees the entry. */
struct client_pending {
    struct client_pending *next;
    uint64_t id;
    struct gvs_buf *dst;  /* the waiter's reply buffer, once it waits */
    struct gvs_buf *kept; /* the reply, when it came before the wait */
    uint64_t bytes;       /* frame bytes of the reply, for the stats */
    int stat_slot;        /* client_stats_slot's, -1: none */
    long long sent_ns;    /* when it was sent, under a stat_slot */
    int rc;               /* the waiter's result */
    int taken;            /* the receiver has begun to read the reply */
    /* The split gvs_client_expect_into announced, and whether tail got
     * the reply's last tail_len bytes. */
    int announced;
    int into;
    void *tail;
    size_t head_len, tail_len;
    _Atomic uint32_t state;
};

static struct client_pending **find(struct gvs_client *c, uint64_t id)
{
    struct client_pending **pp = &c->pending;
    while (*pp != NULL && (*pp)->id != id)
        pp = &(*pp)->next;
    return pp;
}

static struct client_pending *unlink_id(struct gvs_client *c, uint64_t id)
{
    struct client_pending **pp = find(c, id), *p = *pp;
    if (p != NULL) {
        *pp = p->next;
        atomic_fetch_sub(&c->npending, 1);
    }
    return p;
}

int client_pending_add(struct gvs_client *c, uint64_t id, int stat_slot)
{
    struct client_pending *p = gvs_calloc(1, sizeof(*p));
    if (p == NULL)
        return GVS_E_NOMEM;
    p->id = id;
    p->stat_slot = stat_slot;
    p->sent_ns = stat_slot >= 0 ? gvs_now_ns() : 0;
    pthread_mutex_lock(&c->wlock);
    p->next = c->pending;
    c->pending = p;
    atomic_fetch_add(&c->npending, 1);
    pthread_mutex_unlock(&c->wlock);
    return 0;
}

static void pending_free(struct client_pending *p)
{
    gvs_buf_free(p->kept);
    gvs_free(p);
}

void client_pending_drop(struct gvs_client *c, uint64_t id)
{
    pthread_mutex_lock(&c->wlock);
    struct client_pending *p = unlink_id(c, id);
    pthread_mutex_unlock(&c->wlock);
    if (p != NULL)
        pending_free(p);
}

void client_pending_fork_child(struct gvs_client *c)
{
    atomic_store(&c->npending, 0);
    while (c->pending != NULL) {
        struct client_pending *p = c->pending;
        c->pending = p->next;
        pending_free(p);
    }
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}


/* Pauses between two looks at the leaders line while a waiter leads
 * (a microsecond or so). */
#define LEADER_BACKOFF 32

static int max_spinners;
static _Atomic int spinners;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;

/* Whether to spin at all is gvs_spin_ns()'s to say (by default not on
 * fewer than four CPUs). */
static void spin_init(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    max_spinners = gvs_spin_ns() <= 0 ? 0 : cpus > 3 ? (int)((cpus - 1) / 2) : 1;
}

static int done(struct client_pending *p)
{
    return atomic_load_explicit(&p->state, memory_order_acquire) ==
           PENDING_DONE;
}

static int read_frame(struct gvs_client *c, struct gvs_conn *conn);

/* Leader/follower: a waiter reads what has arrived itself, unless
 * another thread is reading, so that its reply is not handed over by the
 * receiver (a transfer between cores, or a wake-up once the receiver
 * polls no more).  Whatever else it reads goes where the receiver would
 * put it.  A failed read breaks the connection; the receiver, reading
 * next, fails every waiter and closes it. */
static void lead(struct gvs_client *c, struct client_pending *p)
{
    if (pthread_mutex_trylock(&c->rlock) != 0)
        return;
    struct gvs_conn *conn = c->conn;
    int rc = 0;
    while (rc == 0 && conn != NULL && !done(p) && gvs_conn_readable(conn)) {
        rc = read_frame(c, conn);
        if (done(p))
            client_stats_own_read();
    }
    if (rc < 0)
        (void)client_break(c, rc);
    pthread_mutex_unlock(&c->rlock);
}

static void spin(struct gvs_client *c, struct client_pending *p)
{
    pthread_once(&spin_once, spin_init);
    if (atomic_fetch_add(&spinners, 1) < max_spinners) {
        atomic_fetch_add(&c->leaders, 1);
        long long until = gvs_now_ns() + gvs_spin_busy_ns();
        for (unsigned i = 1; !done(p); i++) {
            lead(c, p);
            if (done(p) || (i % 64 == 0 && gvs_now_ns() > until))
                break;
            gvs_cpu_relax();
        }
        atomic_fetch_sub(&c->leaders, 1);
    }
    atomic_fetch_sub(&spinners, 1);
}

static void await(struct gvs_client *c, struct client_pending *p)
{
    spin(c, p);
    uint32_t open = PENDING_OPEN;
    if (!atomic_compare_exchange_strong(&p->state, &open, PENDING_SLEEPING))
        return;
    while (atomic_load_explicit(&p->state, memory_order_acquire) !=
           PENDING_DONE)
        futex(&p->state, FUTEX_WAIT_PRIVATE, PENDING_SLEEPING);
}

/* Hands p back to its waiter, who frees it. */
static void complete(struct client_pending *p, int rc)
{
    p->rc = rc;
    if (atomic_exchange_explicit(&p->state, PENDING_DONE,
                                 memory_order_release) == PENDING_SLEEPING)
        futex(&p->state, FUTEX_WAKE_PRIVATE, 1);
}

/* Whether a body of len bytes is split as announced, its head going
 * into a buffer of at most max bytes. */
static int splits(const struct client_pending *p, size_t len, size_t max)
{
    return p->announced && len >= p->head_len &&
           len - p->head_len == p->tail_len && p->head_len <= max;
}

/* A reply that was kept moves into the waiter's buffer; when it was
 * read whole (it came before its announcement), its tail is copied out
 * now. */
static int deliver(struct client_pending *p, struct gvs_buf *dst)
{
    const uint8_t *body = gvs_buf_ptr(p->kept);
    size_t len = gvs_buf_len(p->kept);
    gvs_buf_reset(dst);
    if (!p->into && splits(p, len, gvs_buf_max(dst))) {
        if (p->tail_len > 0)
            memcpy(p->tail, body + p->head_len, p->tail_len);
        len = p->head_len;
        p->into = 1;
    }
    int rc = gvs_buf_put_bytes(dst, body, len);
    if (rc == 0)
        client_stats_reply(p->bytes, p->stat_slot, p->sent_ns);
    else
        p->into = 0;
    return rc;
}

/* Caller holds wlock: why request id's entry is missing or unusable. */
static int unusable(struct gvs_client *c)
{
    /* A broken connection has dropped every awaited reply. */
    return atomic_load(&c->state) == CLIENT_FAILED ? atomic_load(&c->err)
                                                   : GVS_E_INVAL;
}

int gvs_client_wait_into(struct gvs_client *c, uint64_t id,
                         struct gvs_buf *reply, int *into)
{
    int rc, dummy;
    if (into == NULL)
        into = &dummy;
    *into = 0;
    pthread_mutex_lock(&c->wlock);
    struct client_pending *p = *find(c, id);
    if (p == NULL || p->dst != NULL) {
        rc = unusable(c);
        pthread_mutex_unlock(&c->wlock);
        return rc;
    }
    if (p->kept != NULL) {
        unlink_id(c, id);
        pthread_mutex_unlock(&c->wlock);
        rc = deliver(p, reply);
    } else {
        p->dst = reply;
        pthread_mutex_unlock(&c->wlock);
        await(c, p);
        rc = p->rc;
    }
    *into = rc == 0 && p->into;
    gvs_trace(id, 0, 0, GVS_TRACE_RETURN);
    pending_free(p);
    return rc;
}

int gvs_client_withdraw(struct gvs_client *c, uint64_t id)
{
    pthread_mutex_lock(&c->wlock);
    struct client_pending *p = *find(c, id);
    int rc = p == NULL ? unusable(c)
             : p->dst != NULL || p->taken ? GVS_E_INVAL
                                          : 0;
    if (rc == 0)
        unlink_id(c, id);
    pthread_mutex_unlock(&c->wlock);
    if (rc == 0)
        pending_free(p);
    return rc;
}

int gvs_client_wait(struct gvs_client *c, uint64_t id, struct gvs_buf *reply)
{
    return gvs_client_wait_into(c, id, reply, NULL);
}

int gvs_client_expect_into(struct gvs_client *c, uint64_t id,
                           size_t head_len, void *tail, size_t tail_len)
{
    if ((tail == NULL && tail_len > 0) || head_len > SIZE_MAX - tail_len)
        return GVS_E_INVAL;
    int rc = 0;
    pthread_mutex_lock(&c->wlock);
    struct client_pending *p = *find(c, id);
    if (p == NULL)
        rc = unusable(c);
    else if (p->announced || p->dst != NULL)
        rc = GVS_E_INVAL;
    else {
        p->announced = 1;
        p->tail = tail;
        p->head_len = head_len;
        p->tail_len = tail_len;
    }
    pthread_mutex_unlock(&c->wlock);
    return rc;
}

/* Every awaited reply fails with the connection's error. */
static void fail_pending(struct gvs_client *c, int err)
{
    pthread_mutex_lock(&c->wlock);
    atomic_store(&c->npending, 0);
    while (c->pending != NULL) {
        struct client_pending *p = c->pending;
        c->pending = p->next;
        if (p->dst != NULL)
            complete(p, err);
        else
            pending_free(p);
    }
    pthread_mutex_unlock(&c->wlock);
}

/* Reads a reply body of len bytes into buf or, when split, its head
 * into buf and its tail straight into the announced memory; *into says
 * whether the tail went there. */
static int recv_reply(struct gvs_conn *conn, size_t len, int split,
                      const struct client_pending *p, struct gvs_buf *buf,
                      int *into)
{
    *into = 0;
    int rc = gvs_frame_recv_body(conn, split ? p->head_len : len, buf);
    if (rc == 0 && split && p->tail_len > 0) {
        rc = gvs_conn_recv(conn, p->tail, p->tail_len);
        if (rc == GVS_E_CLOSED)
            rc = GVS_E_PROTO;
    }
    *into = rc == 0 && split;
    return rc;
}

/* A reply goes straight into its waiter's buffer when the wait came
 * first, else into one of its own, kept for the wait; an announced tail
 * goes straight to its place either way.  Whether the body splits is
 * decided here, under wlock, from what was announced before it came:
 * the announcement is not read again while the body is read. */
static int drop(struct gvs_conn *conn, size_t len);

static int take_reply(struct gvs_client *c, struct gvs_conn *conn,
                      const struct gvs_frame_hdr *h)
{
    gvs_trace(h->id, h->plugin, h->op, GVS_TRACE_REPLY_READ);
    pthread_mutex_lock(&c->wlock);
    struct client_pending *p = *find(c, h->id);
    if (p == NULL || p->taken) {
        pthread_mutex_unlock(&c->wlock);
        return GVS_E_PROTO;
    }
    p->taken = 1;
    p->bytes = GVS_FRAME_HDR_LEN + (uint64_t)h->len;
    int into;
    if (p->dst != NULL) {
        int split = splits(p, h->len, gvs_buf_max(p->dst));
        unlink_id(c, h->id);
        pthread_mutex_unlock(&c->wlock);
        int rc = recv_reply(conn, h->len, split, p, p->dst, &into);
        p->into = into;
        if (rc < 0 && rc != GVS_E_TOOBIG) {
            complete(p, client_break(c, rc));
            return rc;
        }
        if (rc == 0)
            client_stats_reply(p->bytes, p->stat_slot, p->sent_ns);
        complete(p, rc);
        return 0;
    }
    int split = splits(p, h->len, GVS_BUF_MAX_CEILING);
    pthread_mutex_unlock(&c->wlock);
    struct gvs_buf *b = gvs_buf_new(GVS_BUF_MAX_CEILING);
    int rc = b != NULL ? recv_reply(conn, h->len, split, p, b, &into)
                       : GVS_E_NOMEM;
    if (rc < 0) {
        gvs_buf_free(b);
        return rc;
    }
    /* The wait may have come while the body was read. */
    pthread_mutex_lock(&c->wlock);
    p->kept = b;
    p->into = into;
    if (p->dst == NULL) {
        pthread_mutex_unlock(&c->wlock);
        return 0;
    }
    unlink_id(c, h->id);
    pthread_mutex_unlock(&c->wlock);
    complete(p, deliver(p, p->dst));
    return 0;
}

/* Reads and drops len bytes of a body. */
static int drop(struct gvs_conn *conn, size_t len)
{
    uint8_t scratch[4096];
    int rc = 0;
    while (rc == 0 && len > 0) {
        size_t n = len < sizeof(scratch) ? len : sizeof(scratch);
        rc = gvs_conn_recv(conn, scratch, n);
        len -= n;
    }
    return rc;
}

/* A notification whose bytes go straight to their place (into): the
 * head, then the tail where place says. */
static int take_into(struct gvs_conn *conn, const struct gvs_frame_hdr *h,
                     const struct gvs_notify_into *into, void *arg)
{
    uint8_t head[GVS_NOTIFY_HEAD_MAX];
    if (h->len < into->head_len)
        return drop(conn, h->len);
    int rc = gvs_conn_recv(conn, head, into->head_len);
    if (rc < 0)
        return rc;
    size_t tail = h->len - into->head_len;
    void *dst = into->place(h->op, head, tail, arg);
    if (dst == NULL)
        return drop(conn, tail);
    rc = gvs_conn_recv(conn, dst, tail);
    into->landed(h->op, dst, rc == 0, arg);
    return rc;
}

/* An inline handler runs here, before the next frame is read; the
 * others queue for the notify thread. */
static int take_notify(struct gvs_conn *conn, const struct gvs_frame_hdr *h)
{
    const struct gvs_notify_into *into;
    void *into_arg;
    if (client_registry_into(h->plugin, h->op, &into, &into_arg)) {
        int rc = take_into(conn, h, into, into_arg);
        return rc == GVS_E_CLOSED ? GVS_E_PROTO : rc;
    }
    struct gvs_buf *b = gvs_buf_new(GVS_BUF_MAX_CEILING);
    int rc = b != NULL ? gvs_frame_recv_body(conn, h->len, b) : GVS_E_NOMEM;
    gvs_notify_fn fn;
    void *arg;
    if (rc < 0) {
        gvs_buf_free(b);
    } else if (client_registry_inline(h->plugin, h->op, &fn, &arg)) {
        fn(h->op, b, arg);
        gvs_buf_free(b);
    } else {
        rc = client_notify_push(h->plugin, h->op, b);
    }
    return rc;
}

/* While a reply is due the receiver polls longer (gvs_spin_busy_ns). */
static int replies_due(void *arg)
{
    struct gvs_client *c = arg;
    return atomic_load_explicit(&c->npending, memory_order_relaxed) > 0;
}

/* Reads one frame and hands it on.  Caller holds rlock. */
static int read_frame(struct gvs_client *c, struct gvs_conn *conn)
{
    struct gvs_frame_hdr h;
    int rc = gvs_frame_recv_hdr(conn, GVS_BUF_MAX_CEILING, &h);
    if (rc == 0 && h.flags == GVS_F_REPLY)
        rc = take_reply(c, conn, &h);
    else if (rc == 0 && h.flags == GVS_F_NOTIFY && h.plugin != 0)
        rc = take_notify(conn, &h);
    else if (rc == 0)
        rc = GVS_E_PROTO;
    return rc;
}

/* Polls until a frame is there to read and no waiter leads, for
 * gvs_spin_ns() or the connection's rhythm (gvs_spin_hot_next), the
 * longer (gvs_spin_busy_ns() while replies are due), after the last
 * leader left.  A program that works on the host between its calls
 * finds the receiver polling when it calls again, free to read its own
 * reply, instead of asleep in a read it would have to wake up from.
 * While one leads, only the leaders line is read, and seldom: polling
 * the connection would pull the lines the waiter writes on every call
 * (its ring position, the client's locks) to this core and back.  1
 * when a frame is there.  *since is when the last quiet time began. */
static int receiver_spin(struct gvs_client *c, struct gvs_conn *conn,
                         long long *since)
{
    long long ns = gvs_spin_ns();
    long long start = gvs_now_ns(), now = start;
    *since = start;
    if (ns <= 0)
        return 0;
    int led = 0;
    for (;;) {
        if (atomic_load_explicit(&c->leaders, memory_order_relaxed) > 0) {
            if (!led)
                c->hot_ns = gvs_spin_hot_next(c->hot_ns, now - start);
            led = 1;
            for (int i = 0; i < LEADER_BACKOFF; i++)
                gvs_cpu_relax();
            *since = start = now = gvs_now_ns();
            continue;
        }
        led = 0;
        if (gvs_conn_readable(conn))
            return 1;
        gvs_cpu_relax();
        now = gvs_now_ns();
        long long horizon = c->hot_ns > ns ? c->hot_ns : ns;
        if (now - start >= horizon &&
            (now - start >= gvs_spin_busy_ns() || !replies_due(c)))
            return 0;
    }
}

/* Takes rlock to read a frame: while waiters poll to read their own
 * replies it leaves them what arrives.  Once nothing came for its spin
 * it waits for the next frame without rlock where the transport can
 * (gvs_conn_wait_readable), so that a caller who polls for its reply
 * after a pause of the program reads it as it comes, instead of waiting
 * for this thread to wake up; elsewhere it blocks on rlock, then in the
 * read, holding it.  0 when it holds rlock with a frame to read (or a
 * read to block in); *since as receiver_spin's. */
static int take_reading(struct gvs_client *c, struct gvs_conn *conn,
                        long long *since)
{
    /* The next frame often comes within microseconds (a reply to a call
     * made just after the last one, or to one in flight): catch it
     * without a sleep and a wake-up. */
    if (receiver_spin(c, conn, since))
        return pthread_mutex_trylock(&c->rlock);
    if (gvs_conn_wait_readable(conn) < 0)
        return pthread_mutex_lock(&c->rlock);
    if (pthread_mutex_trylock(&c->rlock) != 0)
        return -1;
    /* A caller may have read it meanwhile. */
    if (gvs_conn_readable(conn))
        return 0;
    pthread_mutex_unlock(&c->rlock);
    return -1;
}

static void *receiver_main(void *arg)
{
    struct gvs_client *c = arg;
    struct gvs_conn *conn = c->conn;
    int rc;
    for (;;) {
        long long since;
        if (take_reading(c, conn, &since) != 0)
            continue;
        rc = read_frame(c, conn);
        if (rc < 0)
            break;
        /* The quiet time this frame ended, also one slept through. */
        c->hot_ns = gvs_spin_hot_next(c->hot_ns, gvs_now_ns() - since);
        pthread_mutex_unlock(&c->rlock);
    }
    fail_pending(c, client_break(c, rc));
    pthread_mutex_lock(&c->lock);
    gvs_conn_close(c->conn);
    c->conn = NULL;
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&c->rlock);
    return NULL;
}

/* Keepalive: a thread of its own, so that the receiver's reading of
 * frames is left alone.  A PING is posted (the server does not answer a
 * posted one, so there is no reply to take), in the request stream like
 * any post, under the lock. */
struct keepalive {
    struct gvs_client *c;
    struct gvs_conn *conn; /* the connection it keeps; it ends with it */
    unsigned ms;
    unsigned ack_ms; /* gvs_conn_unanswered's bound; 0: none */
    struct gvs_conn_watch watch;
};

/* Caller holds lock: whether the connection is still the one kept. */
static int kept(const struct keepalive *k)
{
    return atomic_load(&k->c->state) == CLIENT_READY && k->c->conn == k->conn;
}

static uint64_t bytes_sent(void)
{
    struct gvs_client_stats st;
    gvs_client_get_stats(&st);
    return st.bytes_sent;
}

static void *keepalive_main(void *arg)
{
    struct keepalive k = *(struct keepalive *)arg;
    gvs_free(arg);
    struct timespec tick = {.tv_sec = k.ms / 2000,
                            .tv_nsec = (long)(k.ms / 2 % 1000) * 1000000};
    if (k.ms < 2)
        tick.tv_nsec = 1000000;
    uint64_t seen = bytes_sent();
    for (;;) {
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&k.c->lock);
        if (!kept(&k)) {
            pthread_mutex_unlock(&k.c->lock);
            return NULL;
        }
        /* Looked at under the lock, which keeps the connection: a call
         * blocked writing to a vanished gvsd holds it, and is ended by the
         * kernel's own retransmission limit instead. */
        if (gvs_conn_unanswered(k.conn, k.ack_ms, &k.watch)) {
            (void)client_break(k.c, GVS_E_TIMEOUT);
            pthread_mutex_unlock(&k.c->lock);
            return NULL;
        }
        uint64_t now = bytes_sent();
        if (now == seen) {
            struct gvs_frame_hdr h = {.op = GVS_CTL_PING,
                                      .flags = GVS_F_NOREPLY,
                                      .id = k.c->next_id++};
            /* A failure has broken the connection: the next look ends. */
            (void)client_out_send(k.c, &h, NULL, 0);
        }
        seen = now;
        pthread_mutex_unlock(&k.c->lock);
    }
}

/* The keepalive first: should the receiver not start, the connection
 * is closed at once, which the keepalive notices, while a receiver left
 * running would go on reading it. */
int client_receiver_start(struct gvs_client *c, unsigned keepalive_ms,
                          unsigned ack_timeout_ms)
{
    if (keepalive_ms != 0) {
        struct keepalive *k = gvs_malloc(sizeof(*k));
        if (k == NULL)
            return GVS_E_NOMEM;
        *k = (struct keepalive){.c = c,
                                .conn = c->conn,
                                .ms = keepalive_ms,
                                .ack_ms = ack_timeout_ms};
        int rc = gvs_thread_start(keepalive_main, k, "gvs-keepalive");
        if (rc < 0) {
            gvs_free(k);
            return rc;
        }
    }
    return gvs_thread_start(receiver_main, c, "gvs-receiver");
}
