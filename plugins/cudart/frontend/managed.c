/*
 * Managed memory (cudaMallocManaged, __managed__ variables) over a GPU in
 * another process, for programs that touch it from the host only between
 * synchronizations (docs/cudart.md, "Managed memory").
 *
 * Each managed allocation has a shadow here, mapped at the address the
 * backend's allocation has, so that the program's pointers mean the same
 * on both sides.  Shadow pages are read-only while clean; the program's
 * first write to a page faults, and the fault handler makes the page
 * writable and marks it dirty.  Before any device-dependent request
 * (fe_managed_push_locked) the dirty pages are pushed to the device and
 * made read-only again; after a synchronization (fe_managed_synced) every
 * clean page is pulled from the device.
 *
 * The fault handler takes no lock: ranges live in a fixed table of
 * atomics, written in an order the handler can read at any time.  Pushes
 * (under the client lock) and pulls (which take it) read the table the
 * same way; the lock here only orders additions and removals.  A program
 * that frees managed memory while another of its threads synchronizes or
 * launches has a race natively too.
 */
#include "fe.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

#define MAX_RANGES 1024

/* Managed bytes [lo, hi) that travel between the shadow and the device:
 * an allocation, or one __managed__ variable (each its own allocation on
 * the device, so a copy never spans two). */
struct seg {
    uintptr_t lo, hi;
};

/* A shadow mapping, pages [base, base + len), and the segments in it,
 * in address order: one allocation, or the variables of a module that
 * share pages. */
struct range {
    _Atomic uintptr_t base; /* 0: free slot */
    _Atomic size_t len;
    _Atomic(uint8_t *) dirty; /* one byte per page */
    struct seg *segs;
    size_t nsegs;
};

static struct range ranges[MAX_RANGES];
static _Atomic int any_dirty;
static _Atomic int nranges;
static size_t page;

/* Orders changes to the table, and guards `vars`.  Never held while
 * taking the client lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_segv;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < MAX_RANGES; i++) {
        uintptr_t base = atomic_load(&ranges[i].base);
        if (base == 0 || a < base || a - base >= atomic_load(&ranges[i].len))
            continue;
        uint8_t *dirty = atomic_load(&ranges[i].dirty);
        size_t pg = (a - base) / page;
        if (dirty == NULL ||
            mprotect((void *)(base + pg * page), page,
                     PROT_READ | PROT_WRITE) != 0)
            break;
        dirty[pg] = 1;
        atomic_store(&any_dirty, 1);
        return;
    }
    /* Not a write to a shadow: whatever the program had set up. */
    if (old_segv.sa_flags & SA_SIGINFO) {
        old_segv.sa_sigaction(sig, si, ctx);
    } else if (old_segv.sa_handler != SIG_DFL &&
               old_segv.sa_handler != SIG_IGN) {
        old_segv.sa_handler(sig);
    } else {
        /* Re-executed with the default action: the usual crash. */
        signal(SIGSEGV, SIG_DFL);
    }
}

static int handler_ok;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

static void handler_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    page = (size_t)sysconf(_SC_PAGESIZE);
    handler_ok = sigaction(SIGSEGV, &sa, &old_segv) == 0;
}

/* A shadow (read-only, every page clean) for segments segs[0..n) in
 * address order; its slot, or -1 when their pages are taken here, the
 * table is full or memory is short. */
static int range_add(const struct seg *segs, size_t n)
{
    pthread_once(&handler_once, handler_install);
    if (!handler_ok)
        return -1;
    uintptr_t base = segs[0].lo / page * page;
    size_t len = (segs[n - 1].hi - base + page - 1) / page * page;
    uint8_t *dirty = gvs_calloc(len / page, 1);
    struct seg *copy = gvs_calloc(n, sizeof(*copy));
    int slot = -1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_RANGES && slot < 0; i++)
        if (atomic_load(&ranges[i].base) == 0)
            slot = i;
    void *p = slot >= 0 && dirty != NULL && copy != NULL
                  ? mmap((void *)base, len, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                         -1, 0)
                  : MAP_FAILED;
    if (p != (void *)base) {
        if (p != MAP_FAILED)
            munmap(p, len);
        slot = -1;
    } else {
        memcpy(copy, segs, n * sizeof(*copy));
        ranges[slot].segs = copy;
        ranges[slot].nsegs = n;
        atomic_store(&ranges[slot].dirty, dirty);
        atomic_store(&ranges[slot].len, len);
        atomic_store(&ranges[slot].base, base);
        atomic_fetch_add(&nranges, 1);
    }
    pthread_mutex_unlock(&lock);
    if (slot < 0) {
        gvs_free(dirty);
        gvs_free(copy);
    }
    return slot;
}

