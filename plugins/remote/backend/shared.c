/*
 * Host memory the client shares with the worker (remote_be.h, "Shared
 * host memory"): sealed memfds the frontend passes (shm://, unix://),
 * mapped here, or extents of the connection's data area (ivshmem://),
 * mapped here already; pinned by the API plugin that received them, so that a
 * copy between the GPU and such memory is one DMA (docs/remoting.md,
 * "Shared host memory").  One table for the session, whichever API
 * shared a region: a copy through the driver API finds a region the
 * runtime shared.  The client's addresses are keys into this table only:
 * a copy names a client address, and only the part of the worker's own
 * mapping it translates to is ever touched.
 */
#include "state.h"
#include "output.h"
#include "quiet.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

/* Regions a session may share (a tenant must not pin the host's memory
 * away; the bytes are bounded too, shared_bytes_max). */
#define SHARED_REGIONS_MAX 4096u

struct region {
    uint64_t size;
    void *p;      /* the worker's mapping */
    int mapped;   /* p is a mapping of its own (a memfd's), else in the area */
    uint64_t dev; /* its device address, 0 for none */
    const struct gvs_remote_pinner *pinner;
};

/* Copies hold it shared for as long as they touch a region; unsharing
 * holds it exclusive while it takes the region out.  One session per
 * worker process, so the table is the process's. */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct gvs_u64map regions; /* by client address */
static uint64_t shared_bytes;
static const struct gvs_host_api *host;
static struct gvs_session *session;

void remote_be_shared_open(const struct gvs_host_api *h,
                           struct gvs_session *s)
{
    host = h;
    session = s;
}

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
static int memfd_ok(int fd, uint64_t size)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
           (uint64_t)st.st_size >= size && seals >= 0 &&
           (seals & F_SEAL_SHRINK);
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

/* The memfd fd mapped here, or with fd -1 the worker's memory at area. */
static int32_t share(const struct gvs_remote_pinner *pn, int fd, void *area,
                     uint64_t addr, uint64_t size, uint64_t *dev)
{
    if (fd >= 0 && !memfd_ok(fd, size))
        return pn->invalid;
    int32_t e = pn->success;
    pthread_rwlock_wrlock(&lock);
    if (regions.n >= SHARED_REGIONS_MAX ||
        size > shared_bytes_max() - shared_bytes)
        e = pn->nomem;
    else if (overlaps(addr, size))
        e = pn->registered;
    else
        shared_bytes += size;
    pthread_rwlock_unlock(&lock);
    if (e != pn->success)
        return e;
    struct region *r = gvs_malloc(sizeof(*r));
    void *p = r == NULL ? NULL : fd >= 0 ? map_at(fd, addr, size) : area;
    e = p != NULL ? pn->pin(p, size, dev) : pn->nomem;
    int pinned = e == pn->success;
    pthread_rwlock_wrlock(&lock);
    if (pinned) {
        *r = (struct region){size, p, fd >= 0, *dev, pn};
        if (gvs_u64map_put(&regions, addr, r) < 0)
            e = pn->nomem;
    }
    if (e != pn->success)
        shared_bytes -= size;
    pthread_rwlock_unlock(&lock);
    if (e != pn->success) {
        if (pinned)
            pn->unpin(p, size);
        if (p != NULL && fd >= 0)
            munmap(p, size);
        gvs_free(r);
    }
    return e;
}

/* The worker's address of [off, off + size) of the data area, NULL when
 * that is not inside it.  The client may write the area at any moment;
 * only its bounds, which are the worker's own, are trusted. */
static void *in_area(uint64_t off, uint64_t size, uint64_t page)
{
    void *base;
    size_t len;
    if (host == NULL || host->area == NULL ||
        host->area(session, &base, &len) < 0 || off % page != 0 ||
        off > len || size > len - off)
        return NULL;
    return (uint8_t *)base + off;
}

/* The descriptor is taken before anything is checked, so that a refused
 * request leaves none behind for later ones. */
