/*
 * The session's GPU memory quota (be.h, docs/cudart.md "Memory quota"),
 * and the handlers of the generic allocation ops it needs: cudaMalloc,
 * cudaFree, cudaMallocPitch, cudaFreeAsync, cudaDeviceReset,
 * cudaMemGetInfo, cudaGetDeviceProperties.
 *
 * Each allocation counted is an entry of one map per key space, holding
 * its bytes, device and owner; `used` is their sum plus what handlers
 * have taken for allocations CUDA is still making.  One lock guards it
 * all: allocations are far rarer than copies or launches.
 */
#include "be.h"

#include <pthread.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "objects.h"

/* No device holds this much: a larger request (or an overflowing
 * estimate) fails as CUDA would fail it, and sums of a few in flight
 * cannot wrap. */
#define QUOTA_REQUEST_MAX ((uint64_t)1 << 56)

/* cudaMallocPitch / cudaMalloc3D pad rows to the device's pitch
 * alignment, 512 bytes on every GPU CUDA 13 supports: the bound taken
 * before the real pitch is known. */
#define PITCH_ALIGN 512u

struct quota_entry {
    uint64_t bytes;
    uint64_t owner;
    int device;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct gvs_host_api *host;
static struct gvs_session *session;
static uint64_t quota, used;
static struct gvs_u64map maps[BE_QUOTA_MIPMAP + 1];

void be_quota_open(const struct gvs_host_api *h, struct gvs_session *s)
{
    struct gvs_session_info info;
    h->session_info(s, &info);
    pthread_mutex_lock(&lock);
    host = h;
    session = s;
    quota = info.memory_quota;
    pthread_mutex_unlock(&lock);
}

/* Caller holds lock. */
static void report(void)
{
    host->report_memory(session, used);
}

cudaError_t be_quota_take(uint64_t bytes)
{
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&lock);
    if (bytes > QUOTA_REQUEST_MAX ||
        (quota != 0 && (used > quota || bytes > quota - used)))
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess && bytes > 0) {
        used += bytes;
        report();
    }
    pthread_mutex_unlock(&lock);
    return e;
}

/* Caller holds lock.  Removes key's entry, giving its bytes back. */
static void drop(struct gvs_u64map *m, uint64_t key)
{
    struct quota_entry *q = gvs_u64map_remove(m, key);
    if (q != NULL) {
        used -= q->bytes;
        gvs_free(q);
    }
}

void be_quota_settle(struct gvs_call *call, cudaError_t e,
                     enum be_quota_kind kind, uint64_t key, uint64_t owner,
                     uint64_t taken, uint64_t bytes)
{
    struct be_lane *l = be_lane(call);
    struct quota_entry *q = NULL;
    if (e == cudaSuccess && key != 0)
        q = gvs_malloc(sizeof(*q));
    pthread_mutex_lock(&lock);
    used -= taken;
    if (e == cudaSuccess && key != 0) {
        /* CUDA hands out a key again only once it is free: whatever we
         * still count under it (memory a reset or a graph took back
         * unseen) is gone. */
        drop(&maps[kind], key);
        used += bytes;
        if (q != NULL) {
            *q = (struct quota_entry){bytes, owner, l != NULL ? l->device : 0};
            /* Without an entry the bytes stay counted for the session's
             * life: erring on the tenant's side, never the host's. */
            if (gvs_u64map_put(&maps[kind], key, q) < 0)
                gvs_free(q);
        }
    }
    report();
    pthread_mutex_unlock(&lock);
}

void be_quota_release(enum be_quota_kind kind, uint64_t key)
{
    pthread_mutex_lock(&lock);
    drop(&maps[kind], key);
    report();
    pthread_mutex_unlock(&lock);
}

/* Caller holds lock.  Drops every entry for which pick(entry, arg). */
static void drop_where(int (*pick)(const struct quota_entry *, uint64_t),
                       uint64_t arg)
{
    for (size_t k = 0; k < sizeof(maps) / sizeof(maps[0]); k++) {
        struct gvs_u64map *m = &maps[k];
        for (size_t i = m->n; i-- > 0;)
            if (pick(m->e[i].val, arg))
                drop(m, m->e[i].key);
    }
    report();
}

static int on_device(const struct quota_entry *q, uint64_t device)
{
    return q->device == (int)device;
}

static int of_owner(const struct quota_entry *q, uint64_t owner)
{
    return q->owner == owner;
}

void be_quota_release_device(int device)
{
    pthread_mutex_lock(&lock);
    drop_where(on_device, (uint64_t)device);
    pthread_mutex_unlock(&lock);
}

