/* Device memory (cuda.api, docs/driver.md "Memory"): allocations, the
 * copies between the program's memory and the device in pieces of at
 * most GVS_BULK_CHUNK, memsets, and the facts about pointers the client
 * can answer itself. */
#include "call.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs/u64map.h"

struct attrs;

struct range {
    uint64_t size;
    CUdevice dev;
    struct attrs *attrs; /* NULL until asked */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map ranges;

static void range_free(struct range *r)
{
    if (r != NULL)
        gvs_free(r->attrs);
    gvs_free(r);
}

void cuda_fe_mem_note(uint64_t p, uint64_t size, CUdevice dev)
{
    struct range *r = gvs_malloc(sizeof(*r));
    if (r == NULL)
        return;
    *r = (struct range){size, dev, NULL};
    pthread_mutex_lock(&lock);
    range_free(gvs_u64map_remove(&ranges, p));
    if (gvs_u64map_put(&ranges, p, r) < 0)
        range_free(r);
    pthread_mutex_unlock(&lock);
}

void cuda_fe_mem_forget(uint64_t p)
{
    pthread_mutex_lock(&lock);
    range_free(gvs_u64map_remove(&ranges, p));
    pthread_mutex_unlock(&lock);
}

/* The known range holding p: 1 and its base, size and device. */
static int find(uint64_t p, uint64_t *base, struct range *out)
{
    pthread_mutex_lock(&lock);
    struct range *r = gvs_u64map_floor(&ranges, p, base);
    int in = r != NULL && p - *base < r->size;
    if (in)
        *out = *r;
    pthread_mutex_unlock(&lock);
    return in;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    struct apigen_call c;
    uint64_t p = 0;
    CUdevice dev;
    if (dptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    if (r == CUDA_SUCCESS)
        r = cuda_fe_ctx_device(&dev);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, bytesize);
    r = cuda_fe_run(&c, CUDA_OP_MEM_ALLOC, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &p);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS) {
        cuda_fe_mem_note(p, bytesize, dev);
        *dptr = (CUdeviceptr)p;
    }
    return r;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, dptr);
    r = cuda_fe_run(&c, CUDA_OP_MEM_FREE, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        cuda_fe_mem_forget(dptr);
    return r;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
                                 CUdeviceptr dptr)
{
    uint64_t base;
    struct range r;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!find(dptr, &base, &r))
        return CUDA_ERROR_NOT_FOUND;
    if (pbase != NULL)
        *pbase = (CUdeviceptr)base;
    if (psize != NULL)
        *psize = (size_t)r.size;
    return CUDA_SUCCESS;
}

#define PIECE_ASYNC 1u
#define PIECE_LAST 2u

