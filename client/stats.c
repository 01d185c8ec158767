#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Relaxed atomics: the exit-time report must not take the client lock,
 * which a thread may still hold. */
static _Atomic uint64_t round_trips, posts, bytes_sent, bytes_received,
    writes, own_reads;

void client_stats_sent(uint64_t bytes, int post)
{
    atomic_fetch_add_explicit(&bytes_sent, bytes, memory_order_relaxed);
    if (post)
        atomic_fetch_add_explicit(&posts, 1, memory_order_relaxed);
}

void client_stats_reply(uint64_t bytes)
{
    atomic_fetch_add_explicit(&bytes_received, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&round_trips, 1, memory_order_relaxed);
}

void client_stats_write(void)
{
    atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed);
}

void client_stats_own_read(void)
{
    atomic_fetch_add_explicit(&own_reads, 1, memory_order_relaxed);
}

void client_stats_reset(void)
{
    atomic_store(&round_trips, 0);
    atomic_store(&posts, 0);
    atomic_store(&bytes_sent, 0);
    atomic_store(&bytes_received, 0);
    atomic_store(&writes, 0);
    atomic_store(&own_reads, 0);
}

void gvs_client_get_stats(struct gvs_client_stats *out)
{
    out->round_trips = atomic_load(&round_trips);
    out->posts = atomic_load(&posts);
    out->bytes_sent = atomic_load(&bytes_sent);
    out->bytes_received = atomic_load(&bytes_received);
}

uint64_t gvs_client_writes(void)
{
    return atomic_load(&writes);
}

uint64_t gvs_client_own_reads(void)
{
    return atomic_load(&own_reads);
}

/* A destructor rather than atexit: it also runs when the library is
 * unloaded, and needs no registration before the first call.  Its
 * priority puts it after the other destructors of the library, so that
 * it counts the exit-time write of buffered posts. */
__attribute__((destructor(101))) static void stats_report(void)
{
    const char *env = getenv("GVS_STATS");
    if (env == NULL || strcmp(env, "1") != 0)
        return;
    struct gvs_client_stats s;
    gvs_client_get_stats(&s);
    fprintf(stderr,
            "gvs-stats: round_trips=%" PRIu64 " posts=%" PRIu64
            " bytes_sent=%" PRIu64 " bytes_received=%" PRIu64
            " writes=%" PRIu64 " own_reads=%" PRIu64 "\n",
            s.round_trips, s.posts, s.bytes_sent, s.bytes_received,
            gvs_client_writes(), gvs_client_own_reads());
}
