/*
 * Managed memory shadows (gvs_remote.h), one table per process whichever
 * API frontend made the allocation: cudaMallocManaged and __managed__
 * variables through the runtime, cuMemAllocManaged and
 * cuLibraryGetManaged through the driver (docs/cudart.md, "Managed
 * memory").
 *
 * Each managed segment has a shadow here, mapped at the address the
 * backend's allocation has, so that the program's pointers mean the same
 * on both sides.  Shadow pages are read-only while clean; the program's
 * first write to a page faults, and the fault handler makes the page
 * writable and marks it dirty.  Before any device-dependent request the
 * API frontend pushes the dirty pages (gvs_remote_managed_push_locked)
 * and they are read-only again; after a synchronization it pulls every
 * clean page from the device (gvs_remote_managed_pull).
 *
 * The fault handler takes no lock: ranges live in a fixed table of
 * atomics, written in an order the handler can read at any time.  Pushes
 * (under the client lock) and pulls read the table the same way; the
 * lock here only orders additions and removals.  A program that frees
 * managed memory while another of its threads synchronizes or launches
 * has a race natively too.
 */
#include "gvs_remote.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

#define EXPORT __attribute__((visibility("default")))

#define MAX_RANGES 1024

/* A shadow mapping, pages [base, base + len), and the segments in it, in
 * address order: one allocation, or the variables of modules that share
 * pages (each variable its own allocation on the device, so a copy never
 * spans two). */
struct range {
    _Atomic uintptr_t base; /* 0: free slot */
    _Atomic size_t len;
    _Atomic(uint8_t *) dirty; /* one byte per page */
    struct gvs_remote_seg *segs;
    size_t nsegs;
};

static struct range ranges[MAX_RANGES];
static _Atomic int any_dirty;
static _Atomic int nranges;
static size_t page;

/* Orders changes to the table.  Never held while taking the client
 * lock. */
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

static void range_drop_locked(int i, int unmap)
{
    uintptr_t base = atomic_load(&ranges[i].base);
    uint8_t *dirty = atomic_load(&ranges[i].dirty);
    atomic_store(&ranges[i].base, 0);
    if (unmap)
        munmap((void *)base, atomic_load(&ranges[i].len));
    atomic_store(&ranges[i].dirty, NULL);
    gvs_free(dirty);
    gvs_free(ranges[i].segs);
    ranges[i].segs = NULL;
    ranges[i].nsegs = 0;
    atomic_fetch_sub(&nranges, 1);
}

/* Caller holds lock.  Whether page address a is mapped by one of the
 * ranges in olds[0..n). */
static int covered(const int *olds, size_t n, uintptr_t a)
{
    for (size_t k = 0; k < n; k++) {
        uintptr_t b = atomic_load(&ranges[olds[k]].base);
        if (a >= b && a - b < atomic_load(&ranges[olds[k]].len))
            return 1;
    }
    return 0;
}

/* Caller holds lock.  Maps the pages of [base, base + len) that no range
 * of olds maps; 0, or -1 (nothing left mapped) when one is taken. */
static int map_gaps(const int *olds, size_t n, uintptr_t base, size_t len)
{
    for (uintptr_t a = base; a < base + len; a += page) {
        if (covered(olds, n, a))
            continue;
        void *p = mmap((void *)a, page, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
                       0);
        if (p == (void *)a)
            continue;
        if (p != MAP_FAILED)
            munmap(p, page);
        for (uintptr_t b = base; b < a; b += page)
            if (!covered(olds, n, b))
                munmap((void *)b, page);
        return -1;
    }
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = ((const struct gvs_remote_seg *)a)->lo;
    uintptr_t y = ((const struct gvs_remote_seg *)b)->lo;
    return x < y ? -1 : x > y;
}