static void range_drop_locked(int i)
{
    uintptr_t base = atomic_load(&ranges[i].base);
    uint8_t *dirty = atomic_load(&ranges[i].dirty);
    atomic_store(&ranges[i].base, 0);
    munmap((void *)base, atomic_load(&ranges[i].len));
    atomic_store(&ranges[i].dirty, NULL);
    gvs_free(dirty);
    gvs_free(ranges[i].segs);
    ranges[i].segs = NULL;
    ranges[i].nsegs = 0;
    atomic_fetch_sub(&nranges, 1);
}

static void range_drop(int i)
{
    pthread_mutex_lock(&lock);
    range_drop_locked(i);
    pthread_mutex_unlock(&lock);
}

/* Runs fn on the managed bytes of pages [p, q) of range i, segment by
 * segment; stops at the first failure. */
static int each_segment(int i, size_t p, size_t q,
                        int (*fn)(uintptr_t at, size_t n, void *arg),
                        void *arg)
{
    uintptr_t base = atomic_load(&ranges[i].base);
    uintptr_t start = base + p * page, end = base + q * page;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < ranges[i].nsegs; k++) {
        const struct seg *sg = &ranges[i].segs[k];
        uintptr_t at = start > sg->lo ? start : sg->lo;
        uintptr_t stop = end < sg->hi ? end : sg->hi;
        if (stop > at)
            rc = fn(at, stop - at, arg);
    }
    return rc;
}

/* Push -------------------------------------------------------------------- */

struct push {
    struct gvs_client *cl;
    struct gvs_buf *hdr;
};

static int post_push(uintptr_t dst, size_t len, void *arg)
{
    struct push *ps = arg;
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < len; off += GVS_BULK_CHUNK) {
        size_t n = len - off < GVS_BULK_CHUNK ? len - off : GVS_BULK_CHUNK;
        gvs_buf_reset(ps->hdr);
        rc = gvs_buf_put_u64(ps->hdr, dst + off);
        if (rc == 0)
            rc = gvs_buf_put_u32(ps->hdr, (uint32_t)n);
        struct iovec iov[2] = {
            {(void *)gvs_buf_ptr(ps->hdr), gvs_buf_len(ps->hdr)},
            {(void *)(dst + off), n},
        };
        if (rc == 0)
            rc = gvs_client_send_locked(ps->cl, CUDART_PLUGIN_ID,
                                        CUDART_OP_MANAGED_PUSH, GVS_F_NOREPLY,
                                        iov, 2, NULL);
    }
    return rc;
}

/* Runs of dirty pages are made read-only, then sent: a write that comes
 * in between faults again and is pushed next time. */
static int push_range(struct push *ps, int i)
{
    uintptr_t base = atomic_load(&ranges[i].base);
    size_t pages = atomic_load(&ranges[i].len) / page;
    uint8_t *dirty = atomic_load(&ranges[i].dirty);
    int rc = 0;
    if (dirty == NULL)
        return 0;
    for (size_t p = 0; rc == 0 && p < pages;) {
        if (!dirty[p]) {
            p++;
            continue;
        }
        size_t q = p;
        while (q < pages && dirty[q])
            dirty[q++] = 0;
        mprotect((void *)(base + p * page), (q - p) * page, PROT_READ);
        rc = each_segment(i, p, q, post_push, ps);
        p = q;
    }
    return rc;
}

int fe_managed_push_locked(struct gvs_client *cl)
{
    if (!atomic_exchange(&any_dirty, 0))
        return 0;
    struct push ps = {cl, gvs_buf_new(16)};
    if (ps.hdr == NULL) {
        atomic_store(&any_dirty, 1);
        return GVS_E_NOMEM;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < MAX_RANGES; i++)
        if (atomic_load(&ranges[i].base) != 0)
            rc = push_range(&ps, i);
    gvs_buf_free(ps.hdr);
    return rc;
}

/* Pull -------------------------------------------------------------------- */

struct pull {
    struct gvs_client *cl;
    struct gvs_buf *req, *rep;
    cudaError_t e;
};

/* One D2H copy into the shadow (its pages made writable for it). */
static int pull_chunk(uintptr_t at, size_t n, void *arg)
{
    struct pull *pl = arg;
    uint64_t id;
    gvs_buf_reset(pl->req);
    int rc = gvs_buf_put_u64(pl->req, at);
    if (rc == 0)
        rc = gvs_buf_put_u64(pl->req, n);
    if (rc < 0) {
        pl->e = cudaErrorMemoryAllocation;
        return rc;
    }
    struct iovec iov = {(void *)gvs_buf_ptr(pl->req), gvs_buf_len(pl->req)};
    gvs_client_lock(pl->cl);
    rc = fe_send_locked(pl->cl, CUDART_OP_MEMCPY_D2H, APIGEN_DEVICE, 0, &iov,
                        1, &id);
    gvs_client_unlock(pl->cl);
    if (rc == 0)
        rc = gvs_client_wait(pl->cl, id, pl->rep);
    if (rc < 0) {
        pl->e = fe_transport_error(rc);
        return rc;
    }
    struct apigen_call c = {NULL, pl->rep, 0};
    const uint8_t *data;
    size_t len;
    pl->e = fe_reply_result(&c);
    if (pl->e == cudaSuccess)
        apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0 || (pl->e == cudaSuccess && len != n))
        pl->e = cudaErrorUnknown;
    if (pl->e != cudaSuccess)
        return -1;
    void *pages = (void *)(at / page * page);
    size_t span = (at + n - (uintptr_t)pages + page - 1) / page * page;
    mprotect(pages, span, PROT_READ | PROT_WRITE);
    memcpy((void *)at, data, n);
    mprotect(pages, span, PROT_READ);
    return 0;
}

