/*
 * Copies between device memory made by the layer's own kernel
 * (copy_kernel.h) instead of the driver's copy calls (batch.c).  The
 * driver takes 3.9-4.6 us of the worker's time for each device-to-device
 * copy, alone or in its batch call (H200, driver 580, 4 KiB to 4 MiB):
 * a launch of this kernel takes 3.3-3.5 us, and one launch makes up to
 * 16 copies, 0.2 us a copy of 4-64 KiB.  The GPU's copy is the kernel's:
 * it runs in stream order as the driver's copy would, and reads and
 * writes the same bytes.
 *
 * Only where the kernel reaches both ranges as the driver's copy does
 * (or, in an ordered batch, reads host memory the GPU maps at the same
 * address, which batch.c learns from shared.c):
 * each lies in one allocation of cuMemAlloc's (the driver says it could
 * be shared by the legacy IPC: not managed memory, not a pool's, not a
 * mapping of the virtual memory API, whose access rights a kernel of
 * this context may lack) made in the stream's context, which is the
 * current one.  Anything else, a copy between devices say, is the
 * driver's.
 *
 * The library is loaded once, at the first such copy, and stays loaded
 * for the worker's life (one session); it is not bound to a context, so
 * a context destroyed and made again finds its kernel still there.
 * GVS_COPY_KERNEL=0 in gvsd's environment leaves every copy to the
 * driver (a program whose kernels hold every SM while they wait for a
 * copy on another stream needs the copy engines).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "copy_kernel.h"
#include "state.h"

/* A copy gets a block (a row of the grid's) for each BLOCK_BYTES, at
 * most MAX_BLOCKS: a batch of 16 copies of up to 1 MiB 1,024 blocks, a
 * copy of 16 MiB alone as many, several for each SM. */
#define BLOCK_BYTES ((uint64_t)16 << 10)
#define MAX_BLOCKS ((unsigned)(REMOTE_BE_KERNEL_COPY_MAX / BLOCK_BYTES))
#define THREADS 256u
/* An ordered batch's one block: 16 KiB a step, a copy of at most
 * ORDERED_MAX (batch.c) in one. */
#define ORDERED_THREADS 1024u

_Static_assert(GVS_COPY_KERNEL_MAX >= GVS_REMOTE_BATCH_MAX,
               "a batch fits one launch");

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_state; /* 0 not tried, 1 loaded, -1 failed */
static CUkernel kernel;

static CUkernel loaded_kernel(const struct gvs_remote_copy_driver *d)
{
    int st = __atomic_load_n(&load_state, __ATOMIC_ACQUIRE);
    if (st != 0)
        return st > 0 ? kernel : NULL;
    pthread_mutex_lock(&load_lock);
    if (load_state == 0) {
        const char *off = getenv("GVS_COPY_KERNEL");
        CUlibrary lib = NULL;
        CUkernel k = NULL;
        int ok = (off == NULL || strcmp(off, "0") != 0) &&
                 d->library_load_data(&lib, gvs_copy_kernel_image, NULL, NULL,
                                      0, NULL, NULL, 0) == CUDA_SUCCESS &&
                 d->library_get_kernel(&k, lib, GVS_COPY_KERNEL_NAME) ==
                     CUDA_SUCCESS &&
                 k != NULL;
        kernel = ok ? k : NULL;
        __atomic_store_n(&load_state, ok ? 1 : -1, __ATOMIC_RELEASE);
    }
    st = load_state;
    pthread_mutex_unlock(&load_lock);
    return st > 0 ? kernel : NULL;
}

const struct gvs_remote_copy_driver *
remote_be_copy_driver(const struct gvs_remote_batcher *b, int mapped)
{
    const struct gvs_remote_copy_driver *(*get)(void) =
        mapped ? b->mapped_driver : b->driver;
    const struct gvs_remote_copy_driver *d = get != NULL ? get() : NULL;
    if (d == NULL || d->library_load_data == NULL ||
        d->library_get_kernel == NULL || d->launch == NULL ||
        d->pointer_attrs == NULL || d->stream_ctx == NULL ||
        d->current_ctx == NULL)
        return NULL;
    return loaded_kernel(d) != NULL ? d : NULL;
}

CUcontext remote_be_copy_context(const struct gvs_remote_copy_driver *d,
                                 void *stream)
{
    CUcontext s = NULL, cur = NULL;
    if (d->stream_ctx((CUstream)stream, &s) != CUDA_SUCCESS ||
        d->current_ctx(&cur) != CUDA_SUCCESS || s != cur)
        return NULL;
    return s;
}

/* The boolean attributes are written as the driver's own type; a wider
 * zeroed word reads any of them.  The allocation found into [*from,
 * *to). */
static int in_context(const struct gvs_remote_copy_driver *d, CUcontext ctx,
                      uint64_t p, uint64_t len, uint64_t *from, uint64_t *to)
{
    CUmemorytype type = (CUmemorytype)0;
    CUcontext owner = NULL;
    CUdeviceptr start = 0;
    size_t size = 0;
    unsigned long long ipc = 0;
    CUpointer_attribute which[5] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_CONTEXT,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
    void *data[5] = {&type, &owner, &start, &size, &ipc};
    if (d->pointer_attrs(5, which, data, (CUdeviceptr)p) != CUDA_SUCCESS ||
        type != CU_MEMORYTYPE_DEVICE || owner != ctx || ipc == 0 || p < start ||
        p - start > size || len > size - (p - start))
        return 0;
    *from = start;
    *to = start + size;
    return 1;
}

int remote_be_kernel_reaches(const struct gvs_remote_copy_driver *d,
                             CUcontext ctx, uint64_t p, uint64_t len,
                             uint64_t *from, uint64_t *to)
{
    return ctx != NULL && in_context(d, ctx, p, len, from, to);
}

int remote_be_kernel_copyable(const struct gvs_remote_copy_driver *d,
                              CUcontext ctx, uint64_t dst, uint64_t src,
                              uint64_t len, int src_mapped)
{
    uint64_t from, to;
    return ctx != NULL && in_context(d, ctx, dst, len, &from, &to) &&
           (src_mapped || in_context(d, ctx, src, len, &from, &to));
}

int remote_be_kernel_copies(const struct gvs_remote_copy_driver *d,
                            void *stream, const unsigned long long *dst,
                            const unsigned long long *src, const size_t *len,
                            size_t n, int ordered)
{
    CUkernel k = loaded_kernel(d);
    if (k == NULL || n == 0 || n > GVS_COPY_KERNEL_MAX)
        return -1;
    struct gvs_copy_params p = {.n = (unsigned)n, .ordered = ordered != 0};
    uint64_t most = 0;
    for (size_t i = 0; i < n; i++) {
        p.dst[i] = dst[i];
        p.src[i] = src[i];
        p.len[i] = len[i];
        if (len[i] > most)
            most = len[i];
    }
    uint64_t blocks = (most + BLOCK_BYTES - 1) / BLOCK_BYTES;
    unsigned gx = blocks < MAX_BLOCKS ? (unsigned)blocks : MAX_BLOCKS;
    void *params[1] = {&p};
    if (ordered)
        return d->launch((CUfunction)k, 1, 1, 1, ORDERED_THREADS, 1, 1, 0,
                         (CUstream)stream, params, NULL) == CUDA_SUCCESS
                   ? 0
                   : -1;
    return d->launch((CUfunction)k, gx > 0 ? gx : 1, (unsigned)n, 1, THREADS,
                     1, 1, 0, (CUstream)stream, params, NULL) == CUDA_SUCCESS
               ? 0
               : -1;
}
