#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "gpus.h"
#include "gvs/err.h"
#include "gvs/escape.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "reasons.h"
#include "stats.h"

/* Workers and the parent share these atomics through memory they map
 * separately: they must never fall back to a lock of one process. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics lock-free");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics lock-free");

#define STATS_MAGIC 0x54535647u /* "GVST" */
/* A reader gives up on a slot that changes under it this often (its
 * worker is busy publishing; it is shown next time). */
#define READ_TRIES 8

/* Fixed size, versioned (GVSD_STATS_VERSION).  The fields above the
 * counters change only inside a seq window (odd while writing); the
 * counters are written by the worker's threads at any time.  bytes_in,
 * bytes_out and calls are the slot's lifetime counts (stats.h): nothing
 * resets them, and the *_base fields keep what they were when the slot
 * was claimed.  bytes_in has a cache line to itself: the session's
 * reader thread adds to it, while the executor and lane threads add to
 * the others. */
struct slot {
    _Atomic uint32_t seq;
    _Atomic uint32_t state; /* enum gvsd_slot_state */
    _Atomic uint32_t session;
    _Atomic uint32_t pid;
    _Atomic uint64_t start_ns; /* CLOCK_MONOTONIC, shared by all processes */
    _Atomic uint64_t memory_quota;
    _Atomic uint64_t calls_base, bytes_in_base, bytes_out_base;
    _Atomic uint32_t named; /* bit d: gpu[d] is device ordinal d's UUID */
    char identity[GVS_IDENTITY_MAX];
    uint8_t gpu[GVS_SESSION_GPUS][16];
    alignas(64) _Atomic uint64_t bytes_in;
    alignas(64) _Atomic uint64_t bytes_out;
    _Atomic uint64_t memory_used;
    _Atomic uint64_t calls[GVS_MAX_PLUGINS];
    _Atomic uint64_t gpu_memory[GVS_SESSION_GPUS];
};
_Static_assert(sizeof(struct slot) == 832, "the slot layout is versioned");

struct table {
    uint32_t magic;
    uint32_t version;
    uint32_t nslots;
    uint32_t slot_size;
    uint64_t start_ns;
    /* Held by a worker while it counts the sessions and joins them
     * (gvsd_stats_publish): robust, so that a worker killed holding it
     * does not lock the others out. */
    pthread_mutex_t enter;
    /* Cumulative, by reason (reasons.h); any process adds. */
    _Atomic uint64_t refused[GVSD_REFUSALS_N];
    _Atomic uint64_t ended[GVSD_ENDS_N];
    _Atomic uint64_t started; /* sessions published */
    /* The host's GPUs in NVML's order, written once by the child of
     * gvsd_stats_learn_gpus: ngpus last. */
    _Atomic uint32_t ngpus;
    uint8_t gpu_valid[GVSD_GPUS_MAX];
    uint8_t gpu[GVSD_GPUS_MAX][16];
    alignas(64) struct slot slots[];
};

/* The header describes the table to a reader such as a debugger; gvsd
 * itself keeps what it needs in its own memory, out of workers' reach. */
static struct table *table;
static size_t table_size;
static uint32_t nslots_mapped;
static int sessions_max;
static uint64_t started_ns;
static struct slot *_Atomic self;
/* In a worker: makes its threads' windows on its own slot one at a time
 * (a GPU may be named from any of them). */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int gvsd_stats_create(int nslots, int max_sessions)
{
    if (nslots <= 0)
        return GVS_E_INVAL;
    size_t size = sizeof(struct table) + (size_t)nslots * sizeof(struct slot);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return GVS_E_NOMEM;
    table = p; /* zeroed: every slot free */
    table_size = size;
    table->magic = STATS_MAGIC;
    table->version = GVSD_STATS_VERSION;
    table->nslots = (uint32_t)nslots;
    table->slot_size = sizeof(struct slot);
    table->start_ns = started_ns = now_ns();
    pthread_mutexattr_t a;
    int e = pthread_mutexattr_init(&a);
    if (e == 0) {
        e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        if (e == 0)
            e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        if (e == 0)
            e = pthread_mutex_init(&table->enter, &a);
        pthread_mutexattr_destroy(&a);
    }
    if (e != 0) {
        munmap(p, size);
        table = NULL;
        return GVS_E_NOMEM;
    }
    nslots_mapped = (uint32_t)nslots;
    sessions_max = max_sessions;
    return 0;
}

