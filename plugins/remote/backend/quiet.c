/* Launches whose output is all sent (quiet.h). */
#include "quiet.h"

#include <stdatomic.h>

#include "state.h"

/* key of every launch so far: 0 before the first, MIXED once two
 * contexts launched. */
#define MIXED UINTPTR_MAX

static _Atomic uint64_t launched, settled;
static _Atomic uintptr_t launch_key;
/* A non-blocking stream was made: legacy waits settle nothing more. */
static atomic_int unordered;

void remote_be_device_code(uintptr_t key)
{
    uintptr_t k = 0;
    if (!atomic_compare_exchange_strong(&launch_key, &k, key) && k != key)
        atomic_store(&launch_key, MIXED);
    /* After the key: a synchronization that reads this count sees the
     * key it belongs to. */
    atomic_fetch_add(&launched, 1);
}

uint64_t remote_be_settle_begin(void)
{
    return atomic_load(&launched);
}

/* The launches up to begin are quiet, if all were key's. */
static void settle(uintptr_t key, uint64_t begin)
{
    uintptr_t k = atomic_load(&launch_key);
    if (k != 0 && k != key)
        return;
    uint64_t s = atomic_load(&settled);
    while (s < begin && !atomic_compare_exchange_weak(&settled, &s, begin))
        ;
}

void remote_be_settled(struct gvs_call *call, uintptr_t key, uint64_t begin,
                       int32_t success)
{
    int32_t result;
    if (remote_be_reply_result(call, &result) && result == success)
        settle(key, begin);
}

void remote_be_settled_legacy(uintptr_t key, uint64_t begin)
{
    if (!atomic_load(&unordered))
        settle(key, begin);
}

void remote_be_stream_unordered(void)
{
    atomic_store(&unordered, 1);
}

int remote_be_quiet(void)
{
    return atomic_load(&settled) == atomic_load(&launched);
}
