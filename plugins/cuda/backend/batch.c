/* Batched prefetches and discards of managed memory (cuda.api,
 * MEM_BATCH): the driver's own batch calls, on ranges checked to be
 * device memory (managed memory is), so that the driver answers the
 * batch as it answers a program's. */
#include "be.h"

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"

#define BATCH_MAX 65536u

enum { PREFETCH, DISCARD, DISCARD_PREFETCH };

struct batch {
    uint32_t count, nlocs;
    CUdeviceptr *ptr;
    size_t *size;
    CUmemLocation *loc;
    size_t *first;
};

static void batch_free(struct batch *b)
{
    gvs_free(b->ptr);
    gvs_free(b->size);
    gvs_free(b->loc);
    gvs_free(b->first);
}

/* Reads the ranges and locations; 0 or a negative GVS_E_* code. */
static int get_batch(struct apigen_call *c, struct batch *b)
{
    apigen_get_u32(c, &b->count);
    if (c->rc == 0 && b->count > BATCH_MAX)
        c->rc = GVS_E_RANGE;
    if (c->rc == 0 &&
        ((b->ptr = gvs_calloc(b->count + 1, sizeof(*b->ptr))) == NULL ||
         (b->size = gvs_calloc(b->count + 1, sizeof(*b->size))) == NULL))
        c->rc = GVS_E_NOMEM;
    for (uint32_t i = 0; c->rc == 0 && i < b->count; i++) {
        uint64_t p, n;
        apigen_get_u64(c, &p);
        apigen_get_u64(c, &n);
        b->ptr[i] = (CUdeviceptr)p;
        b->size[i] = (size_t)n;
        if (c->rc == 0 && n > SIZE_MAX)
            c->rc = GVS_E_RANGE;
    }
    apigen_get_u32(c, &b->nlocs);
    if (c->rc == 0 && b->nlocs > b->count)
        c->rc = GVS_E_RANGE;
    if (c->rc == 0 &&
        ((b->loc = gvs_calloc(b->nlocs + 1, sizeof(*b->loc))) == NULL ||
         (b->first = gvs_calloc(b->nlocs + 1, sizeof(*b->first))) == NULL))
        c->rc = GVS_E_NOMEM;
    for (uint32_t i = 0; c->rc == 0 && i < b->nlocs; i++) {
        int32_t type, id;
        uint64_t first;
        apigen_get_i32(c, &type);
        apigen_get_i32(c, &id);
        apigen_get_u64(c, &first);
        b->loc[i].type = (CUmemLocationType)type;
        b->loc[i].id = id;
        b->first[i] = (size_t)first;
    }
    return c->rc;
}

/* Request: u64 stream, u8 0, u8 kind, u64 flags, the ranges, the
 * locations.  Reply: i32.  The u8 is cuda_be_enter_stream's ordering
 * byte, which it sets to 1 for CU_STREAM_PER_THREAD: a batch is ordered
 * on its stream either way. */
int cuda_be_mem_batch(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct batch b = {0, 0, NULL, NULL, NULL, NULL};
    CUstream st = NULL;
    uint8_t order = 0, kind;
    uint64_t flags;
    CUresult r = cuda_be_enter_stream(call, &c, &st, &order);
    apigen_get_u8(&c, &kind);
    apigen_get_u64(&c, &flags);
    if (c.rc == 0)
        get_batch(&c, &b);
    if (apigen_end(&c) == 0 && (order > 1 || kind > DISCARD_PREFETCH))
        c.rc = GVS_E_PROTO;
    if (c.rc < 0) {
        batch_free(&b);
        return c.rc;
    }
    for (uint32_t i = 0; r == CUDA_SUCCESS && i < b.count; i++)
        r = cuda_be_check_device_range(b.ptr[i], b.size[i]);
    if (r == CUDA_SUCCESS && kind == PREFETCH)
        r = CUDA_DRV(cuMemPrefetchBatchAsync)(b.ptr, b.size, b.count, b.loc,
                                              b.first, b.nlocs, flags, st);
    else if (r == CUDA_SUCCESS && kind == DISCARD)
        r = CUDA_DRV(cuMemDiscardBatchAsync)(b.ptr, b.size, b.count, flags,
                                             st);
    else if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemDiscardAndPrefetchBatchAsync)(
            b.ptr, b.size, b.count, b.loc, b.first, b.nlocs, flags, st);
    batch_free(&b);
    apigen_put_i32(&c, r);
    return c.rc;
}
