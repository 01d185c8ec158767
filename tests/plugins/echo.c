/* gvs-echo.so: a backend plugin for testing gvsd and the client library
 * without a GPU. */
#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "echo.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/plugin.h"

/* Handlers of one session run on several threads: everything here is
 * guarded by lock. */
struct echo_state {
    const struct gvs_host_api *host;
    struct gvs_session *session;
    pthread_mutex_t lock;
    pthread_cond_t released;
    uint64_t notes;
    uint64_t sum;
    uint64_t releases; /* RELEASEs not yet taken by a BLOCK */
    uint32_t peer_at_open; /* what host->peer gave at session_open */
};

/* The "peer" plugin's value through host->peer, 0 without one. */
static uint32_t peer_value(const struct echo_state *s)
{
    const uint32_t *v = s->host->peer(s->session, PEER_PLUGIN_NAME);
    return v != NULL ? *v : 0;
}

static int op_peer(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    int rc = gvs_buf_expect_end(c->in);
    if (rc == 0)
        rc = gvs_buf_put_u32(c->out, s->peer_at_open);
    return rc < 0 ? rc : gvs_buf_put_u32(c->out, peer_value(s));
}

static int op_quiet(struct gvs_call *c)
{
    uint32_t quiet;
    int rc = gvs_buf_get_u32(c->in, &quiet);
    if (rc == 0)
        rc = gvs_buf_expect_end(c->in);
    if (rc == 0)
        c->answered = quiet == 1;
    return rc;
}

static int op_echo(struct gvs_call *c)
{
    size_t len = gvs_buf_len(c->in);
    int rc = gvs_buf_put_bytes(c->out, gvs_buf_ptr(c->in), len);
    return rc < 0 ? rc : gvs_buf_consume(c->in, len);
}

static int op_crash(struct gvs_call *c)
{
    (void)c;
    abort();
}

static int get_u32_only(struct gvs_call *c, uint32_t *v)
{
    int rc = gvs_buf_get_u32(c->in, v);
    return rc < 0 ? rc : gvs_buf_expect_end(c->in);
}

static void sleep_ms(uint32_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0)
        ;
}

/* Reads the request's u32 ms and sleeps that long. */
static int sleep_request(struct gvs_call *c)
{
    uint32_t ms;
    int rc = get_u32_only(c, &ms);
    if (rc < 0)
        return rc;
    sleep_ms(ms);
    return 0;
}

static int op_sleep(struct gvs_call *c)
{
    return sleep_request(c);
}

static int op_slow_note(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    int rc = sleep_request(c);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->lock);
    s->notes++;
    s->sum++;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int op_bulk_note(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    uint32_t ms;
    int rc = gvs_buf_get_u32(c->in, &ms);
    if (rc < 0)
        return rc;
    sleep_ms(ms);
    pthread_mutex_lock(&s->lock);
    s->notes++;
    s->sum++;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int op_notify_bytes(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    return s->host->notify(s->session, ECHO_PLUGIN_ID, ECHO_NOTE_BYTES,
                           gvs_buf_ptr(c->in), gvs_buf_len(c->in));
}

static int op_note(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    uint32_t v;
    int rc = get_u32_only(c, &v);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->lock);
    s->notes++;
    s->sum += v;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int op_count(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    int rc = gvs_buf_expect_end(c->in);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->lock);
    uint64_t notes = s->notes, sum = s->sum;
    pthread_mutex_unlock(&s->lock);
    rc = gvs_buf_put_u64(c->out, notes);
    return rc < 0 ? rc : gvs_buf_put_u64(c->out, sum);
}

static int op_badreq(struct gvs_call *c)
{
    (void)c;
    return GVS_E_PROTO;
}

static int op_pid(struct gvs_call *c)
{
    int rc = gvs_buf_expect_end(c->in);
    return rc < 0 ? rc : gvs_buf_put_u32(c->out, (uint32_t)getpid());
}

/* Waits for a RELEASE (taking it) or ms to pass: 1 if released. */
static uint32_t wait_release(struct echo_state *s, uint32_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    int waited = 0;
    pthread_mutex_lock(&s->lock);
    while (s->releases == 0 && waited != ETIMEDOUT)
        waited = pthread_cond_timedwait(&s->released, &s->lock, &until);
    uint32_t released = s->releases > 0;
    if (released)
        s->releases--;
    pthread_mutex_unlock(&s->lock);
    return released;
}

