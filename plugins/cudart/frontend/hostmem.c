/*
 * Page-locked host memory (cudaMallocHost, cudaHostAlloc,
 * cudaHostRegister).  The client and the GPU are in different processes,
 * possibly on different machines.  When the connection can share memory
 * (shm://), allocations are shared with the backend, which pins them:
 * copies from and to them are one DMA there, and the GPU can reach them
 * (shared.h).  Otherwise, and for registered memory, such memory is
 * ordinary client memory that the frontend tracks, so that the calls
 * that ask about it answer as natively, and copies from and to it are
 * ordinary transfers; the GPU cannot reach it: cudaHostGetDevicePointer
 * answers cudaErrorNotSupported (docs/cudart.md, "Host memory").
 */
#include "shared.h"

#include <pthread.h>
#include <sys/mman.h>

#include "gvs/mem.h"
#include "gvs/u64map.h"

#define HOST_ALLOC_FLAGS                                                     \
    (cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined)
#define HOST_REGISTER_FLAGS                                                  \
    (cudaHostRegisterPortable | cudaHostRegisterMapped |                     \
     cudaHostRegisterIoMemory | cudaHostRegisterReadOnly)

struct range {
    size_t size;
    unsigned flags; /* as cudaHostGetFlags reports them */
    int allocated;  /* by cudaHostAlloc, else registered */
    int shared;     /* with this session's backend (fe_shared_map) */
    uint64_t dev;   /* the backend's device address of it, or 0 */
};

/* Disjoint ranges by base; a leaf lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map ranges;

/* The memory and the table are inherited as they are by a forked child. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child's session is new: what the parent shared is plain memory to
 * it. */
static void fork_child(void)
{
    for (size_t i = 0; i < ranges.n; i++) {
        struct range *r = ranges.e[i].val;
        r->shared = 0;
        r->dev = 0;
    }
    fe_staging_fork_child();
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void hostmem_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Caller holds lock.  The range containing p, its base in *base. */
static struct range *containing(const void *p, uint64_t *base)
{
    struct range *r = gvs_u64map_floor(&ranges, (uintptr_t)p, base);
    return r != NULL && (uintptr_t)p - *base < r->size ? r : NULL;
}

/* Caller holds lock.  Whether [p, p + size) meets a tracked range: only
 * the last range starting before its end can, the ranges being disjoint. */
static int overlaps(uintptr_t p, size_t size)
{
    uint64_t base;
    struct range *r = gvs_u64map_floor(&ranges, p + size - 1, &base);
    return r != NULL && base + r->size > p;
}

static cudaError_t track(void *p, size_t size, unsigned flags, int allocated,
                         int shared, uint64_t dev)
{
    struct range *r = gvs_malloc(sizeof(*r));
    if (r == NULL)
        return cudaErrorMemoryAllocation;
    *r = (struct range){size, flags, allocated, shared, dev};
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&lock);
    if (overlaps((uintptr_t)p, size))
        e = cudaErrorHostMemoryAlreadyRegistered;
    else if (gvs_u64map_put(&ranges, (uintptr_t)p, r) < 0)
        e = cudaErrorMemoryAllocation;
    pthread_mutex_unlock(&lock);
    if (e != cudaSuccess)
        gvs_free(r);
    return e;
}

/* Every entry point starts the runtime, as natively: without a backend
 * they fail with its code. */
static cudaError_t runtime(void)
{
    struct gvs_client *cl;
    return fe_client(&cl);
}

/* Natively every page-locked allocation is also mapped (unified
 * addressing), and cudaHostGetFlags says so. */
static cudaError_t host_alloc(void **pHost, size_t size, unsigned int flags)
{
    if (pHost == NULL || (flags & ~HOST_ALLOC_FLAGS) != 0)
        return cudaErrorInvalidValue;
    cudaError_t e = runtime();
    if (e != cudaSuccess)
        return e;
    *pHost = NULL;
    if (size == 0)
        return cudaSuccess;
    void *p;
    uint64_t dev = 0;
    int shared = fe_shared_possible() &&
                 fe_shared_map(size, &p, &dev) == cudaSuccess;
    if (!shared) {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return cudaErrorMemoryAllocation;
    }
    e = track(p, size, flags | cudaHostAllocMapped, 1, shared, dev);
    if (e != cudaSuccess) {
        if (shared)
            fe_shared_unmap(p, size);
        else
            munmap(p, size);
        return e;
    }
    *pHost = p;
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    return cudart_fe_ret(host_alloc(pHost, size, flags));
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudart_fe_ret(host_alloc(ptr, size, cudaHostAllocDefault));
}