void gvsd_stats_destroy(void)
{
    if (table != NULL)
        munmap(table, table_size);
    table = NULL;
    nslots_mapped = 0;
    atomic_store(&self, NULL);
}

/* The writer's side of a slot's sequence count.  Writers of one slot
 * never overlap (see stats.h), so the count needs no read-modify-write. */
static uint32_t write_begin(struct slot *s)
{
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed) | 1u;
    atomic_store_explicit(&s->seq, seq, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return seq;
}

static void write_end(struct slot *s, uint32_t seq)
{
    atomic_store_explicit(&s->seq, seq + 1, memory_order_release);
}

static uint64_t load(_Atomic uint64_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static uint64_t calls_of(struct slot *s)
{
    uint64_t n = 0;
    for (int i = 0; i < GVS_MAX_PLUGINS; i++)
        n += load(&s->calls[i]);
    return n;
}

/* Everything but the sequence count and the lifetime counts goes back
 * to zero: free. */
static void clear(struct slot *s)
{
    uint32_t seq = write_begin(s);
    atomic_store_explicit(&s->state, GVSD_SLOT_FREE, memory_order_relaxed);
    atomic_store_explicit(&s->session, 0, memory_order_relaxed);
    atomic_store_explicit(&s->pid, 0, memory_order_relaxed);
    atomic_store_explicit(&s->start_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->memory_quota, 0, memory_order_relaxed);
    atomic_store_explicit(&s->named, 0, memory_order_relaxed);
    memset(s->identity, 0, sizeof(s->identity));
    memset(s->gpu, 0, sizeof(s->gpu));
    atomic_store_explicit(&s->memory_used, 0, memory_order_relaxed);
    for (int i = 0; i < GVS_SESSION_GPUS; i++)
        atomic_store_explicit(&s->gpu_memory[i], 0, memory_order_relaxed);
    write_end(s, seq);
}

int gvsd_stats_claim(uint32_t session)
{
    if (table == NULL)
        return -1;
    for (uint32_t i = 0; i < nslots_mapped; i++) {
        struct slot *s = &table->slots[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) !=
            GVSD_SLOT_FREE)
            continue;
        clear(s);
        uint32_t seq = write_begin(s);
        atomic_store_explicit(&s->session, session, memory_order_relaxed);
        atomic_store_explicit(&s->start_ns, now_ns(), memory_order_relaxed);
        atomic_store_explicit(&s->calls_base, calls_of(s),
                              memory_order_relaxed);
        atomic_store_explicit(&s->bytes_in_base, load(&s->bytes_in),
                              memory_order_relaxed);
        atomic_store_explicit(&s->bytes_out_base, load(&s->bytes_out),
                              memory_order_relaxed);
        atomic_store_explicit(&s->state, GVSD_SLOT_STARTING,
                              memory_order_relaxed);
        write_end(s, seq);
        return (int)i;
    }
    return -1;
}

enum gvsd_slot_state gvsd_stats_release(int slot, uint32_t session)
{
    if (table == NULL || slot < 0 || (uint32_t)slot >= nslots_mapped)
        return GVSD_SLOT_FREE;
    struct slot *s = &table->slots[slot];
    enum gvsd_slot_state st = (enum gvsd_slot_state)atomic_load_explicit(
        &s->state, memory_order_acquire);
    if (st == GVSD_SLOT_FREE ||
        atomic_load_explicit(&s->session, memory_order_relaxed) != session)
        return GVSD_SLOT_FREE;
    clear(s);
    return st;
}

