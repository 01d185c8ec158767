/* Coalescing of posted requests: on a connection where every write is a
 * system call, a post is copied into the client's output buffer and
 * leaves with the writes around it, so that a program launching kernels
 * back to back pays a copy per launch instead of a sendmsg.  The flusher
 * thread writes what a post left behind when nothing else follows it. */
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/thread.h"
#include "gvs/spin.h"
#include "internal.h"

/* out_state: the buffer is empty, holds posts, or is empty and the
 * flusher sleeps on the word (only then does a post pay a wake-up). */
enum { OUT_EMPTY, OUT_FULL, OUT_SLEEPING };

/* The flusher writes once no post has come for this long: a program
 * issuing launches back to back adds one every microsecond or two, and
 * one that has stopped should not wait out the whole spin. */
#define QUIET_NS 5000LL
/* iovecs a write builds on the stack before allocating. */
#define IOV_STACK 16

/* Whether this process's flusher runs; guarded by the client lock. */
static int flusher_started;

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

/* Caller holds lock: the buffer is empty again. */
static void out_clear(struct gvs_client *c)
{
    if (c->out_len == 0)
        return;
    c->out_len = 0;
    atomic_store(&c->out_state, OUT_EMPTY);
}

/* Caller holds lock.  One write of what is buffered followed by the
 * encoded header hdr and its body iov (when hdr is not NULL).  The
 * buffer is empty afterwards, written or not. */
static int out_write(struct gvs_client *c, const uint8_t *hdr,
                     const struct iovec *iov, int n)
{
    struct iovec stack[IOV_STACK], *v = stack;
    int k = 0;
    if (n + 2 > IOV_STACK) {
        v = gvs_calloc((size_t)n + 2, sizeof(*v));
        if (v == NULL) {
            out_clear(c);
            return client_break(c, GVS_E_NOMEM);
        }
    }
    if (c->out_len > 0)
        v[k++] = (struct iovec){c->out_buf, c->out_len};
    if (hdr != NULL) {
        v[k++] = (struct iovec){(void *)hdr, GVS_FRAME_HDR_LEN};
        for (int i = 0; i < n; i++)
            v[k++] = iov[i];
    }
    /* Counted before it is made: what the peer answers may be seen
     * before this thread runs again. */
    client_stats_write();
    int rc = gvs_conn_sendv(c->conn, v, k);
    if (v != stack)
        gvs_free(v);
    out_clear(c);
    return rc < 0 ? client_break(c, rc) : 0;
}

/* Caller holds lock; the frame fits in what is left of the buffer. */
static void out_append(struct gvs_client *c, const struct gvs_frame_hdr *h,
                       const struct iovec *iov, int n)
{
    uint8_t *p = c->out_buf + c->out_len;
    int was_empty = c->out_len == 0;
    gvs_frame_hdr_encode(h, p);
    p += GVS_FRAME_HDR_LEN;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len > 0)
            memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    c->out_len += GVS_FRAME_HDR_LEN + (size_t)h->len;
    atomic_fetch_add_explicit(&c->out_posts, 1, memory_order_relaxed);
    if (was_empty &&
        atomic_exchange(&c->out_state, OUT_FULL) == OUT_SLEEPING)
        futex(&c->out_state, FUTEX_WAKE_PRIVATE, 1);
}

/* Body length of iov[0..n-1], checked as gvs_frame_sendv checks it. */
static int body_len(const struct iovec *iov, int n, uint32_t *len)
{
    size_t total = 0;
    if (n < 0 || n > INT_MAX - 2 || (n > 0 && iov == NULL))
        return GVS_E_INVAL;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len > UINT32_MAX - total)
            return GVS_E_TOOBIG;
        total += iov[i].iov_len;
    }
    *len = (uint32_t)total;
    return 0;
}

