/*
 * Posted copies put on a stream together (remote_be.h, copy_posted).  A
 * client that posts copies faster than the worker makes them (small
 * copies between page-locked memory and the device, device-to-device
 * copies) is held to the worker's pace: the driver's call per copy and
 * the worker's own work around it.  The driver's batch copy takes a
 * copy for less than half of what a call of its own does (H200, driver
 * 580: 0.83 us a copy of 4 KiB in batches of 16, 2.19 us alone; from
 * 5.25 to 4.59 us for device-to-device copies, which the GPU's engine
 * bounds), so while gvsd says the lane's next request is another such
 * copy (gvs_call.next_same), a copy joins the thread's open batch
 * instead of going on the stream, and the batch goes there as one call
 * when the run ends, the batch is full, or the next copy cannot join.
 *
 * The copies of a batch may run in any order, even at once: a copy
 * joins only when it is independent of every copy in the batch (its
 * destination touches no other's source or destination, nor its source
 * another's destination) or the very same copy again, whose order does
 * not matter.  A batch whose call fails is made one copy at a time, as
 * the copies would have been, each failure latched as a posted copy's
 * is: the batch call changes nothing it refuses.  A stream that cannot
 * take a batch (the legacy stream, a capturing one: a batch has no graph
 * node) has its copies made one by one.
 *
 * Copies between device memory go to the layer's copy kernel instead
 * where it reaches both ranges (copy_kernel.c): a batch as one launch,
 * which costs the worker less than the driver's batch call, a copy
 * alone as one launch too, up to REMOTE_BE_KERNEL_COPY_MAX; on the
 * legacy stream as well, whose batches only the kernel makes.  A launch
 * that fails leaves the copies to the driver's calls, whose failures are
 * the ones latched.
 *
 * A copy that depends on the batch's (the same destination from
 * another source, say: a program's loop of copies into one buffer)
 * joins it all the same where the kernel makes every copy of the batch
 * and each is at most ORDERED_MAX long: the batch is then made by one
 * block of the kernel, copy after copy, in the order sent.  Natively a
 * run of such copies costs the driver's call each (2.6-3.2 us for 4-8
 * KiB from page-locked or pageable memory, H200, driver 580); one block
 * makes 16 of them from page-locked memory in 1.7-1.9 us each, and the
 * worker launches it once.  Only there does the kernel read host memory
 * (a shared region's, which the GPU reads at the worker's own address:
 * shared.c says so for the copy at hand, remote_be_batch_source_mapped);
 * independent copies from host memory stay on the copy engines, which a
 * program's kernels holding every SM do not hold up.
 *
 * A copy whose completion a shared region's word is to report (shared.c)
 * has that write follow the batch: remote_be_shared_batched takes it once
 * the batch is on its stream.
 */
#include "state.h"

/* Copies up to this size join a batch the driver may make.  The batch
 * pays where the driver's call, not the copy, sets the pace
 * (device-to-device copies stay near 5 us each up to about 1 MiB); the
 * driver may run a batch's copies at once, which large device-to-device
 * ones, bound by memory, take worse than one after the other (16-128
 * MiB: 81-93% of native batched, 96-100% alone, H200).  A batch the
 * copy kernel makes takes copies up to REMOTE_BE_KERNEL_COPY_MAX: one
 * launch (3.2 us of the worker's) for 16 copies of 2 MiB, which the GPU
 * makes in about 1 us each. */
#define BATCH_LEN ((uint64_t)1 << 20)

/* The longest copy of an ordered batch.  Natively one block copies 16
 * KiB from page-locked memory in 1.8-1.9 us, against 3.0 for the
 * driver's copy (H200); through gvs, runs of copies of 32 and 64 KiB
 * into one buffer went at 87-109% and 131-162% of native this way,
 * against 126% and 191% by the driver's copy each. */
#define ORDERED_MAX ((uint64_t)16 << 10)