void gvsd_stats_adopt(int slot)
{
    if (table == NULL || slot < 0 || (uint32_t)slot >= nslots_mapped)
        return;
    struct slot *s = &table->slots[slot];
    uint32_t seq = write_begin(s);
    atomic_store_explicit(&s->pid, (uint32_t)getpid(), memory_order_relaxed);
    write_end(s, seq);
    atomic_store(&self, s);
}

enum gvsd_slot_state gvsd_stats_state(int slot, uint32_t session)
{
    if (table == NULL || slot < 0 || (uint32_t)slot >= nslots_mapped)
        return GVSD_SLOT_FREE;
    const struct slot *s = &table->slots[slot];
    enum gvsd_slot_state st = (enum gvsd_slot_state)atomic_load_explicit(
        &s->state, memory_order_acquire);
    return atomic_load_explicit(&s->session, memory_order_relaxed) == session
               ? st
               : GVSD_SLOT_FREE;
}

/* Sessions (not handshakes) in the table; the caller holds enter. */
static int count_sessions(void)
{
    int n = 0;
    for (uint32_t i = 0; i < nslots_mapped; i++) {
        uint32_t st = atomic_load_explicit(&table->slots[i].state,
                                           memory_order_acquire);
        n += st == GVSD_SLOT_ACTIVE || st == GVSD_SLOT_STATUS;
    }
    return n;
}

/* A worker that holds the lock past this has hung: the others give up
 * rather than wait past their own handshake deadline. */
#define ENTER_WAIT_S 1

static int lock_enter(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ENTER_WAIT_S;
    int e = pthread_mutex_timedlock(&table->enter, &until);
    if (e == EOWNERDEAD)
        e = pthread_mutex_consistent(&table->enter);
    return e == 0 ? 0 : e == ETIMEDOUT ? GVS_E_TIMEOUT : GVS_E_IO;
}

int gvsd_stats_publish(const struct gvs_session_info *info, int max_sessions)
{
    struct slot *s = atomic_load(&self);
    if (s == NULL)
        return 0;
    int rc = lock_enter();
    if (rc < 0)
        return rc;
    if (max_sessions > 0 && count_sessions() >= max_sessions) {
        pthread_mutex_unlock(&table->enter);
        return GVS_E_RANGE;
    }
    pthread_mutex_lock(&self_lock);
    uint32_t seq = write_begin(s);
    snprintf(s->identity, sizeof(s->identity), "%s", info->identity);
    atomic_store_explicit(&s->memory_quota, info->memory_quota,
                          memory_order_relaxed);
    atomic_store_explicit(&s->state, GVSD_SLOT_ACTIVE, memory_order_release);
    write_end(s, seq);
    pthread_mutex_unlock(&self_lock);
    atomic_fetch_add_explicit(&table->started, 1, memory_order_relaxed);
    pthread_mutex_unlock(&table->enter);
    return 0;
}

void gvsd_stats_mark_status(void)
{
    struct slot *s = atomic_load(&self);
    if (s == NULL)
        return;
    pthread_mutex_lock(&self_lock);
    uint32_t seq = write_begin(s);
    atomic_store_explicit(&s->state, GVSD_SLOT_STATUS, memory_order_relaxed);
    write_end(s, seq);
    pthread_mutex_unlock(&self_lock);
}

void gvsd_stats_leave(void)
{
    struct slot *s = atomic_exchange(&self, NULL);
    if (s == NULL)
        return;
    pthread_mutex_lock(&self_lock);
    clear(s);
    pthread_mutex_unlock(&self_lock);
}

void gvsd_stats_add_in(uint64_t bytes)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s != NULL)
        atomic_fetch_add_explicit(&s->bytes_in, bytes, memory_order_relaxed);
}

void gvsd_stats_add_out(uint64_t bytes)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s != NULL)
        atomic_fetch_add_explicit(&s->bytes_out, bytes, memory_order_relaxed);
}

void gvsd_stats_add_call(int plugin)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s != NULL && plugin >= 0 && plugin < GVS_MAX_PLUGINS)
        atomic_fetch_add_explicit(&s->calls[plugin], 1,
                                  memory_order_relaxed);
}

