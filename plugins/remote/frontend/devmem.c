/* Device memory each API frontend knows (gvs_remote.h): a lookup per
 * frontend, asked by the others, so that an address made through one API
 * is device memory to the other's unified copies and pointer queries, as
 * natively, with no table kept twice. */
#include <stdatomic.h>

#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

/* By the frontends' plugin ids (cudart 1, cuda 2). */
#define LOOKUPS 8

static _Atomic(gvs_remote_devmem_fn) lookups[LOOKUPS];

EXPORT void gvs_remote_device_memory_lookup(uint16_t api,
                                            gvs_remote_devmem_fn known)
{
    if (api < LOOKUPS)
        atomic_store(&lookups[api], known);
}

EXPORT int gvs_remote_device_memory(uint16_t api, uint64_t p)
{
    for (uint16_t i = 0; i < LOOKUPS; i++) {
        gvs_remote_devmem_fn known = atomic_load(&lookups[i]);
        if (i != api && known != NULL && known(p))
            return 1;
    }
    return 0;
}
