/*
 * The streams and events this process created and has not destroyed,
 * each with its device, and whether a stream capture may be under way:
 * what lets cudaEventRecord, cudaStreamWaitEvent and cudaMemsetAsync be
 * posted without a round trip when they cannot fail (docs/cudart.md,
 * "Posted calls"; a memset's range must lie in one allocation of the
 * stream's device, memory.c).
 * Whatever the tables do not know (an id made up or destroyed, an event
 * opened from another process, flags, a capture) takes the round trip,
 * so its error comes back at once, as natively.
 */
#include "streams.h"

#include <pthread.h>
#include <stdatomic.h>

#include "cudart_fe_gen.h"
#include "gvs/u64map.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map tables[FE_KNOWN_KINDS];
/* Captures begun and not known to have ended: over-counting only costs
 * round trips. */
static _Atomic int captures;

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child's session has none of the parent's streams and events. */
static void fork_child(void)
{
    for (int k = 0; k < FE_KNOWN_KINDS; k++)
        gvs_u64map_clear(&tables[k]);
    atomic_store(&captures, 0);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void known_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Devices are kept plus one: a map's values are never NULL. */
void fe_known_add(enum fe_known_kind k, uint64_t id, int device)
{
    pthread_mutex_lock(&lock);
    /* Out of memory it stays unknown, which only costs round trips. */
    (void)gvs_u64map_put(&tables[k], id, (void *)(uintptr_t)(device + 1));
    pthread_mutex_unlock(&lock);
}

void fe_known_remove(enum fe_known_kind k, uint64_t id)
{
    pthread_mutex_lock(&lock);
    gvs_u64map_remove(&tables[k], id);
    pthread_mutex_unlock(&lock);
}

int fe_known_device(enum fe_known_kind k, uint64_t id)
{
    pthread_mutex_lock(&lock);
    uintptr_t v = (uintptr_t)gvs_u64map_get(&tables[k], id);
    pthread_mutex_unlock(&lock);
    return (int)v - 1;
}

/* Entries of other devices stay: their ids were never the device's. */
void fe_known_forget_device(int device)
{
    pthread_mutex_lock(&lock);
    for (int k = 0; k < FE_KNOWN_KINDS; k++) {
        struct gvs_u64map *m = &tables[k];
        size_t i = 0;
        while (i < m->n) {
            if ((uintptr_t)m->e[i].val == (uintptr_t)(device + 1))
                gvs_u64map_remove(m, m->e[i].key);
            else
                i++;
        }
    }
    pthread_mutex_unlock(&lock);
}

void fe_known_capture_begins(void)
{
    atomic_fetch_add(&captures, 1);
}

void fe_known_capture_ends(void)
{
    atomic_fetch_sub(&captures, 1);
}

/* The device whose stream `wire` is: a default stream is the calling
 * thread's device's; -1 when the stream is unknown. */
static int stream_device(uint64_t wire)
{
    if (wire <= (uint64_t)(uintptr_t)cudaStreamPerThread)
        return fe_thread_device();
    return fe_known_device(FE_KNOWN_STREAM, wire);
}

int fe_may_post_record(cudaEvent_t event, cudaStream_t stream,
                       unsigned int flags, int per_thread)
{
    if (flags != 0 || atomic_load(&captures) != 0)
        return 0;
    int dev = fe_known_device(FE_KNOWN_EVENT, fe_event_wire(event));
    return dev >= 0 && dev == stream_device(fe_stream_wire(stream, per_thread));
}

int fe_may_post_memset(unsigned long long stream, void *devPtr, int value,
                       size_t count, int per_thread)
{
    (void)value;
    (void)per_thread;
    if (count == 0 || atomic_load(&captures) != 0)
        return 0;
    int dev = fe_mem_range_device(devPtr, count);
    return dev >= 0 && dev == stream_device(stream);
}

int fe_may_post_wait(cudaStream_t stream, cudaEvent_t event,
                     unsigned int flags, int per_thread)
{
    return flags == 0 && atomic_load(&captures) == 0 &&
           fe_known_device(FE_KNOWN_EVENT, fe_event_wire(event)) >= 0 &&
           stream_device(fe_stream_wire(stream, per_thread)) >= 0;
}
