#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gvs/spin.h"
#include "internal.h"

/* Relaxed atomics: the exit-time report must not take the client lock,
 * which a thread may still hold. */
static _Atomic uint64_t round_trips, posts, bytes_sent, bytes_received,
    writes, own_reads;

/* Requests by operation, kept only under GVS_STATS=ops: an
 * open-addressed table keyed by plugin << 16 | op, plus one, so that 0
 * marks a free slot; a key claims its slot once, by compare-and-swap,
 * and is never moved.  Operations past the table's size go uncounted
 * (op_lost says how many requests).  Beside the counts, the time spent
 * sending them (op_send_ns: the frame's way into the connection, a
 * post's only cost here) and waiting for their replies (op_wait_ns: from
 * the send to the reply's arrival, whoever read it). */
enum { OP_SLOTS = 1024 };
static _Atomic int by_op;
static _Atomic uint32_t op_key[OP_SLOTS], op_calls[OP_SLOTS],
    op_posts[OP_SLOTS];
static _Atomic uint64_t op_send_ns[OP_SLOTS], op_wait_ns[OP_SLOTS];
static _Atomic uint64_t op_lost;

static const char *stats_mode(void)
{
    const char *env = getenv("GVS_STATS");
    return env != NULL ? env : "";
}

static void stats_read_mode(void)
{
    atomic_store(&by_op, strcmp(stats_mode(), "ops") == 0);
}

/* Decided before the first call; a forked child decides again. */
__attribute__((constructor)) static void stats_init(void)
{
    stats_read_mode();
}

static int op_slot(uint32_t key)
{
    for (unsigned i = 0, h = (key * 2654435761u) % OP_SLOTS; i < OP_SLOTS;
         i++, h = (h + 1) % OP_SLOTS) {
        uint32_t seen = 0;
        if (atomic_compare_exchange_strong(&op_key[h], &seen, key) ||
            seen == key)
            return (int)h;
    }
    return -1;
}

void client_stats_sent(uint64_t bytes, int post)
{
    atomic_fetch_add_explicit(&bytes_sent, bytes, memory_order_relaxed);
    if (post)
        atomic_fetch_add_explicit(&posts, 1, memory_order_relaxed);
}

int client_stats_slot(uint16_t plugin, uint16_t op)
{
    if (!atomic_load_explicit(&by_op, memory_order_relaxed))
        return -1;
    int i = op_slot(((uint32_t)plugin << 16 | op) + 1);
    if (i < 0)
        atomic_fetch_add_explicit(&op_lost, 1, memory_order_relaxed);
    return i;
}

void client_stats_op(int slot, int post, long long send_ns)
{
    if (slot < 0)
        return;
    atomic_fetch_add_explicit(post ? &op_posts[slot] : &op_calls[slot], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&op_send_ns[slot], (uint64_t)send_ns,
                              memory_order_relaxed);
}

void client_stats_reply(uint64_t bytes, int stat_slot, long long sent_ns)
{
    atomic_fetch_add_explicit(&bytes_received, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&round_trips, 1, memory_order_relaxed);
    if (stat_slot >= 0)
        atomic_fetch_add_explicit(&op_wait_ns[stat_slot],
                                  (uint64_t)(gvs_now_ns() - sent_ns),
                                  memory_order_relaxed);
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
    atomic_store(&op_lost, 0);
    for (unsigned i = 0; i < OP_SLOTS; i++) {
        atomic_store(&op_key[i], 0);
        atomic_store(&op_calls[i], 0);
        atomic_store(&op_posts[i], 0);
        atomic_store(&op_send_ns[i], 0);
        atomic_store(&op_wait_ns[i], 0);
    }
    stats_read_mode();
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
    const char *mode = stats_mode();
    if (strcmp(mode, "1") != 0 && strcmp(mode, "ops") != 0)
        return;
    struct gvs_client_stats s;
    gvs_client_get_stats(&s);
    fprintf(stderr,
            "gvs-stats: round_trips=%" PRIu64 " posts=%" PRIu64
            " bytes_sent=%" PRIu64 " bytes_received=%" PRIu64
            " writes=%" PRIu64 " own_reads=%" PRIu64 "\n",
            s.round_trips, s.posts, s.bytes_sent, s.bytes_received,
            gvs_client_writes(), gvs_client_own_reads());
    if (!atomic_load(&by_op))
        return;
    for (unsigned i = 0; i < OP_SLOTS; i++) {
        uint32_t key = atomic_load(&op_key[i]);
        if (key != 0)
            fprintf(stderr,
                    "gvs-stats: plugin=%" PRIu32 " op=%" PRIu32
                    " calls=%" PRIu32 " posts=%" PRIu32 " send_us=%" PRIu64
                    " wait_us=%" PRIu64 "\n",
                    (key - 1) >> 16, (key - 1) & 0xffff,
                    atomic_load(&op_calls[i]), atomic_load(&op_posts[i]),
                    atomic_load(&op_send_ns[i]) / 1000,
                    atomic_load(&op_wait_ns[i]) / 1000);
    }
    if (atomic_load(&op_lost) != 0)
        fprintf(stderr, "gvs-stats: op_lost=%" PRIu64 "\n",
                atomic_load(&op_lost));
}