int client_out_send(struct gvs_client *c, struct gvs_frame_hdr *h,
                    const struct iovec *iov, int n)
{
    int rc = body_len(iov, n, &h->len);
    if (rc < 0)
        return client_break(c, rc);
    size_t size = GVS_FRAME_HDR_LEN + (size_t)h->len;
    int post = c->coalesce && (h->flags & GVS_F_NOREPLY);
    if (post && size <= CLIENT_OUT_MAX - c->out_len &&
        (c->out_len > 0 || atomic_load(&c->out_state) != OUT_SLEEPING)) {
        out_append(c, h, iov, n);
        return 0;
    }
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    gvs_frame_hdr_encode(h, hdr);
    rc = out_write(c, hdr, iov, n);
    /* A post that found the flusher asleep (the program paused) leaves
     * now: waiting for the flusher to wake up would delay it by tens of
     * microseconds.  The flusher is woken afterwards, off this post's
     * way, for the posts that may follow. */
    uint32_t sleeping = OUT_SLEEPING;
    if (post && atomic_compare_exchange_strong(&c->out_state, &sleeping,
                                               OUT_EMPTY))
        futex(&c->out_state, FUTEX_WAKE_PRIVATE, 1);
    return rc;
}

int client_out_flush(struct gvs_client *c)
{
    if (c->out_len == 0)
        return 0;
    if (atomic_load(&c->state) != CLIENT_READY) {
        /* Broken: conn may be gone, and what was posted with it. */
        out_clear(c);
        return atomic_load(&c->err);
    }
    return out_write(c, NULL, NULL, 0);
}

/* Polls, for at most gvs_spin_ns(), while posts keep coming, so that a
 * burst leaves in one write; returns at once when spinning is off or a
 * sender has written the buffer meanwhile. */
static void gather(struct gvs_client *c)
{
    long long ns = gvs_spin_ns();
    if (ns <= 0)
        return;
    long long now = gvs_now_ns(), until = now + ns, quiet = now + QUIET_NS;
    uint32_t seen = atomic_load_explicit(&c->out_posts, memory_order_relaxed);
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&c->out_state, memory_order_relaxed) !=
            OUT_FULL)
            return;
        gvs_cpu_relax();
        if (i % 16 != 0)
            continue;
        now = gvs_now_ns();
        uint32_t posts =
            atomic_load_explicit(&c->out_posts, memory_order_relaxed);
        if (posts != seen) {
            seen = posts;
            quiet = now + QUIET_NS;
        }
        if (now >= quiet || now >= until)
            return;
    }
}

/* Polls, for at most gvs_spin_ns(), for the next post: a program that
 * launches and synchronizes in a loop posts again within microseconds,
 * and the post then costs no wake-up (a system call on the caller's
 * path, about 1.2 us a launch over unix). */
static void linger(struct gvs_client *c)
{
    long long ns = gvs_spin_ns();
    if (ns <= 0)
        return;
    long long until = gvs_now_ns() + ns;
    for (unsigned i = 1; atomic_load_explicit(&c->out_state,
                                              memory_order_relaxed) == OUT_EMPTY;
         i++) {
        gvs_cpu_relax();
        if (i % 64 == 0 && gvs_now_ns() >= until)
            return;
    }
}

static void *flusher_main(void *arg)
{
    struct gvs_client *c = arg;
    for (;;) {
        linger(c);
        uint32_t empty = OUT_EMPTY;
        if (atomic_compare_exchange_strong(&c->out_state, &empty,
                                           OUT_SLEEPING))
            while (atomic_load(&c->out_state) == OUT_SLEEPING)
                futex(&c->out_state, FUTEX_WAIT_PRIVATE, OUT_SLEEPING);
        gather(c);
        /* Under the lock, so never in the middle of a sender's request;
         * a failure has broken the connection, and the buffer stays
         * empty from then on. */
        pthread_mutex_lock(&c->lock);
        (void)client_out_flush(c);
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

int client_out_open(struct gvs_client *c)
{
    const char *env = getenv("GVS_COALESCE");
    int off = env != NULL && strcmp(env, "0") == 0;
    c->coalesce =
        !off && !(gvs_conn_caps(c->conn) & GVS_CONN_CAP_CHEAP_WRITES);
    if (!c->coalesce || flusher_started)
        return 0;
    int rc = gvs_thread_start(flusher_main, c, "gvs-flusher");
    if (rc == 0)
        flusher_started = 1;
    return rc;
}

void client_out_fork_child(struct gvs_client *c)
{
    c->out_len = 0;
    atomic_store(&c->out_state, OUT_EMPTY);
    flusher_started = 0;
}
