/*
 * Page-locked host memory (gvs_remote.h): one table per process of what
 * the program allocated or registered through either API, so that each
 * answers for the other's (cudaHostGetFlags on cuMemHostAlloc memory,
 * pointer attributes of cudaMallocHost memory).  The client and the GPU
 * are in different processes: memory the API shares with its backend
 * (shm://) is reachable by the GPU; other such memory is ordinary client
 * memory, tracked so that the calls that ask about it answer as
 * natively, and copies from and to it are ordinary transfers
 * (docs/cudart.md, "Host memory").
 *
 * The flags are the driver's and the runtime's alike
 * (CU_MEMHOSTALLOC_* = cudaHostAlloc*, CU_MEMHOSTREGISTER_* =
 * cudaHostRegister*).
 */
#include "remote_fe.h"

#include <pthread.h>
#include <sys/mman.h>

#include "gvs/farmap.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

#define EXPORT __attribute__((visibility("default")))

#define ALLOC_PORTABLE 0x1u
#define ALLOC_MAPPED 0x2u
#define ALLOC_WRITECOMBINED 0x4u
#define REGISTER_PORTABLE 0x1u
#define REGISTER_MAPPED 0x2u
#define REGISTER_IOMEMORY 0x4u
#define REGISTER_READONLY 0x8u

/* Disjoint ranges by base; a leaf lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map ranges; /* base -> struct gvs_remote_host */

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The memory and the table are inherited as they are by a forked child;
 * its session is new: what the parent shared is plain memory to it. */
static void fork_child(void)
{
    for (size_t i = 0; i < ranges.n; i++) {
        struct gvs_remote_host *r = ranges.e[i].val;
        r->shared = 0;
        r->dev = 0;
    }
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void hostmem_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Caller holds lock.  The range containing p, its base in *base. */
static struct gvs_remote_host *containing(const void *p, uint64_t *base)
{
    struct gvs_remote_host *r =
        gvs_u64map_floor(&ranges, (uintptr_t)p, base);
    return r != NULL && (uintptr_t)p - *base < r->size ? r : NULL;
}

/* Caller holds lock.  Whether [p, p + size) meets a tracked range: only
 * the last range starting before its end can, the ranges being
 * disjoint. */
static int overlaps(uintptr_t p, size_t size)
{
    uint64_t base;
    struct gvs_remote_host *r =
        gvs_u64map_floor(&ranges, p + size - 1, &base);
    return r != NULL && base + r->size > p;
}

static enum gvs_remote_host_rc track(void *p,
                                     const struct gvs_remote_host *h)
{
    struct gvs_remote_host *r = gvs_malloc(sizeof(*r));
    if (r == NULL)
        return GVS_RHOST_NOMEM;
    *r = *h;
    enum gvs_remote_host_rc rc = GVS_RHOST_OK;
    pthread_mutex_lock(&lock);
    if (overlaps((uintptr_t)p, h->size))
        rc = GVS_RHOST_REGISTERED;
    else if (gvs_u64map_put(&ranges, (uintptr_t)p, r) < 0)
        rc = GVS_RHOST_NOMEM;
    pthread_mutex_unlock(&lock);
    if (rc != GVS_RHOST_OK)
        gvs_free(r);
    return rc;
}

/* Natively every page-locked allocation is also mapped (unified
 * addressing), and the flags say so. */
EXPORT enum gvs_remote_host_rc
gvs_remote_host_alloc(void **pp, size_t size, unsigned int flags,
                      const struct gvs_remote_shared *sh)
{
    if (pp == NULL ||
        (flags & ~(ALLOC_PORTABLE | ALLOC_MAPPED | ALLOC_WRITECOMBINED)))
        return GVS_RHOST_INVALID;
    *pp = NULL;
    if (size == 0)
        return GVS_RHOST_OK;
    struct gvs_remote_host h = {size, flags | ALLOC_MAPPED, 1, 0, 0};
    void *p = NULL;
    h.shared = sh != NULL && remote_fe_shared_possible(sh) &&
               remote_fe_shared_map(sh, size, &p, &h.dev) == sh->api->success;
    if (!h.shared) {
        p = gvs_mmap_far(size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return GVS_RHOST_NOMEM;
    }
    enum gvs_remote_host_rc rc = track(p, &h);
    if (rc != GVS_RHOST_OK) {
        if (h.shared)
            (void)remote_fe_shared_unmap(sh, p, size);
        else
            munmap(p, size);
        return rc;
    }
    *pp = p;
    return GVS_RHOST_OK;
}

EXPORT enum gvs_remote_host_rc
gvs_remote_host_free(void *p, const struct gvs_remote_shared *sh,
                     int32_t *unmapped)
{
    pthread_mutex_lock(&lock);
    struct gvs_remote_host *r = gvs_u64map_get(&ranges, (uintptr_t)p);
    if (r != NULL && r->allocated)
        gvs_u64map_remove(&ranges, (uintptr_t)p);
    else
        r = NULL;
    pthread_mutex_unlock(&lock);
    if (r == NULL)
        return GVS_RHOST_INVALID;
    /* No posted copy writes there once the memory is gone. */
    remote_fe_posted_forget(p, r->size);
    if (r->shared && sh != NULL)
        *unmapped = remote_fe_shared_unmap(sh, p, r->size);
    else
        munmap(p, r->size);
    gvs_free(r);
    return GVS_RHOST_OK;
}

/* I/O memory (a device's BAR) cannot be registered from another
 * machine.  A registration reads as natively: mapped, and portable if
 * asked for. */
EXPORT enum gvs_remote_host_rc gvs_remote_host_register(void *p, size_t size,
                                                        unsigned int flags)
{
    if (p == NULL || size == 0 ||
        (flags & ~(REGISTER_PORTABLE | REGISTER_MAPPED | REGISTER_IOMEMORY |
                   REGISTER_READONLY)) ||
        (flags & REGISTER_IOMEMORY) || (uintptr_t)p + size < (uintptr_t)p)
        return GVS_RHOST_INVALID;
    struct gvs_remote_host h = {
        size, (flags & REGISTER_PORTABLE) | REGISTER_MAPPED, 0, 0, 0};
    return track(p, &h);
}

EXPORT enum gvs_remote_host_rc gvs_remote_host_unregister(void *p)
{
    uint64_t base;
    enum gvs_remote_host_rc rc = GVS_RHOST_OK;
    pthread_mutex_lock(&lock);
    struct gvs_remote_host *r = containing(p, &base);
    if (r == NULL)
        rc = GVS_RHOST_NOT_REGISTERED;
    else if (base != (uintptr_t)p || r->allocated)
        rc = GVS_RHOST_INVALID;
    else
        gvs_u64map_remove(&ranges, base);
    pthread_mutex_unlock(&lock);
    if (rc == GVS_RHOST_OK) {
        remote_fe_posted_forget(p, r->size);
        gvs_free(r);
    }
    return rc;
}

EXPORT int gvs_remote_host_find(const void *p, uint64_t *base,
                                struct gvs_remote_host *out)
{
    uint64_t b;
    pthread_mutex_lock(&lock);
    struct gvs_remote_host *r = containing(p, &b);
    if (r != NULL) {
        *out = *r;
        *base = b;
    }
    pthread_mutex_unlock(&lock);
    return r != NULL;
}

EXPORT int gvs_remote_host_shared(const void *p, size_t len)
{
    struct gvs_remote_host h;
    uint64_t base;
    return gvs_remote_host_find(p, &base, &h) && h.shared &&
           len <= h.size - ((uintptr_t)p - base);
}