int remote_be_hostmem_share(struct gvs_call *call,
                            const struct gvs_remote_pinner *pn)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t from;
    uint64_t at, addr, size, dev = 0;
    apigen_get_u32(&c, &from);
    apigen_get_u64(&c, &at);
    apigen_get_u64(&c, &addr);
    apigen_get_u64(&c, &size);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (from != GVS_REMOTE_SHARE_FD && from != GVS_REMOTE_SHARE_AREA)
        return GVS_E_PROTO;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    int fd = -1;
    void *area = NULL;
    int rc = GVS_E_NOTSUP;
    if (from == GVS_REMOTE_SHARE_FD && host != NULL && host->recv_fd != NULL)
        rc = host->recv_fd(session, at, &fd);
    if (rc < 0 && rc != GVS_E_NOTSUP)
        return rc;
    int32_t e = from == GVS_REMOTE_SHARE_FD && rc < 0 ? pn->notsup
                                                      : pn->enter(call);
    if (e == pn->success &&
        (size == 0 || addr + size < addr || addr % page != 0))
        e = pn->invalid;
    if (e == pn->success && from == GVS_REMOTE_SHARE_AREA &&
        (area = in_area(at, size, page)) == NULL)
        e = pn->invalid;
    if (e == pn->success)
        e = share(pn, fd, area, addr, size, &dev);
    if (fd >= 0)
        close(fd);
    apigen_put_i32(&c, e);
    if (e == pn->success)
        apigen_put_u64(&c, dev);
    return c.rc;
}

static void release(struct region *r)
{
    r->pinner->unpin(r->p, r->size);
    if (r->mapped)
        munmap(r->p, r->size);
    gvs_free(r);
}

int remote_be_hostmem_unshare(struct gvs_call *call,
                              const struct gvs_remote_pinner *pn)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t addr;
    apigen_get_u64(&c, &addr);
    if (apigen_end(&c) < 0)
        return c.rc;
    int32_t e = pn->enter(call);
    pthread_rwlock_wrlock(&lock);
    struct region *r = gvs_u64map_remove(&regions, addr);
    if (r != NULL)
        shared_bytes -= r->size;
    pthread_rwlock_unlock(&lock);
    if (r == NULL) {
        apigen_put_i32(&c, pn->invalid);
        return c.rc;
    }
    /* As cudaFreeHost and cuMemFreeHost: no copy may still use the pages
     * once they go. */
    int32_t sync = pn->sync(call);
    release(r);
    apigen_put_i32(&c, e != pn->success ? e : sync);
    return c.rc;
}

/* The client's word at addr, in a shared region, or NULL; *dev its
 * device address (0 when the region has none). */
static _Atomic uint32_t *word_at(uint64_t addr, uint64_t *dev)
{
    uint64_t base;
    pthread_rwlock_rdlock(&lock);
    struct region *r = addr % 4 == 0 ? containing(addr, 4, &base) : NULL;
    _Atomic uint32_t *word =
        r != NULL ? (_Atomic uint32_t *)((uint8_t *)r->p + (addr - base))
                  : NULL;
    *dev = r != NULL && r->dev != 0 ? r->dev + (addr - base) : 0;
    pthread_rwlock_unlock(&lock);
    return word;
}

struct store {
    _Atomic uint32_t *word;
    uint32_t value;
};

/* On CUDA's callback thread: no CUDA call. */
static void store_word(void *arg)
{
    struct store *st = arg;
    atomic_store_explicit(st->word, st->value, memory_order_release);
    gvs_free(st);
}

/* Writes value into the client's word at addr once the stream has passed
 * the copy (copied: it went on the stream), the GPU's way if the region
 * has a device address, else a host function's; at once when nothing is
 * on the stream to wait for, or when neither way could be enqueued (the
 * context failed: nothing more runs on it).  A word in no region is not
 * written: the client then waits for the stream (remote_be.h, SIGNAL).
 * The region stays mapped meanwhile: unsharing synchronizes the device
 * first. */