static cudaError_t free_host(void *ptr)
{
    cudaError_t e = runtime();
    if (e != cudaSuccess || ptr == NULL)
        return e;
    pthread_mutex_lock(&lock);
    struct range *r = gvs_u64map_get(&ranges, (uintptr_t)ptr);
    if (r != NULL && r->allocated)
        gvs_u64map_remove(&ranges, (uintptr_t)ptr);
    else
        r = NULL;
    pthread_mutex_unlock(&lock);
    if (r == NULL)
        return cudaErrorInvalidValue;
    if (r->shared)
        e = fe_shared_unmap(ptr, r->size);
    else
        munmap(ptr, r->size);
    gvs_free(r);
    return e;
}

cudaError_t cudaFreeHost(void *ptr)
{
    return cudart_fe_ret(free_host(ptr));
}

/* I/O memory (a device's BAR) cannot be registered from another machine.
 * cudaHostGetFlags reports a registration as natively: mapped, and
 * portable if asked for. */
static cudaError_t host_register(void *ptr, size_t size, unsigned int flags)
{
    if (ptr == NULL || size == 0 || (flags & ~HOST_REGISTER_FLAGS) != 0 ||
        (flags & cudaHostRegisterIoMemory) != 0 ||
        (uintptr_t)ptr + size < (uintptr_t)ptr)
        return cudaErrorInvalidValue;
    cudaError_t e = runtime();
    if (e != cudaSuccess)
        return e;
    return track(ptr, size,
                 (flags & cudaHostRegisterPortable) | cudaHostRegisterMapped,
                 0, 0, 0);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    return cudart_fe_ret(host_register(ptr, size, flags));
}

static cudaError_t host_unregister(void *ptr)
{
    cudaError_t e = runtime();
    if (e != cudaSuccess)
        return e;
    uint64_t base;
    pthread_mutex_lock(&lock);
    struct range *r = containing(ptr, &base);
    if (r == NULL)
        e = cudaErrorHostMemoryNotRegistered;
    else if (base != (uintptr_t)ptr || r->allocated)
        e = cudaErrorInvalidValue;
    else
        gvs_u64map_remove(&ranges, base);
    pthread_mutex_unlock(&lock);
    if (e == cudaSuccess)
        gvs_free(r);
    return e;
}

cudaError_t cudaHostUnregister(void *ptr)
{
    return cudart_fe_ret(host_unregister(ptr));
}

static cudaError_t host_get_flags(unsigned int *pFlags, void *pHost)
{
    if (pFlags == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = runtime();
    if (e != cudaSuccess)
        return e;
    uint64_t base;
    pthread_mutex_lock(&lock);
    struct range *r = containing(pHost, &base);
    if (r != NULL)
        *pFlags = r->flags;
    pthread_mutex_unlock(&lock);
    return r != NULL ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    return cudart_fe_ret(host_get_flags(pFlags, pHost));
}

static cudaError_t host_get_device_pointer(void **pDevice, void *pHost,
                                           unsigned int flags)
{
    if (pDevice == NULL || flags != 0)
        return cudaErrorInvalidValue;
    cudaError_t e = runtime();
    if (e != cudaSuccess)
        return e;
    uint64_t base;
    pthread_mutex_lock(&lock);
    struct range *r = containing(pHost, &base);
    e = r == NULL ? cudaErrorInvalidValue
        : r->dev == 0 ? cudaErrorNotSupported
                      : cudaSuccess;
    if (e == cudaSuccess)
        *pDevice = (void *)(uintptr_t)(r->dev + ((uintptr_t)pHost - base));
    pthread_mutex_unlock(&lock);
    return e;
}

int fe_host_shared(const void *p, size_t len)
{
    uint64_t base;
    pthread_mutex_lock(&lock);
    struct range *r = containing(p, &base);
    int shared = r != NULL && r->shared &&
                 len <= r->size - ((uintptr_t)p - base);
    pthread_mutex_unlock(&lock);
    return shared;
}

int fe_host_contains(const void *p)
{
    uint64_t base;
    pthread_mutex_lock(&lock);
    int known = containing(p, &base) != NULL;
    pthread_mutex_unlock(&lock);
    return known;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
                                     unsigned int flags)
{
    return cudart_fe_ret(host_get_device_pointer(pDevice, pHost, flags));
}
