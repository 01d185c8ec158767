/* The state of each device's primary context (gvs_remote.h), kept once
 * the backend said it is active: NVIDIA's runtime asks for it
 * (cuDevicePrimaryCtxGetState) before nearly every call, 59,423 times in
 * 64 tokens of a GPT-2 decode.  An active primary context stays active
 * with the same flags until it is released, reset or given new flags,
 * and only this process does any of those, through either API: each
 * frontend calls gvs_remote_primary_changed before it sends one.  An
 * inactive state is never kept, since the backend may retain a primary
 * context of its own accord (to load a library with no context
 * current). */
#include <pthread.h>
#include <stdint.h>

#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

#define PRIMARY_DEVICES 64

struct primary {
    uint64_t epoch; /* the epoch it was answered in; 0: none kept */
    unsigned flags;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Moves on at each change, so that an answer asked for before a change
 * and arriving after it is not kept. */
static uint64_t epoch = 1;
static struct primary kept[PRIMARY_DEVICES];

EXPORT uint64_t gvs_remote_primary_epoch(void)
{
    pthread_mutex_lock(&lock);
    uint64_t e = epoch;
    pthread_mutex_unlock(&lock);
    return e;
}

EXPORT int gvs_remote_primary_state(int device, unsigned *flags)
{
    int hit = 0;
    if (device < 0 || device >= PRIMARY_DEVICES)
        return 0;
    pthread_mutex_lock(&lock);
    if (kept[device].epoch == epoch) {
        *flags = kept[device].flags;
        hit = 1;
    }
    pthread_mutex_unlock(&lock);
    return hit;
}

EXPORT void gvs_remote_primary_keep(int device, unsigned flags, int active,
                                    uint64_t asked)
{
    if (device < 0 || device >= PRIMARY_DEVICES || !active)
        return;
    pthread_mutex_lock(&lock);
    if (asked == epoch)
        kept[device] = (struct primary){asked, flags};
    pthread_mutex_unlock(&lock);
}

EXPORT void gvs_remote_primary_changed(void)
{
    pthread_mutex_lock(&lock);
    epoch++;
    pthread_mutex_unlock(&lock);
}