void gvsd_stats_set_memory(uint64_t bytes)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s != NULL)
        atomic_store_explicit(&s->memory_used, bytes, memory_order_relaxed);
}

void gvsd_stats_set_gpu_memory(int device, uint64_t bytes)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s != NULL && device >= 0 && device < GVS_SESSION_GPUS)
        atomic_store_explicit(&s->gpu_memory[device], bytes,
                              memory_order_relaxed);
}

void gvsd_stats_set_gpu_uuid(int device, const struct gvsd_gpu_id *id)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s == NULL || device < 0 || device >= GVS_SESSION_GPUS)
        return;
    uint32_t bit = 1u << device;
    pthread_mutex_lock(&self_lock);
    if ((atomic_load_explicit(&s->named, memory_order_relaxed) & bit) == 0) {
        uint32_t seq = write_begin(s);
        memcpy(s->gpu[device], id->uuid, sizeof(id->uuid));
        atomic_fetch_or_explicit(&s->named, bit, memory_order_relaxed);
        write_end(s, seq);
    }
    pthread_mutex_unlock(&self_lock);
}

/* a - b, or 0 when a worker's writes made b the larger. */
static uint64_t since(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

/* 1 and *v filled when slot s is a shown session and was read whole. */
static int read_slot(struct slot *s, uint64_t now, struct gvsd_stats_view *v)
{
    char identity[GVS_IDENTITY_MAX];
    uint8_t gpu[GVS_SESSION_GPUS][16];
    uint64_t calls_base, in_base, out_base;
    uint32_t named;
    for (int t = 0; t < READ_TRIES; t++) {
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq & 1u)
            continue;
        uint32_t state =
            atomic_load_explicit(&s->state, memory_order_relaxed);
        v->session = atomic_load_explicit(&s->session, memory_order_relaxed);
        v->pid = atomic_load_explicit(&s->pid, memory_order_relaxed);
        uint64_t start =
            atomic_load_explicit(&s->start_ns, memory_order_relaxed);
        v->memory_quota =
            atomic_load_explicit(&s->memory_quota, memory_order_relaxed);
        calls_base = load(&s->calls_base);
        in_base = load(&s->bytes_in_base);
        out_base = load(&s->bytes_out_base);
        named = atomic_load_explicit(&s->named, memory_order_relaxed);
        memcpy(gpu, s->gpu, sizeof(gpu));
        memcpy(identity, s->identity, sizeof(identity));
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
            continue;
        if (state != GVSD_SLOT_ACTIVE)
            return 0;
        /* What a worker wrote may be anything, unterminated included:
         * shown escaped, cut (and marked) to fit. */
        gvs_escape(v->identity, sizeof(v->identity), identity,
                   strnlen(identity, sizeof(identity)));
        v->uptime_ns = now > start ? now - start : 0;
        v->memory_used = load(&s->memory_used);
        v->calls = since(calls_of(s), calls_base);
        v->bytes_in = since(load(&s->bytes_in), in_base);
        v->bytes_out = since(load(&s->bytes_out), out_base);
        v->ngpus = 0;
        for (int d = 0; d < GVS_SESSION_GPUS; d++) {
            if ((named & (1u << d)) == 0)
                continue;
            memcpy(v->gpu[v->ngpus].uuid, gpu[d], sizeof(gpu[d]));
            v->gpu_memory[v->ngpus++] = load(&s->gpu_memory[d]);
        }
        return 1;
    }
    return 0;
}

int gvsd_stats_snapshot(struct gvsd_stats_view *out, int max)
{
    if (table == NULL)
        return 0;
    uint64_t now = now_ns();
    int n = 0;
    for (uint32_t i = 0; i < nslots_mapped && n < max; i++)
        n += read_slot(&table->slots[i], now, &out[n]);
    return n;
}

int gvsd_stats_max_sessions(void)
{
    return table != NULL ? sessions_max : 0;
}

int gvsd_stats_slots(void)
{
    return table != NULL ? (int)nslots_mapped : 0;
}