static void signal_word(struct gvs_call *call,
                        const struct gvs_remote_pinner *pn, uint64_t stream,
                        uint64_t addr, uint32_t value, int copied)
{
    uint64_t dev;
    _Atomic uint32_t *word = word_at(addr, &dev);
    if (word == NULL)
        return;
    if (copied && dev != 0 && pn->signal(call, stream, dev, value) ==
                                  pn->success)
        return;
    struct store *st = copied ? gvs_malloc(sizeof(*st)) : NULL;
    if (st != NULL) {
        *st = (struct store){word, value};
        if (pn->host_func(call, stream, store_word, st) == pn->success)
            return;
        gvs_free(st);
    } else if (copied) {
        (void)pn->sync(call);
    }
    atomic_store_explicit(word, value, memory_order_release);
}

/* A posted copy's signal held back (remote_be.h, shared_flush): the
 * client packs the small copies of one thread and stream into one
 * staging slot, each naming the slot's word (frontend/staging.c), and
 * the next such copy's signal, behind both copies on the stream, makes
 * this one's needless: a run of them costs one GPU write instead of one
 * each (1-2 us, as much as the copy).  The next copy of shared memory
 * of the same API and context enqueues the held signal otherwise, from
 * that context (its lane entered first); a copy of another context
 * leaves it held and signals its own at once.  What destroys streams or
 * begins a capture takes it first whatever its context (remote_be.h,
 * shared_flush): from its own, enqueued; from another, its stream waited
 * for and the word stored, so that no stream is written from a context
 * not its own.  Only on a stream the program created: a default
 * stream's handle means another stream in another lane or context, and
 * none is held during a capture (nothing is posted then, and beginning
 * one takes it).  One for the session. */
struct held {
    const struct gvs_remote_pinner *pn; /* NULL: none held */
    uint64_t stream, word;
    uintptr_t context;
    uint32_t value;
    int copied;
};
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held held;

static int holdable(uint64_t stream)
{
    return stream > 2; /* not the legacy or a per-thread default stream */
}

static uintptr_t context_of(struct gvs_call *call,
                            const struct gvs_remote_pinner *pn)
{
    return pn->context_key != NULL ? pn->context_key(call) : 0;
}

/* Takes the held signal when a call of now's API and context may
 * enqueue it, or any when flushing (whose caller entered its lane): 1
 * when next, the one about to be enqueued, replaces it (same stream and
 * word: dropped), else 0 once it is enqueued or stored, or when none
 * was taken. */
static int release_held(struct gvs_call *call, const struct held *now,
                        const struct held *next, int flushing)
{
    pthread_mutex_lock(&held_lock);
    struct held h = held;
    int own = h.pn == now->pn && h.context == now->context;
    if (h.pn != NULL && (own || flushing))
        held.pn = NULL;
    else
        h.pn = NULL;
    pthread_mutex_unlock(&held_lock);
    if (h.pn == NULL)
        return 0;
    if (next != NULL && h.stream == next->stream && h.word == next->word)
        return 1;
    if (!own && h.copied)
        (void)h.pn->copy(call, h.stream,
                         GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT,
                         1, 0, NULL, 0);
    else if (!flushing)
        (void)h.pn->enter(call);
    signal_word(call, h.pn, h.stream, h.word, h.value, h.copied && own);
    return 0;
}

/* The signal of the last copy of this thread's that joined its open
 * batch (batch.c), whose write must follow the batch onto the stream:
 * remote_be_shared_batched takes it then.  Each copy that joins after it
 * names the same word and stream (another goes once the batch did) and
 * replaces it. */
static __thread struct held tail;

/* Holds next unless another context's signal is held: 1 when it did. */
static int hold(const struct held *next)
{
    pthread_mutex_lock(&held_lock);
    int free = held.pn == NULL;
    if (free)
        held = *next;
    pthread_mutex_unlock(&held_lock);
    return free;
}

