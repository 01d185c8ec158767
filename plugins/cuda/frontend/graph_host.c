/*
 * The driver's side of graph copy nodes of host memory the worker cannot
 * reach (the layer's frontend/ghost.c keeps them and moves their bytes at
 * each launch): which side of a CUDA_MEMCPY3D is such memory and whether
 * it is one span, and the driver calls the layer makes (device memory,
 * stream-ordered copies, events).  Streams cross the layer as handles; a
 * per-thread launch's default stream is CU_STREAM_PER_THREAD.
 */
#include "graph.h"

#include "gvs_remote.h"

static int32_t alloc(uint64_t *dev, size_t n)
{
    CUdeviceptr p = 0;
    CUresult r = cuMemAlloc_v2(&p, n);
    *dev = p;
    return r;
}

static void release(uint64_t dev)
{
    (void)cuMemFree_v2(dev);
}

static CUstream stream_of(uint64_t s)
{
    return (CUstream)(uintptr_t)s;
}

static int32_t to_dev(uint64_t dev, const void *host, size_t n, uint64_t s)
{
    return cuMemcpyHtoDAsync_v2(dev, host, n, stream_of(s));
}

/* Posted where the backend can, else the ordinary stream-ordered copy
 * (for pageable memory it returns once done, as a copy to it does). */
static int32_t to_host(void *host, uint64_t dev, size_t n, uint64_t s)
{
    int32_t r;
    if (gvs_remote_posted_d2h(&cuda_fe_shared, cuda_fe_stream_wire(stream_of(s), 0),
                              dev, host, n, &r))
        return r;
    return cuMemcpyDtoHAsync_v2(host, dev, n, stream_of(s));
}

static int32_t event_new(uint64_t *ev)
{
    CUevent e = NULL;
    CUresult r = cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    *ev = (uint64_t)(uintptr_t)e;
    return r;
}

static void event_free(uint64_t ev)
{
    (void)cuEventDestroy_v2((CUevent)(uintptr_t)ev);
}

static int32_t record(uint64_t ev, uint64_t s)
{
    return cuEventRecord((CUevent)(uintptr_t)ev, stream_of(s));
}

static int32_t wait(uint64_t s, uint64_t ev)
{
    return cuStreamWaitEvent(stream_of(s), (CUevent)(uintptr_t)ev, 0);
}

static const struct gvs_remote_ghost_api ghost_api = {
    CUDA_SUCCESS, CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_OUT_OF_MEMORY,
    alloc, release, to_dev, to_host, event_new, event_free, record, wait,
};

/* A side's host address when it is the program's own memory, which the
 * worker cannot reach (not shared with it), else 0. */
static uint64_t unreached(CUmemorytype type, CUdeviceptr dev, const void *host)
{
    uint64_t base;
    if (type == CU_MEMORYTYPE_HOST)
        base = (uint64_t)(uintptr_t)host;
    else if (type == CU_MEMORYTYPE_UNIFIED && !cuda_fe_mem_is_device(dev))
        base = dev;
    else
        return 0;
    return gvs_remote_host_shared((const void *)(uintptr_t)base, 1) ? 0 : base;
}

/* The span of a host side: one run of bytes from *start, or 0. */
static size_t one_span(const CUDA_MEMCPY3D *p, uint64_t base, size_t x,
                       size_t y, size_t z, size_t pitch, size_t height,
                       uint64_t *start)
{
    size_t w = p->WidthInBytes, h = p->Height ? p->Height : 1,
           d = p->Depth ? p->Depth : 1;
    if (w == 0)
        return 0;
    int rows_follow = h == 1 || pitch == w;
    int slices_follow = d == 1 || (pitch == w && height == h);
    if (!rows_follow || !slices_follow)
        return 0;
    uint64_t off = ((uint64_t)z * height + y) * pitch + x;
    uint64_t span = (uint64_t)w * h * d;
    if (span / d / h != w || off + span < off)
        return 0;
    *start = base + off;
    return (size_t)span;
}

/* The device memory prepared for this thread's request, its side. */
static _Thread_local uint64_t prepared;
static _Thread_local int prepared_to_dev;

CUresult cuda_fe_ghost_prepare(const CUDA_MEMCPY3D *p)
{
    prepared = 0;
    uint64_t dst = unreached(p->dstMemoryType, p->dstDevice, p->dstHost);
    uint64_t src = unreached(p->srcMemoryType, p->srcDevice, p->srcHost);
    if (dst == 0 && src == 0)
        return CUDA_SUCCESS;
    if (dst != 0 && src != 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    uint64_t start = 0;
    size_t span = src != 0 ? one_span(p, src, p->srcXInBytes, p->srcY, p->srcZ,
                                      p->srcPitch, p->srcHeight, &start)
                           : one_span(p, dst, p->dstXInBytes, p->dstY, p->dstZ,
                                      p->dstPitch, p->dstHeight, &start);
    prepared_to_dev = src != 0;
    return (CUresult)gvs_remote_ghost_prepare(&ghost_api, (void *)(uintptr_t)start,
                                              span, src != 0, p, sizeof(*p),
                                              &prepared);
}

int cuda_fe_ghost_side(int to_dev, uint64_t *dev)
{
    if (prepared == 0 || prepared_to_dev != to_dev)
        return 0;
    *dev = prepared;
    return 1;
}

void cuda_fe_ghost_done(uint64_t owner, uint64_t node, int exec, CUresult r)
{
    prepared = 0;
    gvs_remote_ghost_done(owner, node, exec, r == CUDA_SUCCESS);
}

int cuda_fe_ghost_params(uint64_t node, CUDA_MEMCPY3D *out)
{
    return gvs_remote_ghost_params(node, out, sizeof(*out));
}

CUresult cuda_fe_ghost_launch(uint64_t exec, CUstream stream, int per_thread,
                              int32_t (*launch)(uint64_t exec, uint64_t stream))
{
    CUstream st = per_thread && stream == NULL ? CU_STREAM_PER_THREAD : stream;
    return (CUresult)gvs_remote_ghost_launch(&ghost_api, exec,
                                             (uint64_t)(uintptr_t)st, launch);
}