struct open_batch {
    const struct gvs_remote_batcher *b;
    void *stream;
    /* The copy kernel's entry points and the stream's context, where
     * the kernel may make copies on the stream (copy_kernel.c), and
     * whether it may make every copy of the batch. */
    const struct gvs_remote_copy_driver *d;
    CUcontext ctx;
    int kernel;
    /* Whether a copy of the batch is longer than BATCH_LEN: then only
     * the kernel makes it a batch. */
    int big;
    /* Whether a copy reads host memory (the kernel then makes the batch
     * only when it is ordered), whether one of those was taken on trust
     * (its destination not yet asked about: an unordered batch does not
     * need the kernel to reach it), whether a copy depends on another
     * (ordered: only the kernel's one block makes it), the longest copy,
     * and the allocation [seen, seen_end) last found in the stream's
     * context. */
    int host, trusted, ordered;
    uint64_t most, seen, seen_end;
    size_t n;
    unsigned long long dst[GVS_REMOTE_BATCH_MAX], src[GVS_REMOTE_BATCH_MAX];
    size_t size[GVS_REMOTE_BATCH_MAX];
    int kind[GVS_REMOTE_BATCH_MAX];
};

static __thread struct open_batch pending;

/* The next copy's source, where shared.c said the GPU reads it there. */
static __thread struct {
    uint64_t src, len;
} mapped;

void remote_be_batch_source_mapped(uint64_t src, uint64_t len)
{
    mapped.src = src;
    mapped.len = len;
}

int remote_be_batch_open(void)
{
    return pending.n > 0;
}

static int overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

/* Whether the copy may run in any order with every copy of the batch. */
static int independent(const struct open_batch *o, uint64_t dst,
                       uint64_t src, size_t len)
{
    for (size_t i = 0; i < o->n; i++) {
        if (o->dst[i] == dst && o->src[i] == src && o->size[i] == len)
            continue;
        if (overlap(dst, len, o->dst[i], o->size[i]) ||
            overlap(dst, len, o->src[i], o->size[i]) ||
            overlap(src, len, o->dst[i], o->size[i]))
            return 0;
    }
    return 1;
}

/* The copy kernel's entry points where it may make copies on stream now,
 * with the stream's context in *ctx: not while the stream is captured (a
 * launch would be a kernel node of the graph, not a copy node); the
 * legacy stream, NULL, is never captured.  The open batch's answer for
 * its own stream. */
static const struct gvs_remote_copy_driver *
kernel_for(const struct gvs_remote_batcher *b, void *stream, int mapped,
           CUcontext *ctx)
{
    const struct open_batch *o = &pending;
    if (o->n > 0 && o->b == b && o->stream == stream) {
        *ctx = o->ctx;
        return o->d;
    }
    *ctx = NULL;
    const struct gvs_remote_copy_driver *d = remote_be_copy_driver(b, mapped);
    if (d == NULL || (stream != NULL && !b->batchable(stream)))
        return NULL;
    *ctx = remote_be_copy_context(d, stream);
    return *ctx != NULL ? d : NULL;
}

/* Whether the kernel reaches [dst, dst + len) in the batch's context,
 * asking the driver only outside the allocation last found there. */
static int reaches(struct open_batch *o, uint64_t dst, uint64_t len)
{
    if (o->seen != 0 && dst >= o->seen && dst <= o->seen_end &&
        len <= o->seen_end - dst)
        return 1;
    uint64_t start = 0, end = 0;
    if (!remote_be_kernel_reaches(o->d, o->ctx, dst, len, &start, &end))
        return 0;
    o->seen = start;
    o->seen_end = end;
    return 1;
}

/* Whether the kernel reaches the destination of every copy of the batch
 * and of the one from host memory (host) about to join it: the
 * destinations of copies from host memory taken on trust are asked
 * about now, once. */
static int reaches_all(struct open_batch *o, int host, uint64_t dst,
                       uint64_t len)
{
    if (o->trusted) {
        if (o->d == NULL) {
            const struct gvs_remote_copy_driver *d =
                remote_be_copy_driver(o->b, 1);
            CUcontext ctx = NULL;
            if (d == NULL ||
                (o->stream != NULL && !o->b->batchable(o->stream)) ||
                (ctx = remote_be_copy_context(d, o->stream)) == NULL)
                return 0;
            o->d = d;
            o->ctx = ctx;
        }
        for (size_t i = 0; i < o->n; i++)
            if (!reaches(o, o->dst[i], o->size[i]))
                return 0;
        o->trusted = 0;
    }
    return !host || (o->d != NULL && reaches(o, dst, len));
}