void remote_be_shared_batched(struct gvs_call *call)
{
    struct held t = tail;
    if (t.pn == NULL)
        return;
    tail.pn = NULL;
    if (remote_be_latched(call, t.pn->plugin))
        t.value |= GVS_REMOTE_SIGNAL_ASK;
    /* A signal held of the same word is older: dropped, lest it be
     * written after this one (by the next copy of another word) and the
     * word end at a value the client no longer waits for. */
    (void)release_held(call, &t, &t, 0);
    if (!hold(&t))
        signal_word(call, t.pn, t.stream, t.word, t.value, 1);
}

void remote_be_shared_flush(struct gvs_call *call,
                            const struct gvs_remote_pinner *pn)
{
    struct held now = {pn, 0, 0, context_of(call, pn), 0, 0};
    (void)release_held(call, &now, NULL, 1);
}

/* The device output CUDA wrote by the end of a STORE copy's wait goes
 * first; whether any was written since the last STORE: the client then
 * asks, and the reply follows the output (remote_be.h, STORE). */
static int output_written(void)
{
    static _Atomic uint64_t told;
    remote_be_output_flush();
    uint64_t w = remote_be_output_writes();
    return atomic_exchange(&told, w) != w;
}

/* Swaps that cannot fail for a client that only polls: a word changing
 * under every one is the client's doing, answered by the reply. */
#define STORE_TRIES 64

/* Puts v into the client's word at addr, a STORE's whose value is
 * value: 1, or 0 when the word is in no region or the client gave up
 * polling (SIGNAL_GAVE_UP) first: the reply then answers. */
static int swap_in(uint64_t addr, uint32_t value, uint32_t v)
{
    uint64_t unused;
    _Atomic uint32_t *w = word_at(addr, &unused);
    if (w == NULL)
        return 0;
    uint32_t old = atomic_load_explicit(w, memory_order_relaxed);
    for (int i = 0; i < STORE_TRIES; i++) {
        if (old == (value | GVS_REMOTE_SIGNAL_GAVE_UP))
            return 0;
        if (atomic_compare_exchange_weak_explicit(w, &old, v,
                                                  memory_order_release,
                                                  memory_order_relaxed))
            return 1;
    }
    return 0;
}

/* Stores a STORE copy's value: 1 when the client learns the outcome
 * there and no reply is due; 0 when the reply answers (remote_be.h,
 * STORE): the value asks, or swap_in could not. */
static int store_outcome(uint64_t addr, uint32_t value, int ask)
{
    return swap_in(addr, value, ask ? value | GVS_REMOTE_SIGNAL_ASK : value) &&
           !ask;
}

/* The legacy stream's wire handle in both APIs: 0, or cudaStreamLegacy
 * and CU_STREAM_LEGACY, which are 1. */
static int is_legacy(uint64_t stream)
{
    return stream == 0 || stream == 1;
}

/* Marks a STORE copy enqueued with the GPU's write to come (SIGNAL_GPU):
 * 1, or 0 when swap_in could not: the copy then goes as any STORE. */
static int mark_gpu(uint64_t addr, uint32_t value)
{
    return swap_in(addr, value, value | GVS_REMOTE_SIGNAL_GPU);
}

