/* How many times this process changed a kernel's settings (gvs_remote.h):
 * the frontends keep the function attributes a program may set, each
 * with the count it was answered at, and ask again once it moved. */
#include <stdatomic.h>
#include <stdint.h>

#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

static _Atomic uint64_t settings;

EXPORT uint64_t gvs_remote_kernel_settings(void)
{
    return atomic_load(&settings);
}

EXPORT void gvs_remote_kernel_settings_change(void)
{
    atomic_fetch_add(&settings, 1);
}
