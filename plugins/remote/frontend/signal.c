/* Words that say a copy is done (remote_be.h, SIGNAL and STORE), in the
 * staging region's page of words (staging.c): their values, the wait for
 * one, and the synchronous copy of shared memory that waits for one
 * instead of its reply.
 *
 * A synchronous copy between the device and page-locked memory shared
 * with the backend, proven valid by the API's tables, names a word of
 * its own (STORE): the worker makes the copy, waits for the stream,
 * writes the device's output, then stores the word, and replies only
 * when the word asks for it.  The call returns at the word: no reply's
 * way back (its writing, the ring, the client's reading and waking) is
 * in the copy's time, nor in the next call's (the client's receiver
 * reading it meanwhile, the worker writing it).  (The GPU could
 * write the word itself, sooner still, but then device printf output,
 * which CUDA writes only inside a synchronizing call, would come after
 * the copy returned.)  A word with SIGNAL_ASK (a failure, or output
 * written) has the call wait for the reply, which answers the failure
 * and follows the output; so does a word that does not come while the
 * call may poll (the stream is busy), once the call has told the worker
 * so in the word (SIGNAL_GAVE_UP). */
#include "remote_fe.h"

#include <stdatomic.h>
#include <time.h>

#include "gvs/err.h"
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
        v = (atomic_fetch_add(&last_value, 1) + 1) &
            ~(GVS_REMOTE_SIGNAL_ASK | GVS_REMOTE_SIGNAL_GAVE_UP |
              GVS_REMOTE_SIGNAL_GPU);
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

int remote_fe_stored(const struct gvs_remote_shared *sh,
                     struct gvs_client *cl, uint64_t id, uint64_t stream,
                     _Atomic uint32_t *w, uint32_t value, int32_t *result)
{
    long long ns = gvs_spin_busy_ns();
    uint32_t seen = remote_fe_signal_wait(w, value, ns, ns);
    if (seen == 0) {
        /* The worker stores, or marks the GPU's write to come, unless it
         * finds this: one of the swaps comes first. */
        uint32_t old = atomic_load(w);
        while ((old & ~GVS_REMOTE_SIGNAL_ASK) != value) {
            if (old == (value | GVS_REMOTE_SIGNAL_GPU)) {
                /* No reply comes; the stream tells how the copy went. */
                if (gvs_client_withdraw(cl, id) != 0)
                    return 0;
                *result = remote_fe_shared_copy(
                    sh, stream,
                    GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT, 1,
                    0, (const void *)w, 0);
                return 1;
            }
            if (atomic_compare_exchange_weak(w, &old,
                                             value | GVS_REMOTE_SIGNAL_GAVE_UP))
                return 0;
        }
        seen = old;
    }
    if ((seen & GVS_REMOTE_SIGNAL_ASK) || gvs_client_withdraw(cl, id) != 0)
        return 0;
    *result = sh->api->success;
    return 1;
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

/* Sends the copy with word w to take value: its reply's id in *id. */
static int send(const struct gvs_remote_shared *sh, struct gvs_client *cl,
                struct gvs_buf *req, uint64_t stream, int h2d, uint64_t dev,
                const void *host, size_t len, _Atomic uint32_t *w,
                uint32_t value, uint64_t *id)
{
    int rc = remote_fe_shared_copy_request(
        req, stream,
        GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT |
            GVS_REMOTE_SHARED_STORE,
        h2d, dev, host, len);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, (uint64_t)(uintptr_t)w);
    if (rc == 0)
        rc = gvs_buf_put_u32(req, value);
    if (rc < 0)
        return rc;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    gvs_client_lock(cl);
    rc = gvs_remote_send_locked(sh->api, cl, sh->copy, APIGEN_DEVICE, 0,
                                &iov, 1, id);
    gvs_client_unlock(cl);
    return rc;
}

int remote_fe_signalled_begin(const struct gvs_remote_shared *sh,
                              uint64_t stream, int h2d, uint64_t dev,
                              const void *host, size_t len,
                              struct remote_fe_signalled *s)
{
    const struct gvs_remote_api *api = sh->api;
    _Atomic uint32_t *words;
    *s = (struct remote_fe_signalled){.stream = stream, .word = -1,
                                      .result = api->success};
    if (gvs_spin_busy_ns() <= 0 || api->client(&s->cl) != api->success ||
        (words = remote_fe_staging_words(sh)) == NULL)
        return 0;
    if ((s->word = take_word()) < 0)
        return 0;
    s->w = word_at(words, s->word);
    s->value = remote_fe_signal_value();
    struct gvs_buf *req = remote_fe_copy_buf(0);
    int rc = req != NULL ? send(sh, s->cl, req, stream, h2d, dev, host, len,
                                s->w, s->value, &s->id)
                         : GVS_E_NOMEM;
    if (rc < 0) {
        give_word(s->word);
        s->word = -1;
        s->result = rc == GVS_E_NOMEM ? api->nomem : api->transport_error(rc);
    }
    return 1;
}

int32_t remote_fe_signalled_end(const struct gvs_remote_shared *sh,
                                struct remote_fe_signalled *s)
{
    if (s->word < 0)
        return s->result;
    if (!remote_fe_stored(sh, s->cl, s->id, s->stream, s->w, s->value,
                          &s->result))
        s->result = remote_fe_result(sh, s->cl, s->id);
    /* The worker is done with the word before it replies: it is free. */
    give_word(s->word);
    s->word = -1;
    return s->result;
}

int remote_fe_signalled_copy(const struct gvs_remote_shared *sh,
                             uint64_t stream, int h2d, uint64_t dev,
                             const void *host, size_t len, int32_t *result)
{
    struct remote_fe_signalled s;
    if (!remote_fe_signalled_begin(sh, stream, h2d, dev, host, len, &s))
        return 0;
    *result = remote_fe_signalled_end(sh, &s);
    return 1;
}