/* One copy made as a posted one is: a failure is latched. */
static void copy_one(struct gvs_call *call, const struct gvs_remote_batcher *b,
                     void *stream, uint64_t dst, uint64_t src, size_t len,
                     int kind)
{
    int32_t e = b->copy(stream, dst, src, len, kind);
    if (e != b->success)
        remote_be_latch(call, b->plugin, e);
}

void remote_be_batch_flush(struct gvs_call *call)
{
    struct open_batch *o = &pending;
    if (o->n == 0)
        return;
    const struct gvs_remote_batcher *b = o->b;
    int done = o->kernel && (o->ordered || !o->host) &&
               remote_be_kernel_copies(o->d, o->stream, o->dst, o->src,
                                       o->size, o->n, o->ordered) == 0;
    if (!done && !o->ordered && o->n > 1 && o->stream != NULL &&
        b->batchable(o->stream))
        done = b->copy_batch(o->stream, o->dst, o->src, o->size, o->n) ==
               b->success;
    if (!done)
        for (size_t i = 0; i < o->n; i++)
            copy_one(call, b, o->stream, o->dst[i], o->src[i], o->size[i],
                     o->kind[i]);
    o->n = 0;
    remote_be_shared_batched(call);
}

int32_t remote_be_copy_posted(struct gvs_call *call,
                              const struct gvs_remote_batcher *b, void *stream,
                              uint64_t dst, uint64_t src, uint64_t len,
                              int kind)
{
    struct open_batch *o = &pending;
    int apart = len > 0 && !overlap(dst, len, src, len);
    int small = apart && len <= BATCH_LEN;
    int host = apart && len <= ORDERED_MAX && mapped.len == len &&
               mapped.src == src && b->mapped_driver != NULL;
    CUcontext ctx = NULL;
    const struct gvs_remote_copy_driver *d =
        apart && !host && len <= REMOTE_BE_KERNEL_COPY_MAX && b->driver != NULL
            ? kernel_for(b, stream, 0, &ctx)
            : NULL;
    /* A copy from host memory is taken on trust until a batch has to be
     * ordered (reaches_all). */
    int k = host || (d != NULL &&
                     remote_be_kernel_copyable(d, ctx, dst, src, len, 0));
    /* The legacy stream takes no batch of the driver's. */
    int joins = call->noreply && (k || (small && stream != NULL));
    int dep = o->n > 0 && !independent(o, dst, src, (size_t)len);
    int in_order = k && o->kernel && len <= ORDERED_MAX &&
                   o->most <= ORDERED_MAX && o->b == b && o->stream == stream;
    int checked = 0;
    if (o->n > 0 && in_order && (dep || o->ordered) && (host || o->trusted))
        checked = in_order = reaches_all(o, host, dst, len);
    if (o->n > 0 && (!joins || o->b != b || o->stream != stream ||
                     (o->big && !k) || (!small && !o->kernel) ||
                     (o->ordered && !in_order) || (dep && !in_order)))
        remote_be_batch_flush(call);
    if (!joins || (o->n == 0 && !call->next_same)) {
        unsigned long long d1 = dst, s1 = src;
        size_t n1 = (size_t)len;
        if (k && !host &&
            remote_be_kernel_copies(d, stream, &d1, &s1, &n1, 1, 0) == 0)
            return b->success;
        return b->copy(stream, dst, src, len, kind);
    }
    if (o->n == 0) {
        o->b = b;
        o->stream = stream;
        o->d = d;
        o->ctx = ctx;
        o->kernel = 1;
        o->big = 0;
        o->host = 0;
        o->trusted = 0;
        o->ordered = 0;
        o->most = 0;
        o->seen = 0;
    }
    o->kernel = o->kernel && k;
    o->big = o->big || !small;
    o->host = o->host || host;
    o->trusted = o->trusted || (host && !checked);
    o->ordered = o->ordered || (o->n > 0 && dep);
    o->most = len > o->most ? len : o->most;
    o->dst[o->n] = dst;
    o->src[o->n] = src;
    o->size[o->n] = (size_t)len;
    o->kind[o->n] = kind;
    if (++o->n == GVS_REMOTE_BATCH_MAX || !call->next_same)
        remote_be_batch_flush(call);
    return b->success;
}
