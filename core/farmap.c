#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gvs/farmap.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* 2 MiB steps and a free step between mappings, so that a mapping that
 * one day grows or a huge page does not run into the next. */
#define STEP ((uintptr_t)2 << 20)
#define TRIES 8

/* The next address to try; each process continues from its parent's. */
static _Atomic uintptr_t next_at;

void *gvs_mmap_far(size_t len, int prot, int flags, int fd, off_t off)
{
    if (sizeof(uintptr_t) >= 8 && len > 0 && len <= ((uintptr_t)1 << 44)) {
        uintptr_t span = (len + STEP - 1) / STEP * STEP + STEP;
        for (int i = 0; i < TRIES; i++) {
            uintptr_t want = 0;
            atomic_compare_exchange_strong(&next_at, &want,
                                           (uintptr_t)GVS_FARMAP_BASE);
            want = atomic_fetch_add(&next_at, span);
            void *p = mmap((void *)want, len, prot, flags | MAP_FIXED_NOREPLACE,
                           fd, off);
            if (p != MAP_FAILED)
                return p; /* where asked, or where an older kernel put it */
            if (errno != EEXIST)
                break; /* past the address space, say */
        }
    }
    return mmap(NULL, len, prot, flags, fd, off);
}
