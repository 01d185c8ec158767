/*
 * The runtime's side of graph copy nodes of host memory the worker
 * cannot reach (the layer's frontend/ghost.c keeps them and moves their
 * bytes at each launch): which side of a cudaMemcpy3DParms is such
 * memory and whether it is one span, and the runtime calls the layer
 * makes (device memory, stream-ordered copies, events).  Streams cross
 * the layer as handles; a per-thread launch's default stream is
 * cudaStreamPerThread.
 */
#include "graphs.h"

#include "gvs_remote.h"
#include "mem3d.h"
#include "shared.h"
#include "streams.h"

static int32_t alloc(uint64_t *dev, size_t n)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, n);
    *dev = (uint64_t)(uintptr_t)p;
    return e;
}

static void release(uint64_t dev)
{
    (void)cudaFree((void *)(uintptr_t)dev);
}

static cudaStream_t stream_of(uint64_t s)
{
    return (cudaStream_t)(uintptr_t)s;
}

static int32_t to_dev(uint64_t dev, const void *host, size_t n, uint64_t s)
{
    return fe_copy_async((void *)(uintptr_t)dev, host, n,
                         cudaMemcpyHostToDevice, stream_of(s), 0);
}

/* Posted where the backend can, else the ordinary stream-ordered copy
 * (for pageable memory it returns once done, as a copy to it does). */
static int32_t to_host(void *host, uint64_t dev, size_t n, uint64_t s)
{
    int32_t r;
    if (gvs_remote_posted_d2h(&fe_shared, fe_stream_wire(stream_of(s), 0),
                              dev, host, n, &r))
        return r;
    return fe_copy_async(host, (void *)(uintptr_t)dev, n,
                         cudaMemcpyDeviceToHost, stream_of(s), 0);
}

static int32_t event_new(uint64_t *ev)
{
    cudaEvent_t e = NULL;
    cudaError_t r = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    *ev = (uint64_t)(uintptr_t)e;
    return r;
}

static void event_free(uint64_t ev)
{
    (void)cudaEventDestroy((cudaEvent_t)(uintptr_t)ev);
}

static int32_t record(uint64_t ev, uint64_t s)
{
    return cudaEventRecord((cudaEvent_t)(uintptr_t)ev, stream_of(s));
}

static int32_t wait(uint64_t s, uint64_t ev)
{
    return cudaStreamWaitEvent(stream_of(s), (cudaEvent_t)(uintptr_t)ev, 0);
}

static const struct gvs_remote_ghost_api ghost_api = {
    cudaSuccess, cudaErrorNotSupported, cudaErrorMemoryAllocation,
    alloc, release, to_dev, to_host, event_new, event_free, record, wait,
};

/* The span of a host side over box: one run of bytes, or 0. */
static size_t one_span(const struct fe_side *s, const struct fe_box *b,
                       uint64_t *start)
{
    if (b->w == 0 || b->h == 0 || b->d == 0)
        return 0;
    int rows_follow = b->h == 1 || s->pitch == b->w;
    int slices_follow = b->d == 1 || (s->pitch == b->w && s->ysize == b->h);
    if (!rows_follow || !slices_follow)
        return 0;
    uint64_t off = ((s->z * s->ysize) + s->y) * s->pitch + s->x;
    uint64_t span = b->w * b->h * b->d;
    if (span / b->d / b->h != b->w || off + span < off)
        return 0;
    *start = s->addr + off;
    return (size_t)span;
}

/* Whether a host side is the program's own memory, which the worker
 * cannot reach (not shared with it). */
static int unreached(const struct fe_side *s)
{
    return s->kind == FE_SIDE_HOST &&
           !gvs_remote_host_shared((const void *)(uintptr_t)s->addr, 1);
}

/* The device memory prepared for this thread's request, its side. */
static _Thread_local uint64_t prepared;
static _Thread_local int prepared_to_dev;

cudaError_t fe_ghost_prepare(const struct cudaMemcpy3DParms *p)
{
    struct fe_side dst, src;
    struct fe_box box;
    int dst_host = 0, src_host = 0;
    prepared = 0;
    if (p != NULL && fe_copy3d_params(p, &dst, &src, &box) == cudaSuccess) {
        dst_host = unreached(&dst);
        src_host = unreached(&src);
    }
    if (!dst_host && !src_host)
        return cudaSuccess;
    if (dst_host && src_host)
        return cudaErrorNotSupported;
    uint64_t start = 0;
    size_t span = one_span(src_host ? &src : &dst, &box, &start);
    prepared_to_dev = src_host;
    return (cudaError_t)gvs_remote_ghost_prepare(
        &ghost_api, (void *)(uintptr_t)start, span, src_host, p, sizeof(*p),
        &prepared);
}

cudaError_t fe_ghost_side(struct fe_side *host, const struct fe_box *box,
                          int to_dev)
{
    if (prepared == 0 || prepared_to_dev != to_dev)
        return cudaErrorNotSupported;
    *host = (struct fe_side){FE_SIDE_DEVICE, prepared, box->w, box->h, 0, 0, 0};
    return cudaSuccess;
}

void fe_ghost_done(uint64_t owner, uint64_t node, int exec, cudaError_t e)
{
    prepared = 0;
    gvs_remote_ghost_done(owner, node, exec, e == cudaSuccess);
}

int fe_ghost_params(uint64_t node, struct cudaMemcpy3DParms *out)
{
    return gvs_remote_ghost_params(node, out, sizeof(*out));
}

cudaError_t fe_ghost_launch(uint64_t exec, cudaStream_t stream, int per_thread,
                            int32_t (*launch)(uint64_t exec, uint64_t stream))
{
    cudaStream_t st = per_thread && stream == NULL ? cudaStreamPerThread
                                                   : stream;
    return (cudaError_t)gvs_remote_ghost_launch(
        &ghost_api, exec, (uint64_t)(uintptr_t)st, launch);
}