EXPORT int gvs_remote_managed_add(uint64_t lo, uint64_t hi)
{
    pthread_once(&handler_once, handler_install);
    if (!handler_ok || hi <= lo)
        return -1;
    uintptr_t base = (uintptr_t)lo / page * page;
    uintptr_t end = ((uintptr_t)hi + page - 1) / page * page;
    int olds[MAX_RANGES], slot = -1;
    size_t n = 0, nsegs = 1;
    pthread_mutex_lock(&lock);
    /* The ranges whose pages the segment shares join it in one shadow. */
    for (int i = 0; i < MAX_RANGES; i++) {
        uintptr_t b = atomic_load(&ranges[i].base);
        size_t l = atomic_load(&ranges[i].len);
        if (b == 0) {
            slot = slot < 0 ? i : slot;
            continue;
        }
        if (b >= end || b + l <= base)
            continue;
        for (size_t k = 0; k < ranges[i].nsegs; k++) {
            const struct gvs_remote_seg *sg = &ranges[i].segs[k];
            if (sg->lo == lo && sg->hi == hi) {
                /* Asked again (a variable looked up twice). */
                pthread_mutex_unlock(&lock);
                return i;
            }
            if (sg->lo < hi && lo < sg->hi)
                goto fail; /* overlapping bytes of another segment */
        }
        olds[n++] = i;
        nsegs += ranges[i].nsegs;
        base = b < base ? b : base;
        end = b + l > end ? b + l : end;
    }
    size_t len = end - base;
    uint8_t *dirty = gvs_calloc(len / page, 1);
    struct gvs_remote_seg *segs = gvs_calloc(nsegs, sizeof(*segs));
    if (slot < 0 || dirty == NULL || segs == NULL ||
        map_gaps(olds, n, base, len) < 0) {
        gvs_free(dirty);
        gvs_free(segs);
        goto fail;
    }
    size_t s = 0;
    segs[s++] = (struct gvs_remote_seg){lo, hi};
    for (size_t k = 0; k < n; k++) {
        struct range *o = &ranges[olds[k]];
        uintptr_t b = atomic_load(&o->base);
        memcpy(&dirty[(b - base) / page], atomic_load(&o->dirty),
               atomic_load(&o->len) / page);
        memcpy(&segs[s], o->segs, o->nsegs * sizeof(*segs));
        s += o->nsegs;
    }
    qsort(segs, nsegs, sizeof(*segs), by_lo);
    ranges[slot].segs = segs;
    ranges[slot].nsegs = nsegs;
    atomic_store(&ranges[slot].dirty, dirty);
    atomic_store(&ranges[slot].len, len);
    atomic_store(&ranges[slot].base, base);
    atomic_fetch_add(&nranges, 1);
    /* The new range maps the old ones' pages from now on. */
    for (size_t k = 0; k < n; k++)
        range_drop_locked(olds[k], 0);
    pthread_mutex_unlock(&lock);
    return slot;
fail:
    pthread_mutex_unlock(&lock);
    return -1;
}

/* Caller holds lock.  Takes segment lo out of range i; the range goes
 * when it was its last, else its pages no other segment has. */
static void seg_drop_locked(int i, uint64_t lo)
{
    struct range *r = &ranges[i];
    size_t k = 0;
    while (k < r->nsegs && r->segs[k].lo != lo)
        k++;
    if (k == r->nsegs)
        return;
    if (r->nsegs == 1) {
        range_drop_locked(i, 1);
        return;
    }
    memmove(&r->segs[k], &r->segs[k + 1],
            (r->nsegs - k - 1) * sizeof(*r->segs));
    r->nsegs--;
}

EXPORT void gvs_remote_managed_forget(uint64_t lo)
{
    if (atomic_load(&nranges) == 0)
        return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_RANGES; i++) {
        uintptr_t b = atomic_load(&ranges[i].base);
        if (b != 0 && lo >= b && lo - b < atomic_load(&ranges[i].len))
            seg_drop_locked(i, lo);
    }
    pthread_mutex_unlock(&lock);
}

EXPORT int gvs_remote_managed_any(void)
{
    return atomic_load(&nranges) != 0;
}

/* Runs fn on the managed bytes of pages [p, q) of range i, segment by
 * segment, in pieces of at most GVS_BULK_CHUNK; stops at the first
 * failure. */
static int each_piece(int i, size_t p, size_t q,
                      int (*fn)(uintptr_t at, size_t n, void *arg),
                      void *arg)
{
    uintptr_t base = atomic_load(&ranges[i].base);
    uintptr_t start = base + p * page, end = base + q * page;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < ranges[i].nsegs; k++) {
        const struct gvs_remote_seg *sg = &ranges[i].segs[k];
        uintptr_t at = start > sg->lo ? start : (uintptr_t)sg->lo;
        uintptr_t stop = end < sg->hi ? end : (uintptr_t)sg->hi;
        for (; rc == 0 && at < stop; at += GVS_BULK_CHUNK) {
            size_t n = stop - at < GVS_BULK_CHUNK ? stop - at
                                                  : GVS_BULK_CHUNK;
            rc = fn(at, n, arg);
        }
    }
    return rc;
}