/* Starts a copy or memset request: u64 stream, u8 flags. */
static CUresult begin_stream(struct apigen_call *c, uint64_t stream,
                             uint8_t flags)
{
    CUresult r = cuda_fe_begin(c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(c, stream);
    apigen_put_u8(c, flags);
    return CUDA_SUCCESS;
}

/* Every piece but the last is posted; the last one's reply carries the
 * first failure.  The bytes have left when it returns, so src is the
 * program's again, as after the driver's staging of pageable memory. */
static CUresult h2d(uint64_t dst, const void *src, size_t n, uint64_t stream,
                    int async)
{
    const uint8_t *p = src;
    size_t off = 0;
    if (n > 0 && src == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    do {
        struct apigen_call c;
        size_t len = n - off < GVS_BULK_CHUNK ? n - off : GVS_BULK_CHUNK;
        int last = off + len == n;
        CUresult r = begin_stream(&c, stream,
                                  (uint8_t)((async ? PIECE_ASYNC : 0) |
                                            (last ? PIECE_LAST : 0)));
        if (r != CUDA_SUCCESS)
            return r;
        apigen_put_u64(&c, dst + off);
        apigen_put_blob(&c, p + off, len);
        if (!last) {
            r = cuda_fe_post(&c, CUDA_OP_MEMCPY_H2D, APIGEN_DEVICE);
            if (r != CUDA_SUCCESS)
                return r;
        } else {
            r = cuda_fe_run(&c, CUDA_OP_MEMCPY_H2D, APIGEN_DEVICE);
            return cuda_fe_end(&c, r);
        }
        off += len;
    } while (1);
}

static CUresult d2h(void *dst, uint64_t src, size_t n, uint64_t stream,
                    int async)
{
    uint8_t *p = dst;
    if (n > 0 && dst == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t off = 0; off < n || off == 0; ) {
        struct apigen_call c;
        const uint8_t *bytes;
        size_t got = 0;
        size_t len = n - off < GVS_BULK_CHUNK ? n - off : GVS_BULK_CHUNK;
        CUresult r = begin_stream(&c, stream, async ? PIECE_ASYNC : 0);
        if (r != CUDA_SUCCESS)
            return r;
        apigen_put_u64(&c, src + off);
        apigen_put_u64(&c, len);
        r = cuda_fe_run(&c, CUDA_OP_MEMCPY_D2H, APIGEN_DEVICE);
        if (r == CUDA_SUCCESS)
            apigen_get_blob(&c, &bytes, &got);
        if (r == CUDA_SUCCESS && c.rc == 0 && got != len)
            c.rc = GVS_E_PROTO;
        r = cuda_fe_end(&c, r);
        if (r != CUDA_SUCCESS)
            return r;
        memcpy(p + off, bytes, len);
        off += len;
        if (n == 0)
            break;
    }
    return CUDA_SUCCESS;
}

static CUresult d2d(uint64_t dst, uint64_t src, size_t n, uint64_t stream,
                    int async)
{
    struct apigen_call c;
    CUresult r = begin_stream(&c, stream, async ? PIECE_ASYNC : 0);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, dst);
    apigen_put_u64(&c, src);
    apigen_put_u64(&c, n);
    r = cuda_fe_run(&c, CUDA_OP_MEMCPY_D2D, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

/* A unified-address copy: each side is device memory when it lies in a
 * range known here, else the program's. */
static CUresult unified(uint64_t dst, uint64_t src, size_t n,
                        uint64_t stream, int async)
{
    uint64_t base;
    struct range rg;
    int dd = find(dst, &base, &rg), sd = find(src, &base, &rg);
    if (dd && sd)
        return d2d(dst, src, n, stream, async);
    if (dd)
        return h2d(dst, (const void *)(uintptr_t)src, n, stream, async);
    if (sd)
        return d2h((void *)(uintptr_t)dst, src, n, stream, async);
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

static uint64_t sw(CUstream s, int per_thread)
{
    return cuda_fe_stream_wire(s, per_thread);
}

#define PTDS ((uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return h2d(dst, src, n, 0, 0);
}

CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
    return h2d(dst, src, n, PTDS, 0);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return d2h(dst, src, n, 0, 0);
}

CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    return d2h(dst, src, n, PTDS, 0);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return d2d(dst, src, n, 0, 0);
}

CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return d2d(dst, src, n, PTDS, 0);
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return unified(dst, src, n, 0, 0);
}

CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return unified(dst, src, n, PTDS, 0);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
                              CUstream s)
{
    return h2d(dst, src, n, sw(s, 0), 1);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src,
                                   size_t n, CUstream s)
{
    return h2d(dst, src, n, sw(s, 1), 1);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
                              CUstream s)
{
    return d2h(dst, src, n, sw(s, 0), 1);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n,
                                   CUstream s)
{
    return d2h(dst, src, n, sw(s, 1), 1);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
                              CUstream s)
{
    return d2d(dst, src, n, sw(s, 0), 1);
}

CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src,
                                   size_t n, CUstream s)
{
    return d2d(dst, src, n, sw(s, 1), 1);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
                       CUstream s)
{
    return unified(dst, src, n, sw(s, 0), 1);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
                            CUstream s)
{
    return unified(dst, src, n, sw(s, 1), 1);
}

static CUresult memset_any(uint64_t dst, uint32_t v, size_t n, int size,
                           uint64_t stream, int async)
{
    struct apigen_call c;
    CUresult r = begin_stream(&c, stream, async ? PIECE_ASYNC : 0);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)size);
    apigen_put_u64(&c, dst);
    apigen_put_u32(&c, v);
    apigen_put_u64(&c, n);
    r = cuda_fe_run(&c, CUDA_OP_MEMSET, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
    return memset_any(d, v, n, 1, 0, 0);
}

CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n)
{
    return memset_any(d, v, n, 1, PTDS, 0);
}

CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n)
{
    return memset_any(d, v, n, 2, 0, 0);
}

CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n)
{
    return memset_any(d, v, n, 2, PTDS, 0);
}

CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
    return memset_any(d, v, n, 4, 0, 0);
}

CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n)
{
    return memset_any(d, v, n, 4, PTDS, 0);
}

CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n,
                         CUstream s)
{
    return memset_any(d, v, n, 1, sw(s, 0), 1);
}

CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n,
                              CUstream s)
{
    return memset_any(d, v, n, 1, sw(s, 1), 1);
}

CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n,
                          CUstream s)
{
    return memset_any(d, v, n, 2, sw(s, 0), 1);
}

CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n,
                               CUstream s)
{
    return memset_any(d, v, n, 2, sw(s, 1), 1);
}

CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n,
                          CUstream s)
{
    return memset_any(d, v, n, 4, sw(s, 0), 1);
}

CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n,
                               CUstream s)
{
    return memset_any(d, v, n, 4, sw(s, 1), 1);
}

/* Host memory "page-locked" through the driver is the program's own:
 * the backend copies it as any other. */
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    if (pp == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    *pp = gvs_malloc(bytesize ? bytesize : 1);
    return *pp != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    if (flags & CU_MEMHOSTALLOC_DEVICEMAP)
        return CUDA_ERROR_NOT_SUPPORTED;
    return cuMemAllocHost_v2(pp, bytesize);
}

CUresult cuMemFreeHost(void *p)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    gvs_free(p);
    return CUDA_SUCCESS;
}

/* Pointer attributes: what the backend's driver said of a pointer
 * (POINTER_ATTRS), kept with its allocation once asked, the values that
 * depend on the address moved by its offset. */
#define ATTR_MAX 22

struct attr {
    CUresult r;
    uint8_t size;
    uint64_t value;
};

/* The bytes driver 580 writes for each attribute (probed on an H100):
 * what a zero default takes when the driver has no value to measure. */
static const uint8_t sizes[ATTR_MAX] = {
    [CU_POINTER_ATTRIBUTE_CONTEXT] = 8,
    [CU_POINTER_ATTRIBUTE_MEMORY_TYPE] = 4,
    [CU_POINTER_ATTRIBUTE_DEVICE_POINTER] = 8,
    [CU_POINTER_ATTRIBUTE_HOST_POINTER] = 8,
    [CU_POINTER_ATTRIBUTE_SYNC_MEMOPS] = 4,
    [CU_POINTER_ATTRIBUTE_BUFFER_ID] = 8,
    [CU_POINTER_ATTRIBUTE_IS_MANAGED] = 4,
    [CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL] = 4,
    [CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE] = 4,
    [CU_POINTER_ATTRIBUTE_RANGE_START_ADDR] = 8,
    [CU_POINTER_ATTRIBUTE_RANGE_SIZE] = 8,
    [CU_POINTER_ATTRIBUTE_MAPPED] = 4,
    [CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES] = 8,
    [CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE] = 4,
    [CU_POINTER_ATTRIBUTE_ACCESS_FLAGS] = 4,
    [CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE] = 8,
    [CU_POINTER_ATTRIBUTE_MAPPING_SIZE] = 8,
    [CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR] = 8,
    [CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID] = 8,
    [CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE] = 4,
};

struct attrs {
    CUresult r;      /* the pointer's own: not one the driver knows */
    uint64_t asked;  /* the address the values are for */
    struct attr a[ATTR_MAX];
};