static int op_block(struct gvs_call *c)
{
    uint32_t ms;
    int rc = get_u32_only(c, &ms);
    return rc < 0 ? rc : gvs_buf_put_u32(c->out, wait_release(c->state, ms));
}

static int op_await(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    uint32_t ms;
    int rc = get_u32_only(c, &ms);
    if (rc < 0)
        return rc;
    s->host->await_client(s->session, 1);
    rc = s->host->notify(s->session, ECHO_PLUGIN_ID, ECHO_NOTE_AWAIT, NULL, 0);
    uint32_t released = rc == 0 ? wait_release(s, ms) : 0;
    s->host->await_client(s->session, 0);
    return gvs_buf_put_u32(c->out, released);
}

static int op_release(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    int rc = gvs_buf_expect_end(c->in);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->lock);
    s->releases++;
    pthread_cond_signal(&s->released);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int op_ping_lane(struct gvs_call *c)
{
    int rc = gvs_buf_expect_end(c->in);
    return rc < 0 ? rc : gvs_buf_put_u32(c->out, c->lane);
}

struct ticker {
    struct echo_state *s;
    uint32_t n;
    int rc;
};

static void *tick(void *arg)
{
    struct ticker *t = arg;
    for (uint32_t i = 0; i < t->n && t->rc == 0; i++) {
        uint8_t body[4] = {(uint8_t)i, (uint8_t)(i >> 8), (uint8_t)(i >> 16),
                           (uint8_t)(i >> 24)};
        t->rc = t->s->host->notify(t->s->session, ECHO_PLUGIN_ID,
                                   ECHO_NOTE_TICK, body, sizeof(body));
    }
    return NULL;
}

/* The notifications come from a thread of the plugin's own, as a CUDA
 * callback's would. */
static int op_notify_me(struct gvs_call *c)
{
    struct ticker t = {c->state, 0, 0};
    pthread_t th;
    int rc = get_u32_only(c, &t.n);
    if (rc < 0)
        return rc;
    if (pthread_create(&th, NULL, tick, &t) != 0)
        return GVS_E_NOMEM;
    pthread_join(th, NULL);
    return 0;
}

static int op_report_memory(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    uint64_t bytes;
    int rc = gvs_buf_get_u64(c->in, &bytes);
    if (rc == 0)
        rc = gvs_buf_expect_end(c->in);
    if (rc == 0)
        s->host->report_memory(s->session, bytes);
    return rc;
}

static int op_report_gpu_memory(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    int32_t device;
    uint8_t uuid[16];
    uint64_t bytes;
    int rc = gvs_buf_get_i32(c->in, &device);
    if (rc == 0)
        rc = gvs_buf_get_bytes(c->in, uuid, sizeof(uuid));
    if (rc == 0)
        rc = gvs_buf_get_u64(c->in, &bytes);
    if (rc == 0)
        rc = gvs_buf_expect_end(c->in);
    if (rc == 0) {
        s->host->report_gpu_uuid(s->session, device, uuid);
        s->host->report_gpu_memory(s->session, device, bytes);
    }
    return rc;
}

static int op_tid(struct gvs_call *c)
{
    uint32_t ms = 0;
    int rc = c->op == ECHO_OP_TID ? gvs_buf_get_u32(c->in, &ms) : 0;
    if (rc == 0)
        rc = gvs_buf_expect_end(c->in);
    if (rc == 0 && ms > 0)
        usleep((useconds_t)ms * 1000);
    return rc < 0 ? rc : gvs_buf_put_u32(c->out, (uint32_t)gettid());
}

/* CHAIN's counts; a worker serves one session. */
static _Atomic uint64_t chain_served, chain_promised, chain_kept;
/* Set by a CHAIN that promised; any op served next on the thread
 * clears it (next_same promises the very next one). */
static __thread int chain_expect;

static int op_chain(struct gvs_call *c)
{
    uint32_t v;
    int rc = gvs_buf_get_u32(c->in, &v);
    if (rc == 0)
        rc = gvs_buf_expect_end(c->in);
    if (rc < 0)
        return rc;
    chain_served++;
    if (chain_expect)
        chain_kept++;
    chain_expect = c->next_same;
    chain_promised += c->next_same != 0;
    return 0;
}

static int op_chain_count(struct gvs_call *c)
{
    chain_expect = 0;
    int rc = gvs_buf_expect_end(c->in);
    if (rc == 0)
        rc = gvs_buf_put_u64(c->out, chain_served);
    if (rc == 0)
        rc = gvs_buf_put_u64(c->out, chain_promised);
    return rc < 0 ? rc : gvs_buf_put_u64(c->out, chain_kept);
}

