/* Words the GPU writes once a posted copy is done (remote_be.h, SIGNAL),
 * in the staging region's page of words (staging.c): their values, the
 * wait for one, and the synchronous copy of shared memory that waits
 * for one instead of a reply.
 *
 * A synchronous copy between the device and page-locked memory shared
 * with the backend, proven valid by the API's tables, is posted on its
 * stream with a word of its own; the GPU writes the word once the copy
 * is done, and the call polls it.  Natively the driver polls a word the
 * GPU writes the same way.  The worker neither waits for the copy nor
 * answers: the reply's way back (its writing, the ring, the client's
 * reading) is gone from the copy's time, and the lane is free
 * meanwhile.  A word with SIGNAL_ASK, or one that does not come while
 * the call may poll (the stream is busy, or stopped by a failure), has
 * the call ask the worker to wait for the stream: that reply answers
 * the failure. */
#include "remote_fe.h"

#include <stdatomic.h>
#include <time.h>

#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "remote_be.h"

/* Polls looked at between reads of the clock. */
#define LOOKS_PER_CLOCK 64u

static _Atomic uint32_t last_value;
/* Bit i: spare word i is some copy's. */
static _Atomic uint64_t taken;

_Static_assert(REMOTE_FE_SPARE_WORDS <= 64, "one bit a word");

/* Threads of the parent's copies do not exist in the child. */
static void fork_child(void)
{
    atomic_store(&taken, 0);
}

__attribute__((constructor)) static void signal_init(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

uint32_t remote_fe_signal_value(void)
{
    uint32_t v;
    do
        v = (atomic_fetch_add(&last_value, 1) + 1) & ~GVS_REMOTE_SIGNAL_ASK;
    while (v == 0);
    return v;
}

uint32_t remote_fe_signal_wait(_Atomic uint32_t *w, uint32_t value,
                               long long spin_ns, long long poll_ns)
{
    long long start = gvs_now_ns();
    for (unsigned n = 1;; n++) {
        uint32_t seen = atomic_load_explicit(w, memory_order_acquire);
        if ((seen & ~GVS_REMOTE_SIGNAL_ASK) == value)
            return seen;
        if (n % LOOKS_PER_CLOCK != 0) {
            gvs_cpu_relax();
            continue;
        }
        long long waited = gvs_now_ns() - start;
        if (waited > poll_ns)
            return 0;
        if (waited > spin_ns) {
            struct timespec nap = {0, REMOTE_FE_SIGNAL_NAP_NS};
            nanosleep(&nap, NULL);
        }
    }
}

static int take_word(void)
{
    uint64_t t = atomic_load(&taken);
    for (;;) {
        if (~t == 0)
            return -1;
        int i = __builtin_ctzll(~t);
        if (i >= (int)REMOTE_FE_SPARE_WORDS)
            return -1;
        if (atomic_compare_exchange_weak(&taken, &t, t | (1ull << i)))
            return i;
    }
}

static void give_word(int i)
{
    atomic_fetch_and(&taken, ~(1ull << i));
}

static _Atomic uint32_t *word_at(_Atomic uint32_t *words, int i)
{
    return (_Atomic uint32_t *)((uint8_t *)words +
                                (size_t)i * REMOTE_FE_SIGNAL_STRIDE);
}

/* Posts the copy with word w to take value, and writes it out at once:
 * nothing else may follow soon to carry it. */
static int post(const struct gvs_remote_shared *sh, struct gvs_client *cl,
                struct gvs_buf *req, uint64_t stream, int h2d, uint64_t dev,
                const void *host, size_t len, _Atomic uint32_t *w,
                uint32_t value)
{
    int rc = remote_fe_shared_copy_request(
        req, stream, GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_SIGNAL,
        h2d, dev, host, len);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, (uint64_t)(uintptr_t)w);
    if (rc == 0)
        rc = gvs_buf_put_u32(req, value);
    if (rc < 0)
        return rc;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    gvs_client_lock(cl);
    rc = gvs_remote_send_locked(sh->api, cl, sh->copy_posted, APIGEN_DEVICE,
                                GVS_F_NOREPLY, &iov, 1, NULL);
    if (rc == 0)
        rc = gvs_client_flush_locked(cl);
    gvs_client_unlock(cl);
    return rc;
}

int remote_fe_signalled_copy(const struct gvs_remote_shared *sh,
                             uint64_t stream, int h2d, uint64_t dev,
                             const void *host, size_t len, int32_t *result)
{
    const struct gvs_remote_api *api = sh->api;
    long long spin = gvs_spin_busy_ns();
    struct gvs_client *cl;
    _Atomic uint32_t *words;
    if (spin <= 0 || sh->copy_posted == 0 ||
        api->client(&cl) != api->success ||
        (words = remote_fe_staging_words(sh)) == NULL)
        return 0;
    int i = take_word();
    if (i < 0)
        return 0;
    _Atomic uint32_t *w = word_at(words, i);
    uint32_t value = remote_fe_signal_value();
    struct gvs_buf *req = gvs_buf_new(64);
    int rc = req != NULL ? post(sh, cl, req, stream, h2d, dev, host, len, w,
                                value)
                         : GVS_E_NOMEM;
    if (rc < 0) {
        /* Nothing was sent, or the connection is gone: no GPU writes the
         * word any more. */
        gvs_buf_free(req);
        give_word(i);
        *result = rc == GVS_E_NOMEM ? api->nomem : api->transport_error(rc);
        return 1;
    }
    uint32_t seen = remote_fe_signal_wait(w, value, spin, spin);
    *result = api->success;
    if (seen == 0 || (seen & GVS_REMOTE_SIGNAL_ASK)) {
        /* Once the worker has waited for the stream, the word is written
         * or never will be (the context failed). */
        rc = remote_fe_shared_copy_request(
            req, stream, GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT,
            h2d, 0, host, 0);
        *result = rc < 0 ? api->nomem : remote_fe_round_trip(sh, sh->copy, req);
    }
    gvs_buf_free(req);
    give_word(i);
    return 1;
}
