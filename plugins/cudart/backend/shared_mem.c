#include "shared_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "objects.h"

enum { SHARED_ON_STREAM = 1u, SHARED_WAIT = 2u };

struct region {
    uint64_t size;
    void *p; /* the worker's mapping */
};

/* Copies hold it shared for as long as they touch a region; unsharing
 * holds it exclusive while it takes the region out.  One session per
 * worker process, so the table is the process's. */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct gvs_u64map regions; /* by client address */
static uint64_t shared_bytes;

/* Half the host's memory at most may be pinned for one session. */
static uint64_t shared_bytes_max(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : 0;
}

/* Caller holds lock.  The region holding [addr, addr + len), its base
 * in *base. */
static struct region *containing(uint64_t addr, uint64_t len, uint64_t *base)
{
    struct region *r = gvs_u64map_floor(&regions, addr, base);
    if (r == NULL || addr - *base >= r->size || len > r->size - (addr - *base))
        return NULL;
    return r;
}

/* Caller holds lock.  Regions are disjoint: only the last one starting
 * before the end of [addr, addr + size) can meet it. */
static int overlaps(uint64_t addr, uint64_t size)
{
    uint64_t base;
    struct region *r = gvs_u64map_floor(&regions, addr + size - 1, &base);
    return r != NULL && base + r->size > addr;
}

/* The client's memfd must be a regular file it can no longer shrink: a
 * page cut from under the mapping would fault the worker. */
static cudaError_t check_memfd(int fd, uint64_t size)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (uint64_t)st.st_size < size || seals < 0 || !(seals & F_SEAL_SHRINK))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* At the client's own address when it is free here, so that the device
 * address CUDA gives the mapping is often the client's pointer itself. */