/* The request's flags, after its u64 stream, read in place. */
int remote_be_shared_may_wait(const struct gvs_buf *in, uint32_t lane,
                              uint16_t plugin)
{
    const uint8_t *p = gvs_buf_ptr(in);
    if (gvs_buf_len(in) < 12)
        return 1;
    uint32_t flags = (uint32_t)p[8] | (uint32_t)p[9] << 8 |
                     (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
    struct gvs_call call = {.lane = lane};
    return flags != (GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT |
                     GVS_REMOTE_SHARED_STORE) ||
           !remote_be_quiet() || remote_be_latched(&call, plugin);
}

int remote_be_memcpy_shared(struct gvs_call *call,
                            const struct gvs_remote_pinner *pn)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t stream, dev, addr, len, word = 0;
    uint32_t flags, kind, value = 0;
    apigen_get_u64(&c, &stream);
    apigen_get_u32(&c, &flags);
    apigen_get_u32(&c, &kind);
    apigen_get_u64(&c, &dev);
    apigen_get_u64(&c, &addr);
    apigen_get_u64(&c, &len);
    if (c.rc == 0 &&
        (flags & (GVS_REMOTE_SHARED_SIGNAL | GVS_REMOTE_SHARED_STORE))) {
        apigen_get_u64(&c, &word);
        apigen_get_u32(&c, &value);
    }
    int bad = apigen_end(&c) < 0;
    /* Only a plain posted copy, or one whose signal may be held, joins
     * the copies batched before it (and only through pn->copy), the
     * latter when the batch's signal, if any, names its word and stream:
     * anything else follows them on the stream. */
    int plain = !bad && call->noreply && flags == GVS_REMOTE_SHARED_ON_STREAM;
    struct held next = {pn, stream, word, context_of(call, pn), 0, 0};
    int holds = !bad && call->noreply && holdable(stream) &&
                flags == (GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_SIGNAL);
    int joins = plain || (holds && (tail.pn == NULL ||
                                    (tail.pn == pn && tail.stream == stream &&
                                     tail.word == word)));
    if (!joins)
        remote_be_batch_flush(call);
    int replaces = release_held(call, &next, holds ? &next : NULL, 0);
    if (bad)
        return c.rc;
    /* A posted copy is stream-ordered and waits for nothing: it may run
     * on the session's reader, which must never block.  A signal says
     * when a stream-ordered copy is done: it replaces waiting.  A store
     * comes after the wait, which only a copy with a reply may do. */
    if (flags & ~(uint32_t)(GVS_REMOTE_SHARED_ON_STREAM |
                            GVS_REMOTE_SHARED_WAIT | GVS_REMOTE_SHARED_SIGNAL |
                            GVS_REMOTE_SHARED_STORE))
        return GVS_E_PROTO;
    uint32_t signal = flags & GVS_REMOTE_SHARED_SIGNAL;
    uint32_t store = flags & GVS_REMOTE_SHARED_STORE;
    const uint32_t on = GVS_REMOTE_SHARED_ON_STREAM;
    const uint32_t mine = GVS_REMOTE_SIGNAL_ASK | GVS_REMOTE_SIGNAL_GAVE_UP |
                          GVS_REMOTE_SIGNAL_GPU;
    if (signal ? flags != (on | signal)
        : store ? call->noreply ||
                      flags != (on | GVS_REMOTE_SHARED_WAIT | store) ||
                      (value & mine) != 0
                : call->noreply && flags != on)
        return GVS_E_PROTO;
    /* A store that no device output can still come before, with no
     * failure latched to answer, is answered by the GPU's write behind
     * the copy: the worker does not wait (remote_be.h, STORE). */
    int gpu = store && remote_be_quiet() &&
              !remote_be_latched(call, pn->plugin);
    uint64_t begin = remote_be_settle_begin();
    int32_t e = pn->direction;
    if (kind == GVS_REMOTE_SHARED_H2D || kind == GVS_REMOTE_SHARED_D2H) {
        uint64_t base;
        int h2d = kind == GVS_REMOTE_SHARED_H2D;
        pthread_rwlock_rdlock(&lock);
        struct region *r = containing(addr, len ? len : 1, &base);
        void *host = r != NULL ? (uint8_t *)r->p + (addr - base) : NULL;
        uint32_t how = gpu     ? on
                       : joins ? on | GVS_REMOTE_SHARED_BATCH
                               : flags & ~(signal | store);
        /* The GPU reads the region at the worker's address: an ordered
         * batch's kernel may read it (batch.c). */
        int mapped = h2d && r != NULL && r->dev == (uint64_t)(uintptr_t)r->p;
        if (mapped)
            remote_be_batch_source_mapped((uint64_t)(uintptr_t)host, len);
        e = r == NULL ? pn->invalid
                      : pn->copy(call, stream, how, h2d, dev, host, len);
        if (mapped)
            remote_be_batch_source_mapped(0, 0);
        /* The client gave up polling before the mark: it waits for the
         * reply, which comes after the wait, as a STORE's. */
        if (gpu && e == pn->success && !(gpu = mark_gpu(word, value)))
            e = pn->copy(call, stream, on | GVS_REMOTE_SHARED_WAIT, h2d, 0,
                         host, 0);
        pthread_rwlock_unlock(&lock);
    }
    /* Posted: the failure is the lane's next synchronizing call's, as a
     * posted op's. */
    int copied = e == pn->success;
    if (!copied || !call->next_same)
        remote_be_batch_flush(call);
    if (call->noreply && !copied) {
        remote_be_latch(call, pn->plugin, e);
        e = pn->success;
    }
    /* A client waiting for the word learns so that a failure, its own or
     * latched (the reply answers either), or output waits for it. */
    int ask = !copied || remote_be_latched(call, pn->plugin);
    /* A signal that replaces a held one follows that one's copy on the
     * stream, enqueued: it waits for it even where its own copy failed. */
    if (signal) {
        next.value = ask ? value | GVS_REMOTE_SIGNAL_ASK : value;
        next.copied = copied || replaces;
        if (holds && copied && remote_be_batch_open()) {
            /* The copy waits in the batch: its write follows it. */
            tail = next;
        } else {
            /* A batch that went with this copy left its signal of the
             * same word held: this one, behind it, replaces it. */
            if (holds)
                (void)release_held(call, &next, &next, 0);
            if (!holds || !hold(&next))
                signal_word(call, pn, stream, word, next.value, next.copied);
        }
    }
    if (store && gpu && copied) {
        signal_word(call, pn, stream, word, value, 1);
        call->answered = 1;
    } else if (store) {
        /* Flushed whatever ask says: the settling below counts on it. */
        int out = output_written();
        call->answered = store_outcome(word, value, ask || out);
        if (copied && is_legacy(stream) && pn->context_key != NULL)
            remote_be_settled_legacy(pn->context_key(call), begin);
    }
    apigen_put_i32(&c, e);
    return c.rc;
}

