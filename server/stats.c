#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/escape.h"
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
 * counters are written by the worker's threads at any time.  bytes_in
 * has a cache line to itself: the session's reader thread adds to it,
 * while the executor and lane threads add to the others. */
struct slot {
    _Atomic uint32_t seq;
    _Atomic uint32_t state; /* enum gvsd_slot_state */
    _Atomic uint32_t session;
    _Atomic uint32_t pid;
    _Atomic uint64_t start_ns; /* CLOCK_MONOTONIC, shared by all processes */
    _Atomic uint64_t memory_quota;
    char identity[GVS_IDENTITY_MAX];
    alignas(64) _Atomic uint64_t bytes_in;
    alignas(64) _Atomic uint64_t bytes_out;
    _Atomic uint64_t calls;
    _Atomic uint64_t memory_used;
};
_Static_assert(sizeof(struct slot) == 320, "the slot layout is versioned");

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

/* Everything but the sequence count goes back to zero: free. */
static void clear(struct slot *s)
{
    uint32_t seq = write_begin(s);
    atomic_store_explicit(&s->state, GVSD_SLOT_FREE, memory_order_relaxed);
    atomic_store_explicit(&s->session, 0, memory_order_relaxed);
    atomic_store_explicit(&s->pid, 0, memory_order_relaxed);
    atomic_store_explicit(&s->start_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->memory_quota, 0, memory_order_relaxed);
    memset(s->identity, 0, sizeof(s->identity));
    atomic_store_explicit(&s->bytes_in, 0, memory_order_relaxed);
    atomic_store_explicit(&s->bytes_out, 0, memory_order_relaxed);
    atomic_store_explicit(&s->calls, 0, memory_order_relaxed);
    atomic_store_explicit(&s->memory_used, 0, memory_order_relaxed);
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

enum gvsd_slot_state gvsd_stats_state(int slot)
{
    if (table == NULL || slot < 0 || (uint32_t)slot >= nslots_mapped)
        return GVSD_SLOT_FREE;
    return (enum gvsd_slot_state)atomic_load_explicit(
        &table->slots[slot].state, memory_order_acquire);
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
    uint32_t seq = write_begin(s);
    snprintf(s->identity, sizeof(s->identity), "%s", info->identity);
    atomic_store_explicit(&s->memory_quota, info->memory_quota,
                          memory_order_relaxed);
    atomic_store_explicit(&s->state, GVSD_SLOT_ACTIVE, memory_order_release);
    write_end(s, seq);
    pthread_mutex_unlock(&table->enter);
    return 0;
}

void gvsd_stats_mark_status(void)
{
    struct slot *s = atomic_load(&self);
    if (s == NULL)
        return;
    uint32_t seq = write_begin(s);
    atomic_store_explicit(&s->state, GVSD_SLOT_STATUS, memory_order_relaxed);
    write_end(s, seq);
}

void gvsd_stats_leave(void)
{
    struct slot *s = atomic_exchange(&self, NULL);
    if (s != NULL)
        clear(s);
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

void gvsd_stats_add_call(void)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s != NULL)
        atomic_fetch_add_explicit(&s->calls, 1, memory_order_relaxed);
}

void gvsd_stats_set_memory(uint64_t bytes)
{
    struct slot *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s != NULL)
        atomic_store_explicit(&s->memory_used, bytes, memory_order_relaxed);
}

/* 1 and *v filled when slot s is a shown session and was read whole. */
static int read_slot(struct slot *s, uint64_t now, struct gvsd_stats_view *v)
{
    char identity[GVS_IDENTITY_MAX];
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
        v->memory_used =
            atomic_load_explicit(&s->memory_used, memory_order_relaxed);
        v->calls = atomic_load_explicit(&s->calls, memory_order_relaxed);
        v->bytes_in =
            atomic_load_explicit(&s->bytes_in, memory_order_relaxed);
        v->bytes_out =
            atomic_load_explicit(&s->bytes_out, memory_order_relaxed);
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