static const struct gvs_op echo_ops[] = {
    {ECHO_OP_ECHO, 0, "ECHO", op_echo},
    {ECHO_OP_CRASH, 0, "CRASH", op_crash},
    {ECHO_OP_SLEEP, 0, "SLEEP", op_sleep},
    {ECHO_OP_NOTE, GVS_OP_ASYNC_OK, "NOTE", op_note},
    {ECHO_OP_COUNT, 0, "COUNT", op_count},
    {ECHO_OP_BADREQ, 0, "BADREQ", op_badreq},
    {ECHO_OP_PID, 0, "PID", op_pid},
    {ECHO_OP_BLOCK, GVS_OP_BLOCKING, "BLOCK", op_block},
    {ECHO_OP_RELEASE, GVS_OP_INLINE | GVS_OP_ASYNC_OK, "RELEASE", op_release},
    {ECHO_OP_PING_LANE, 0, "PING_LANE", op_ping_lane},
    {ECHO_OP_NOTIFY_ME, 0, "NOTIFY_ME", op_notify_me},
    {ECHO_OP_REPORT_MEMORY, 0, "REPORT_MEMORY", op_report_memory},
    {ECHO_OP_SLOW_NOTE, GVS_OP_ASYNC_OK, "SLOW_NOTE", op_slow_note},
    {ECHO_OP_COUNT_SYNC, GVS_OP_BLOCKING, "COUNT_SYNC", op_count},
    {ECHO_OP_PEER, 0, "PEER", op_peer},
    {ECHO_OP_REPORT_GPU_MEMORY, 0, "REPORT_GPU_MEMORY", op_report_gpu_memory},
    {ECHO_OP_SLOW_NOTE_BLOCKING, GVS_OP_BLOCKING | GVS_OP_ASYNC_OK,
     "SLOW_NOTE_BLOCKING", op_slow_note},
    {ECHO_OP_AWAIT, 0, "AWAIT", op_await},
    {ECHO_OP_BULK_NOTE, GVS_OP_ASYNC_OK, "BULK_NOTE", op_bulk_note},
    {ECHO_OP_NOTIFY_BYTES, 0, "NOTIFY_BYTES", op_notify_bytes},
    {ECHO_OP_QUIET, 0, "QUIET", op_quiet},
    {ECHO_OP_TID, GVS_OP_BLOCKING, "TID", op_tid},
    {ECHO_OP_TID_INLINE, GVS_OP_INLINE, "TID_INLINE", op_tid},
    {ECHO_OP_CHAIN, GVS_OP_ASYNC_OK | GVS_OP_BATCH, "CHAIN", op_chain},
    {ECHO_OP_CHAIN_COUNT, 0, "CHAIN_COUNT", op_chain_count},
    GVS_OP_END,
};

static int echo_open(const struct gvs_host_api *host,
                     struct gvs_session *session, void **state)
{
    struct echo_state *s = gvs_calloc(1, sizeof(*s));
    if (s == NULL)
        return GVS_E_NOMEM;
    s->host = host;
    s->session = session;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->released, NULL);
    s->peer_at_open = peer_value(s);
    host->log(GVS_LOG_DEBUG, "session opened");
    *state = s;
    return 0;
}

static void echo_close(void *state)
{
    struct echo_state *s = state;
    pthread_cond_destroy(&s->released);
    pthread_mutex_destroy(&s->lock);
    gvs_free(s);
}

/* TID waits for nothing when it sleeps 0 ms. */
static int echo_may_wait(void *state, uint16_t op, uint32_t lane,
                         const struct gvs_buf *in)
{
    (void)state;
    (void)lane;
    static const uint8_t zero[4];
    return op != ECHO_OP_TID || gvs_buf_len(in) != 4 ||
           memcmp(gvs_buf_ptr(in), zero, 4) != 0;
}

static const struct gvs_plugin echo_plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = ECHO_PLUGIN_ID,
    .name = ECHO_PLUGIN_NAME,
    .table_hash = ECHO_TABLE_HASH,
    .ops = echo_ops,
    .session_open = echo_open,
    .session_close = echo_close,
    .may_wait = echo_may_wait,
};

__attribute__((visibility("default"))) int
gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out)
{
    if (abi != GVS_PLUGIN_ABI)
        return GVS_E_VERSION;
    *out = &echo_plugin;
    return 0;
}