void *remote_be_shared_host(uint64_t p, uint64_t len)
{
    uint64_t base;
    pthread_rwlock_rdlock(&lock);
    struct region *r = len > 0 ? containing(p, len, &base) : NULL;
    void *w = r != NULL ? (uint8_t *)r->p + (p - base) : NULL;
    pthread_rwlock_unlock(&lock);
    return w;
}

/* A scan: regions are few. */
uint64_t remote_be_shared_client(const void *w)
{
    uint64_t client = 0;
    const uint8_t *p = w;
    pthread_rwlock_rdlock(&lock);
    for (size_t i = 0; i < regions.n && client == 0; i++) {
        const struct region *r = regions.e[i].val;
        const uint8_t *start = r->p;
        if (p >= start && (uint64_t)(p - start) < r->size)
            client = regions.e[i].key + (uint64_t)(p - start);
    }
    pthread_rwlock_unlock(&lock);
    return client;
}

/* A scan: regions are few, and keyed by the client's address. */
int remote_be_shared_device_has(uint64_t p, uint64_t len)
{
    int has = 0;
    pthread_rwlock_rdlock(&lock);
    for (size_t i = 0; i < regions.n && !has; i++) {
        const struct region *r = regions.e[i].val;
        has = r->dev != 0 && p >= r->dev && p - r->dev < r->size &&
              len <= r->size - (p - r->dev);
    }
    pthread_rwlock_unlock(&lock);
    return has;
}

void remote_be_shared_release(const struct gvs_remote_pinner *pn)
{
    pthread_rwlock_wrlock(&lock);
    for (size_t i = 0; i < regions.n;) {
        struct region *r = regions.e[i].val;
        if (r->pinner != pn) {
            i++;
            continue;
        }
        shared_bytes -= r->size;
        gvs_u64map_remove(&regions, regions.e[i].key);
        release(r);
    }
    pthread_rwlock_unlock(&lock);
}
