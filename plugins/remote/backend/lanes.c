/* The session's lanes (remote_be.h): an open-addressed table on the
 * lane id, at most half full. */
#include <pthread.h>
#include <stdatomic.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "state.h"

/* Bound on what one client may make the worker hold. */
#define LANES_MAX 65536u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_remote_lane **table;
static uint32_t count, cap;

static uint32_t slot_of(uint32_t id, uint32_t n)
{
    return (id * 2654435761u) & (n - 1);
}

/* Caller holds lock.  Doubles the table; 0 or GVS_E_NOMEM. */
static int grow(void)
{
    uint32_t n = cap ? cap * 2 : 16;
    struct gvs_remote_lane **t = gvs_calloc(n, sizeof(*t));
    if (t == NULL)
        return GVS_E_NOMEM;
    for (uint32_t i = 0; i < cap; i++) {
        struct gvs_remote_lane *l = table[i];
        if (l == NULL)
            continue;
        uint32_t j = slot_of(l->id, n);
        while (t[j] != NULL)
            j = (j + 1) & (n - 1);
        t[j] = l;
    }
    gvs_free(table);
    table = t;
    cap = n;
    return 0;
}

/* Caller holds lock. */
static struct gvs_remote_lane *lookup(uint32_t id)
{
    if (cap == 0)
        return NULL;
    for (uint32_t j = slot_of(id, cap);; j = (j + 1) & (cap - 1))
        if (table[j] == NULL || table[j]->id == id)
            return table[j];
}

/* Caller holds lock. */
static struct gvs_remote_lane *add(uint32_t id)
{
    if (count >= LANES_MAX)
        return NULL;
    if ((count + 1) * 2 > cap && grow() < 0)
        return NULL;
    struct gvs_remote_lane *l = gvs_calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->id = id;
    uint32_t j = slot_of(id, cap);
    while (table[j] != NULL)
        j = (j + 1) & (cap - 1);
    table[j] = l;
    count++;
    return l;
}

/* The lane a thread found last, while `generation` stays what it was
 * then: a handler asks for its call's lane several times (a copy five),
 * and a lane thread serves one lane for many calls, so most asks take
 * neither the lock, which every thread of the worker shares, nor the
 * table.  Lanes live until remote_be_lanes_free, which moves the
 * generation. */
static _Atomic uint32_t generation;
static _Thread_local struct {
    uint32_t id, generation;
    struct gvs_remote_lane *lane;
} last;

struct gvs_remote_lane *remote_be_lane(struct gvs_call *call)
{
    uint32_t g = atomic_load_explicit(&generation, memory_order_acquire);
    if (last.lane != NULL && last.id == call->lane && last.generation == g)
        return last.lane;
    pthread_mutex_lock(&lock);
    struct gvs_remote_lane *l = lookup(call->lane);
    if (l == NULL)
        l = add(call->lane);
    pthread_mutex_unlock(&lock);
    if (l != NULL) {
        last.id = call->lane;
        last.generation = g;
        last.lane = l;
    }
    return l;
}

void remote_be_lanes_each(void (*fn)(struct gvs_remote_lane *l, void *arg),
                          void *arg)
{
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < cap; i++)
        if (table[i] != NULL)
            fn(table[i], arg);
    pthread_mutex_unlock(&lock);
}

void remote_be_lanes_free(void)
{
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < cap; i++) {
        if (table[i] != NULL) {
            gvs_free(table[i]->stage);
            gvs_free(table[i]->ptds);
        }
        gvs_free(table[i]);
    }
    gvs_free(table);
    table = NULL;
    count = cap = 0;
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    pthread_mutex_unlock(&lock);
}

/* The plugin whose handler last entered on this thread. */
static _Thread_local uint16_t last_entered;

int remote_be_context_moved(uint16_t plugin)
{
    int moved = last_entered != 0 && last_entered != plugin;
    last_entered = plugin;
    return moved;
}

/* The mode is the thread's, whichever plugin's handler put it there. */
static _Thread_local int thread_mode;

int *remote_be_thread_capture_mode(void)
{
    return &thread_mode;
}

int remote_be_set_capture_mode(struct gvs_call *call, int32_t mode)
{
    /* Global, thread local, relaxed. */
    if (mode < 0 || mode > 2)
        return GVS_E_PROTO;
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (l == NULL)
        return GVS_E_NOMEM;
    l->capture_mode = mode;
    return 0;
}