uint64_t gvsd_stats_uptime_ns(void)
{
    return table != NULL ? now_ns() - started_ns : 0;
}

/* Each slot's counters only grow, so their sum does too, whichever
 * workers come and go while it is taken. */
void gvsd_stats_totals(struct gvsd_stats_totals *out)
{
    memset(out, 0, sizeof(*out));
    if (table == NULL)
        return;
    out->sessions_started = load(&table->started);
    for (uint32_t i = 0; i < nslots_mapped; i++) {
        struct slot *s = &table->slots[i];
        for (int p = 0; p < GVS_MAX_PLUGINS; p++)
            out->calls[p] += load(&s->calls[p]);
        out->bytes_in += load(&s->bytes_in);
        out->bytes_out += load(&s->bytes_out);
    }
}

/* NVML's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as its 16 bytes; -1
 * for any other form. */
static int parse_uuid(const char *text, uint8_t out[16])
{
    if (strncmp(text, "GPU-", 4) != 0)
        return -1;
    int digits = 0;
    for (const char *p = text + 4; *p != '\0'; p++) {
        int v = *p >= '0' && *p <= '9'   ? *p - '0'
                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                         : -1;
        if (v < 0 && *p != '-')
            return -1;
        if (v < 0)
            continue;
        if (digits == 32)
            return -1;
        out[digits / 2] = (uint8_t)(digits % 2 == 0 ? v << 4
                                                   : out[digits / 2] | v);
        digits++;
    }
    return digits == 32 ? 0 : -1;
}

void gvsd_stats_learn_gpus(void)
{
    if (table == NULL)
        return;
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0) {
        if (pid < 0)
            gvs_warn("cannot list the GPUs for the metrics: fork: %s",
                     strerror(errno));
        return;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct gvsd_gpu *g = gvs_calloc(GVSD_GPUS_MAX, sizeof(*g));
    char why[256] = "out of memory";
    int n = g != NULL ? gvsd_gpus_query(g, GVSD_GPUS_MAX, why, sizeof(why))
                      : GVS_E_NOMEM;
    if (n < 0)
        gvs_info("per-GPU metrics name GPUs by UUID alone: %s", why);
    for (int i = 0; i < n; i++)
        table->gpu_valid[i] = parse_uuid(g[i].uuid, table->gpu[i]) == 0;
    atomic_store_explicit(&table->ngpus, n > 0 ? (uint32_t)n : 0,
                          memory_order_release);
    _exit(0);
}

int gvsd_stats_gpus(struct gvsd_gpu_id *id, int *valid, int max)
{
    if (table == NULL)
        return 0;
    uint32_t n = atomic_load_explicit(&table->ngpus, memory_order_acquire);
    int got = 0;
    for (; got < max && (uint32_t)got < n && got < GVSD_GPUS_MAX; got++) {
        memcpy(id[got].uuid, table->gpu[got], sizeof(id[got].uuid));
        valid[got] = table->gpu_valid[got] != 0;
    }
    return got;
}

void gvsd_count_refusal(enum gvsd_refusal r)
{
    if (table != NULL && (unsigned)r < GVSD_REFUSALS_N)
        atomic_fetch_add_explicit(&table->refused[r], 1,
                                  memory_order_relaxed);
}

void gvsd_count_end(enum gvsd_end e)
{
    if (table != NULL && (unsigned)e < GVSD_ENDS_N)
        atomic_fetch_add_explicit(&table->ended[e], 1, memory_order_relaxed);
}

void gvsd_refusal_counts(unsigned long long *out)
{
    for (int i = 0; i < GVSD_REFUSALS_N; i++)
        out[i] = table != NULL ? atomic_load_explicit(&table->refused[i],
                                                      memory_order_relaxed)
                               : 0;
}

void gvsd_end_counts(unsigned long long *out)
{
    for (int i = 0; i < GVSD_ENDS_N; i++)
        out[i] = table != NULL ? atomic_load_explicit(&table->ended[i],
                                                      memory_order_relaxed)
                               : 0;
}