/* Every run of clean pages of range i, from the device; pages written
 * since the last push keep the host's bytes. */
static void pull_range(struct pull *pl, int i)
{
    size_t pages = atomic_load(&ranges[i].len) / page;
    const uint8_t *dirty = atomic_load(&ranges[i].dirty);
    for (size_t p = 0; dirty != NULL && pl->e == cudaSuccess && p < pages;) {
        size_t q = p;
        while (q < pages && !dirty[q] && (q - p + 1) * page <= GVS_BULK_CHUNK)
            q++;
        if (q == p) {
            p++;
            continue;
        }
        each_segment(i, p, q, pull_chunk, pl);
        p = q;
    }
}

/* Pulls range `only`, or every range when it is -1. */
static cudaError_t pull(int only)
{
    struct pull pl = {NULL, gvs_buf_new(32), gvs_buf_new(GVS_BULK_CHUNK + 64),
                      cudaSuccess};
    pl.e = fe_client(&pl.cl);
    if (pl.e == cudaSuccess && (pl.req == NULL || pl.rep == NULL))
        pl.e = cudaErrorMemoryAllocation;
    for (int i = 0; pl.e == cudaSuccess && i < MAX_RANGES; i++)
        if ((only < 0 || i == only) && atomic_load(&ranges[i].base) != 0)
            pull_range(&pl, i);
    gvs_buf_free(pl.req);
    gvs_buf_free(pl.rep);
    return pl.e;
}

cudaError_t fe_managed_synced(uint16_t op)
{
    if (atomic_load(&nranges) == 0)
        return cudaSuccess;
    switch (op) {
    case CUDART_OP_cudaDeviceSynchronize:
    case CUDART_OP_cudaStreamSynchronize:
    case CUDART_OP_cudaStreamQuery:
    case CUDART_OP_cudaEventSynchronize:
    case CUDART_OP_cudaEventQuery:
        return pull(-1);
    default:
        return cudaSuccess;
    }
}

/* Allocation -------------------------------------------------------------- */

/* Undoes shadow(). */
static void unshadow(int slot)
{
    for (size_t k = 0; k < ranges[slot].nsegs; k++)
        fe_mem_untrack((void *)ranges[slot].segs[k].lo);
    range_drop(slot);
}

/* Shadows segs[0..n) (in address order) with their current bytes, in the
 * allocation map too, so that cudaMemcpyDefault sees device memory; the
 * slot in *slot.  cudaErrorMemoryAllocation when the addresses are taken
 * here. */
static cudaError_t shadow(const struct seg *segs, size_t n, int *slot)
{
    *slot = range_add(segs, n);
    if (*slot < 0)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudaSuccess;
    for (size_t k = 0; e == cudaSuccess && k < n; k++)
        if (!fe_mem_track((void *)segs[k].lo, segs[k].hi - segs[k].lo))
            e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = pull(*slot);
    if (e != cudaSuccess)
        unshadow(*slot);
    return e;
}

static cudaError_t malloc_managed(void **out, size_t size, unsigned flags)
{
    struct apigen_call c;
    uint64_t ptr = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    /* As cudaMalloc: a failed allocation (past the session's quota, say)
     * leaves a null pointer behind. */
    *out = NULL;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, size);
    apigen_put_u32(&c, flags);
    e = cudart_fe_run(&c, CUDART_OP_MALLOC_MANAGED, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &ptr);
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    struct seg sg = {(uintptr_t)ptr, (uintptr_t)(ptr + size)};
    int slot;
    e = shadow(&sg, 1, &slot);
    if (e != cudaSuccess) {
        (void)cudaFree((void *)(uintptr_t)ptr);
        return e;
    }
    *out = (void *)(uintptr_t)ptr;
    return cudaSuccess;
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    return cudart_fe_ret(malloc_managed(devPtr, size, flags));
}

void fe_managed_forget(const void *p)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_RANGES; i++)
        if (atomic_load(&ranges[i].base) != 0 && ranges[i].nsegs > 0 &&
            ranges[i].segs[0].lo == (uintptr_t)p)
            range_drop_locked(i);
    pthread_mutex_unlock(&lock);
}