static void *map_at(int fd, uint64_t addr, uint64_t size)
{
    void *p = mmap((void *)(uintptr_t)addr, size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (p != MAP_FAILED && p != (void *)(uintptr_t)addr) {
        /* A kernel without MAP_FIXED_NOREPLACE took it as a hint. */
        munmap(p, size);
        p = MAP_FAILED;
    }
    if (p == MAP_FAILED)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

static cudaError_t share(int fd, uint64_t addr, uint64_t size, uint64_t *dev)
{
    cudaError_t e = check_memfd(fd, size);
    if (e != cudaSuccess)
        return e;
    pthread_rwlock_wrlock(&lock);
    if (regions.n >= BE_SHARED_REGIONS_MAX ||
        size > shared_bytes_max() - shared_bytes)
        e = cudaErrorMemoryAllocation;
    else if (overlaps(addr, size))
        e = cudaErrorHostMemoryAlreadyRegistered;
    else
        shared_bytes += size;
    pthread_rwlock_unlock(&lock);
    if (e != cudaSuccess)
        return e;
    struct region *r = gvs_malloc(sizeof(*r));
    void *p = r != NULL ? map_at(fd, addr, size) : NULL;
    e = p != NULL ? cudaHostRegister(p, size,
                                     cudaHostRegisterPortable |
                                         cudaHostRegisterMapped)
                  : cudaErrorMemoryAllocation;
    void *d = NULL;
    if (e == cudaSuccess && cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess)
        d = NULL;
    pthread_rwlock_wrlock(&lock);
    if (e == cudaSuccess) {
        *r = (struct region){size, p};
        if (gvs_u64map_put(&regions, addr, r) < 0)
            e = cudaErrorMemoryAllocation;
    }
    if (e != cudaSuccess)
        shared_bytes -= size;
    pthread_rwlock_unlock(&lock);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (p != NULL) {
            cudaHostUnregister(p);
            (void)cudaGetLastError();
            munmap(p, size);
        }
        gvs_free(r);
        return e;
    }
    *dev = (uint64_t)(uintptr_t)d;
    return cudaSuccess;
}

/* The descriptor is taken before anything is checked, so that a refused
 * request leaves none behind for later ones. */
int cudart_be_hostmem_share(struct gvs_call *call)
{
    struct be_session *s = call->state;
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t tag, addr, size, dev = 0;
    apigen_get_u64(&c, &tag);
    apigen_get_u64(&c, &addr);
    apigen_get_u64(&c, &size);
    if (apigen_end(&c) < 0)
        return c.rc;
    int fd;
    int rc = s->host->recv_fd(s->session, tag, &fd);
    if (rc < 0 && rc != GVS_E_NOTSUP)
        return rc;
    cudaError_t e = rc < 0 ? cudaErrorNotSupported : cudart_be_enter(call);
    if (e == cudaSuccess && (size == 0 || addr + size < addr ||
                             addr % (uint64_t)sysconf(_SC_PAGESIZE) != 0))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = share(fd, addr, size, &dev);
    if (fd >= 0)
        close(fd);
    be_reply_u64(&c, e, dev);
    return c.rc;
}

static void release(struct region *r)
{
    cudaHostUnregister(r->p);
    (void)cudaGetLastError();
    munmap(r->p, r->size);
    gvs_free(r);
}

int cudart_be_hostmem_unshare(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t addr;
    apigen_get_u64(&c, &addr);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    pthread_rwlock_wrlock(&lock);
    struct region *r = gvs_u64map_remove(&regions, addr);
    if (r != NULL)
        shared_bytes -= r->size;
    pthread_rwlock_unlock(&lock);
    if (r == NULL) {
        apigen_put_i32(&c, cudaErrorInvalidValue);
        return c.rc;
    }
    /* As cudaFreeHost: no copy may still use the pages once they go. */
    cudaError_t sync = cudaDeviceSynchronize();
    release(r);
    apigen_put_i32(&c, e != cudaSuccess ? e : sync);
    return c.rc;
}

static cudaError_t copy(struct gvs_call *call, uint64_t stream, uint32_t flags,
                        int h2d, uint64_t dev, void *host, uint64_t len)
{
    cudaStream_t st = NULL;
    cudaError_t e = (flags & SHARED_ON_STREAM)
                        ? be_enter_stream_range(call, stream, &st, dev, len)
                        : cudart_be_enter(call);
    if (e == cudaSuccess && !(flags & SHARED_ON_STREAM))
        e = be_check_device_range(dev, len);
    if (e != cudaSuccess || len == 0)
        return e;
    void *d = (void *)(uintptr_t)dev;
    void *dst = h2d ? d : host;
    const void *src = h2d ? host : d;
    enum cudaMemcpyKind k = h2d ? cudaMemcpyHostToDevice
                                : cudaMemcpyDeviceToHost;
    if (!(flags & SHARED_ON_STREAM))
        return cudaMemcpy(dst, src, len, k);
    e = cudaMemcpyAsync(dst, src, len, k, st);
    if (e == cudaSuccess && (flags & SHARED_WAIT))
        e = cudaStreamSynchronize(st);
    return e;
}

int cudart_be_memcpy_shared(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, dev, host, len;
    uint32_t flags, kind;
    apigen_get_u64(&c, &stream);
    apigen_get_u32(&c, &flags);
    apigen_get_u32(&c, &kind);
    apigen_get_u64(&c, &dev);
    apigen_get_u64(&c, &host);
    apigen_get_u64(&c, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags & ~(uint32_t)(SHARED_ON_STREAM | SHARED_WAIT))
        return GVS_E_PROTO;
    cudaError_t e = cudaErrorInvalidMemcpyDirection;
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost) {
        uint64_t base;
        pthread_rwlock_rdlock(&lock);
        struct region *r = containing(host, len ? len : 1, &base);
        e = r == NULL ? cudaErrorInvalidValue
                      : copy(call, stream, flags,
                             kind == cudaMemcpyHostToDevice, dev,
                             (uint8_t *)r->p + (host - base), len);
        pthread_rwlock_unlock(&lock);
    }
    apigen_put_i32(&c, e);
    return c.rc;
}

void be_shared_free(void)
{
    pthread_rwlock_wrlock(&lock);
    for (size_t i = 0; i < regions.n; i++)
        release(regions.e[i].val);
    gvs_u64map_clear(&regions);
    shared_bytes = 0;
    pthread_rwlock_unlock(&lock);
}
