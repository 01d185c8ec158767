/* The launch configurations a kernel's launch may be posted in
 * (gvs_remote.h), for every API frontend. */
#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

/* Limits every device of compute capability 3.0 and later has: a
 * configuration outside them is left for the backend to refuse. */
#define BLOCK_XY_MAX 1024u
#define BLOCK_Z_MAX 64u
#define BLOCK_THREADS_MAX 1024u
#define GRID_X_MAX 0x7fffffffu
#define GRID_YZ_MAX 65535u

EXPORT uint64_t gvs_remote_launch_config(int dev, const uint32_t grid[3],
                                         const uint32_t block[3],
                                         uint64_t shmem)
{
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (dev < 0 || dev > 255 || block[0] == 0 || block[1] == 0 ||
        block[2] == 0 || block[0] > BLOCK_XY_MAX || block[1] > BLOCK_XY_MAX ||
        block[2] > BLOCK_Z_MAX || threads > BLOCK_THREADS_MAX ||
        grid[0] == 0 || grid[1] == 0 || grid[2] == 0 ||
        grid[0] > GRID_X_MAX || grid[1] > GRID_YZ_MAX ||
        grid[2] > GRID_YZ_MAX || shmem > UINT32_MAX)
        return 0;
    return 1ull << 63 | (uint64_t)dev << 43 | threads << 32 | shmem;
}

/* Same device, no more threads per block (a kernel's register and
 * thread limits only shrink what fits) and no more dynamic shared
 * memory. */
EXPORT int gvs_remote_launch_within(uint64_t want, uint64_t ok)
{
    const uint64_t dev = 0xffull << 43, threads = 0x7ffull << 32;
    return want != 0 && ok != 0 && (want & dev) == (ok & dev) &&
           (want & threads) <= (ok & threads) &&
           (want & 0xffffffffull) <= (ok & 0xffffffffull);
}