/* __managed__ variables --------------------------------------------------- */

/* A variable nvcc registered: the host code reads it through *ptr once
 * __cudaInitModule has succeeded. */
struct managed_var {
    struct managed_var *next;
    void **handle;
    void **ptr;
    char *name;
    size_t size;
    int ready;
};

static struct managed_var *vars;

void fe_managed_var_register(void **handle, void **ptr, const char *name,
                             size_t size)
{
    struct managed_var *v = gvs_calloc(1, sizeof(*v));
    char *n = name != NULL ? gvs_strdup(name) : NULL;
    if (v == NULL || n == NULL || ptr == NULL) {
        gvs_free(v);
        gvs_free(n);
        return;
    }
    *v = (struct managed_var){NULL, handle, ptr, n, size, 0};
    pthread_mutex_lock(&lock);
    v->next = vars;
    vars = v;
    pthread_mutex_unlock(&lock);
}

/* The backend's address of a module's managed variable. */
static cudaError_t var_address(uint32_t module, const char *name,
                               uint64_t *addr, uint64_t *size)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u32(&c, module);
    apigen_put_str(&c, name);
    e = cudart_fe_run(&c, CUDART_OP_MANAGED_VAR, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, addr);
        apigen_get_u64(&c, size);
    }
    return cudart_fe_end(&c, e);
}

/* A module's variables in address order; those that share a page share a
 * shadow.  What was shadowed is undone when one group fails. */
struct var_seg {
    struct managed_var *v;
    struct seg sg;
};

static int by_address(const void *a, const void *b)
{
    uintptr_t x = ((const struct var_seg *)a)->sg.lo;
    uintptr_t y = ((const struct var_seg *)b)->sg.lo;
    return x < y ? -1 : x > y;
}

static cudaError_t vars_shadow(struct var_seg *vs, size_t n)
{
    struct seg *segs = gvs_calloc(n, sizeof(*segs));
    int *slots = gvs_calloc(n, sizeof(*slots));
    size_t nslots = 0;
    cudaError_t e = segs != NULL && slots != NULL ? cudaSuccess
                                                  : cudaErrorMemoryAllocation;
    qsort(vs, n, sizeof(*vs), by_address);
    for (size_t i = 0; e == cudaSuccess && i < n;) {
        size_t j = i;
        uintptr_t hi = vs[i].sg.hi;
        do {
            segs[j - i] = vs[j].sg;
            hi = vs[j].sg.hi > hi ? vs[j].sg.hi : hi;
            j++;
        } while (j < n && vs[j].sg.lo / page <= (hi - 1) / page);
        e = shadow(segs, j - i, &slots[nslots]);
        if (e == cudaSuccess)
            nslots++;
        i = j;
    }
    for (size_t k = 0; e != cudaSuccess && k < nslots; k++)
        unshadow(slots[k]);
    gvs_free(segs);
    gvs_free(slots);
    return e;
}

cudaError_t fe_managed_vars_ready(void **handle, uint32_t module)
{
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (struct managed_var *v = vars; v != NULL; v = v->next)
        n += v->handle == handle && !v->ready;
    struct var_seg *vs = n ? gvs_calloc(n, sizeof(*vs)) : NULL;
    size_t k = 0;
    for (struct managed_var *v = vars; vs != NULL && v != NULL; v = v->next)
        if (v->handle == handle && !v->ready)
            vs[k++].v = v;
    pthread_mutex_unlock(&lock);
    if (n == 0)
        return cudaSuccess;
    if (vs == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudaSuccess;
    for (size_t i = 0; e == cudaSuccess && i < n; i++) {
        uint64_t addr = 0, size = 0;
        e = var_address(module, vs[i].v->name, &addr, &size);
        if (e == cudaSuccess && (size != vs[i].v->size || size == 0))
            e = cudaErrorInvalidSymbol;
        vs[i].sg = (struct seg){(uintptr_t)addr, (uintptr_t)(addr + size)};
    }
    pthread_once(&handler_once, handler_install);
    if (e == cudaSuccess)
        e = vars_shadow(vs, n);
    for (size_t i = 0; e == cudaSuccess && i < n; i++) {
        *vs[i].v->ptr = (void *)vs[i].sg.lo;
        vs[i].v->ready = 1;
    }
    gvs_free(vs);
    return e;
}

/* fork() --------------------------------------------------------------------
 * The child's session is new: the shadows mean nothing there. */

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (int i = 0; i < MAX_RANGES; i++)
        if (atomic_load(&ranges[i].base) != 0)
            range_drop_locked(i);
    for (struct managed_var *v = vars; v != NULL; v = v->next)
        v->ready = 0;
    atomic_store(&any_dirty, 0);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void managed_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