void be_quota_release_owner(uint64_t owner)
{
    if (owner == 0)
        return;
    pthread_mutex_lock(&lock);
    drop_where(of_owner, owner);
    pthread_mutex_unlock(&lock);
}

void be_quota_mem_info(size_t *free, size_t *total)
{
    pthread_mutex_lock(&lock);
    if (quota != 0) {
        uint64_t left = used < quota ? quota - used : 0;
        if (*total > quota)
            *total = (size_t)quota;
        if (free != NULL && *free > left)
            *free = (size_t)left;
    }
    pthread_mutex_unlock(&lock);
}

/* a * b * c, or UINT64_MAX when that overflows (be_quota_take refuses
 * it). */
static uint64_t product(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) ||
        __builtin_mul_overflow(ab, c, &abc))
        return UINT64_MAX;
    return abc;
}

uint64_t be_quota_pitched_bound(uint64_t width, uint64_t height,
                                uint64_t depth)
{
    uint64_t row = width + (PITCH_ALIGN - 1);
    if (row < width)
        return UINT64_MAX;
    return product(row & ~(uint64_t)(PITCH_ALIGN - 1), height, depth);
}

/* Handlers ------------------------------------------------------------ */

int cudart_be_cudamalloc(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t size;
    apigen_get_u64(&c, &size);
    if (apigen_end(&c) < 0)
        return c.rc;
    void *p = NULL;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(size);
    if (e == cudaSuccess) {
        e = cudaMalloc(&p, (size_t)size);
        be_quota_settle(call, e, BE_QUOTA_PTR, (uint64_t)(uintptr_t)p, 0,
                        size, size);
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
    return c.rc;
}

/* Frees every kind of device allocation: cudaMalloc's, pitched, managed,
 * stream-ordered and graph memory alike. */
int cudart_be_cudafree(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p;
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaFree((void *)(uintptr_t)p);
    if (e == cudaSuccess && p != 0)
        be_quota_release(BE_QUOTA_PTR, p);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_cudamallocpitch(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t width, height;
    apigen_get_u64(&c, &width);
    apigen_get_u64(&c, &height);
    if (apigen_end(&c) < 0)
        return c.rc;
    void *p = NULL;
    size_t pitch = 0;
    uint64_t bound = be_quota_pitched_bound(width, height, 1);
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(bound);
    if (e == cudaSuccess) {
        e = cudaMallocPitch(&p, &pitch, (size_t)width, (size_t)height);
        be_quota_settle(call, e, BE_QUOTA_PTR, (uint64_t)(uintptr_t)p, 0,
                        bound, product(pitch, height, 1));
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
        apigen_put_u64(&c, pitch);
    }
    return c.rc;
}

/* The bytes go back when the free is enqueued: the stream frees them
 * soon after, and the pool may keep them (docs/cudart.md). */
int cudart_be_cudafreeasync(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p, stream;
    apigen_get_u64(&c, &p);
    apigen_get_u64(&c, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaStream_t s = NULL;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &s);
    if (e == cudaSuccess)
        e = cudaFreeAsync((void *)(uintptr_t)p, s);
    if (e == cudaSuccess && p != 0)
        be_quota_release(BE_QUOTA_PTR, p);
    apigen_put_i32(&c, e);
    return c.rc;
}

/* A reset frees every allocation of the lane's device. */
int cudart_be_cudadevicereset(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaDeviceReset();
    struct be_lane *l = be_lane(call);
    if (e == cudaSuccess && l != NULL)
        be_quota_release_device(l->device);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_cudamemgetinfo(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    if (apigen_end(&c) < 0)
        return c.rc;
    size_t free = 0, total = 0;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaMemGetInfo(&free, &total);
    if (e == cudaSuccess)
        be_quota_mem_info(&free, &total);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, free);
        apigen_put_u64(&c, total);
    }
    return c.rc;
}

/* totalGlobalMem is the quota, so that frameworks size their caches to
 * what the session may hold.  The frontend caches the answer
 * (frontend/devcache.c); the quota is fixed for the session. */
int cudart_be_cudagetdeviceproperties(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t device;
    apigen_get_i32(&c, &device);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof(prop));
    cudaError_t e = cudaGetDeviceProperties(&prop, (int)device);
    if (e == cudaSuccess)
        be_quota_mem_info(NULL, &prop.totalGlobalMem);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_bytes(&c, &prop, sizeof(prop));
    return c.rc;
}