/* Push -------------------------------------------------------------------- */

struct push {
    const struct gvs_remote_managed_io *io;
    struct gvs_client *cl;
    struct gvs_buf *hdr;
};

/* u64 dst and the blob's length, then the bytes straight from the
 * shadow. */
static int push_piece(uintptr_t at, size_t n, void *arg)
{
    struct push *ps = arg;
    gvs_buf_reset(ps->hdr);
    int rc = gvs_buf_put_u64(ps->hdr, at);
    if (rc == 0)
        rc = gvs_buf_put_u32(ps->hdr, (uint32_t)n);
    struct iovec iov[2] = {
        {(void *)gvs_buf_ptr(ps->hdr), gvs_buf_len(ps->hdr)},
        {(void *)at, n},
    };
    return rc < 0 ? rc
                  : gvs_client_send_locked(ps->cl, ps->io->api->plugin,
                                           ps->io->push_op, GVS_F_NOREPLY,
                                           iov, 2, NULL);
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
        rc = each_piece(i, p, q, push_piece, ps);
        p = q;
    }
    return rc;
}

EXPORT int
gvs_remote_managed_push_locked(const struct gvs_remote_managed_io *io,
                               struct gvs_client *cl)
{
    if (!atomic_exchange(&any_dirty, 0))
        return 0;
    struct push ps = {io, cl, gvs_buf_new(16)};
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
    const struct gvs_remote_managed_io *io;
    struct gvs_client *cl;
    struct gvs_buf *req, *rep;
    int32_t r;
};

/* One round trip of the API's pull op for the n bytes at `at`. */
static int32_t pull_bytes(struct pull *pl, uintptr_t at, size_t n,
                          const uint8_t **data)
{
    const struct gvs_remote_api *api = pl->io->api;
    uint64_t id;
    size_t len = 0;
    gvs_buf_reset(pl->req);
    int rc = pl->io->pull_request(pl->req, at, n);
    if (rc < 0)
        return api->nomem;
    struct iovec iov = {(void *)gvs_buf_ptr(pl->req), gvs_buf_len(pl->req)};
    gvs_client_lock(pl->cl);
    rc = gvs_remote_send_locked(api, pl->cl, pl->io->pull_op, APIGEN_DEVICE,
                                0, &iov, 1, &id);
    gvs_client_unlock(pl->cl);
    if (rc == 0)
        rc = gvs_client_wait(pl->cl, id, pl->rep);
    if (rc < 0)
        return api->transport_error(rc);
    struct apigen_call c = {NULL, pl->rep, 0};
    int32_t r = gvs_remote_reply_result(api, &c);
    if (r == api->success)
        apigen_get_blob(&c, data, &len);
    if (apigen_end(&c) < 0 || (r == api->success && len != n))
        r = api->unknown;
    return r;
}

/* One piece into the shadow, its pages writable meanwhile. */
static int pull_piece(uintptr_t at, size_t n, void *arg)
{
    struct pull *pl = arg;
    const uint8_t *data = NULL;
    pl->r = pull_bytes(pl, at, n, &data);
    if (pl->r != pl->io->api->success)
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
    for (size_t p = 0; dirty != NULL && pl->r == pl->io->api->success &&
                       p < pages;) {
        size_t q = p;
        while (q < pages && !dirty[q] && (q - p + 1) * page <= GVS_BULK_CHUNK)
            q++;
        if (q == p) {
            p++;
            continue;
        }
        each_piece(i, p, q, pull_piece, pl);
        p = q;
    }
}

EXPORT int32_t
gvs_remote_managed_pull(const struct gvs_remote_managed_io *io, int only)
{
    const struct gvs_remote_api *api = io->api;
    struct pull pl = {io, NULL, gvs_buf_new(64),
                      gvs_buf_new(GVS_BULK_CHUNK + 64), api->success};
    pl.r = api->client(&pl.cl);
    if (pl.r == api->success && (pl.req == NULL || pl.rep == NULL))
        pl.r = api->nomem;
    for (int i = 0; pl.r == api->success && i < MAX_RANGES; i++)
        if ((only < 0 || i == only) && atomic_load(&ranges[i].base) != 0)
            pull_range(&pl, i);
    gvs_buf_free(pl.req);
    gvs_buf_free(pl.rep);
    return pl.r;
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
            range_drop_locked(i, 1);
    atomic_store(&any_dirty, 0);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void managed_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