static CUresult fetch(uint64_t p, struct attrs *out)
{
    struct apigen_call c;
    uint32_t n = 0;
    memset(out, 0, sizeof(*out));
    out->asked = p;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, p);
    r = cuda_fe_run(&c, CUDA_OP_POINTER_ATTRS, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u32(&c, &n);
    for (uint32_t i = 0; r == CUDA_SUCCESS && i < n && c.rc == 0; i++) {
        uint32_t id;
        int32_t ar;
        uint8_t size;
        uint64_t v;
        apigen_get_u32(&c, &id);
        apigen_get_i32(&c, &ar);
        apigen_get_u8(&c, &size);
        apigen_get_u64(&c, &v);
        if (c.rc == 0 && (id >= ATTR_MAX || size > 8))
            c.rc = GVS_E_RANGE;
        if (c.rc == 0)
            out->a[id] = (struct attr){(CUresult)ar, size, v};
    }
    r = cuda_fe_end(&c, r);
    /* Asked before, the driver's answer for a pointer it does not know. */
    out->r = r;
    return r == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE ? CUDA_SUCCESS
                                                              : r;
}

/* The attributes of p: the ones kept with its allocation, else asked
 * and kept there. */
static CUresult attrs_of(uint64_t p, struct attrs *out)
{
    uint64_t base;
    pthread_mutex_lock(&lock);
    struct range *rg = gvs_u64map_floor(&ranges, p, &base);
    int known = rg != NULL && p - base < rg->size && rg->attrs != NULL;
    if (known)
        *out = *rg->attrs;
    pthread_mutex_unlock(&lock);
    if (known)
        return CUDA_SUCCESS;
    CUresult r = fetch(p, out);
    if (r != CUDA_SUCCESS || out->r != CUDA_SUCCESS)
        return r;
    struct attrs *keep = gvs_malloc(sizeof(*keep));
    pthread_mutex_lock(&lock);
    rg = gvs_u64map_floor(&ranges, p, &base);
    if (keep != NULL && rg != NULL && p - base < rg->size &&
        rg->attrs == NULL) {
        *keep = *out;
        rg->attrs = keep;
        keep = NULL;
    }
    pthread_mutex_unlock(&lock);
    gvs_free(keep);
    return CUDA_SUCCESS;
}

/* Attribute a of p from what was asked for another address of its
 * allocation; the bytes written in *size. */
static CUresult attr_value(const struct attrs *at, int a, uint64_t p,
                           uint64_t *v, uint8_t *size)
{
    if (at->r != CUDA_SUCCESS)
        return at->r;
    if (a <= 0 || a >= ATTR_MAX || at->a[a].size == 0)
        return at->a[a > 0 && a < ATTR_MAX ? a : 0].r != CUDA_SUCCESS
                   ? at->a[a > 0 && a < ATTR_MAX ? a : 0].r
                   : CUDA_ERROR_INVALID_VALUE;
    if (at->a[a].r != CUDA_SUCCESS)
        return at->a[a].r;
    *v = at->a[a].value;
    *size = at->a[a].size;
    if ((a == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ||
         a == CU_POINTER_ATTRIBUTE_HOST_POINTER) && *v != 0)
        *v += p - at->asked;
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr ptr)
{
    struct attrs at;
    uint64_t v;
    uint8_t size;
    if (data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = attrs_of(ptr, &at);
    if (r == CUDA_SUCCESS)
        r = attr_value(&at, (int)attribute, ptr, &v, &size);
    if (r == CUDA_SUCCESS)
        memcpy(data, &v, size);
    return r;
}

/* A pointer the driver does not know, or an attribute it has no value
 * for, gets zeros, as the driver gives. */
CUresult cuPointerGetAttributes(unsigned int numAttributes,
                                CUpointer_attribute *attributes, void **data,
                                CUdeviceptr ptr)
{
    struct attrs at;
    if (numAttributes > 0 && (attributes == NULL || data == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = attrs_of(ptr, &at);
    if (r != CUDA_SUCCESS)
        return r;
    for (unsigned int i = 0; i < numAttributes; i++) {
        uint64_t v = 0;
        uint8_t size = 0;
        int a = (int)attributes[i];
        if (data[i] == NULL)
            continue;
        if (attr_value(&at, a, ptr, &v, &size) != CUDA_SUCCESS) {
            v = 0;
            size = a > 0 && a < ATTR_MAX ? sizes[a] : 0;
        }
        if (size == 0)
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(data[i], &v, size);
    }
    return CUDA_SUCCESS;
}
