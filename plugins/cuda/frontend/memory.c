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
#include "gvs_remote.h"

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

void cuda_fe_mem_forget_range(uint64_t p, uint64_t size)
{
    uint64_t base, last = size > UINT64_MAX - p ? UINT64_MAX : p + size - 1;
    pthread_mutex_lock(&lock);
    while (size > 0 && gvs_u64map_floor(&ranges, last, &base) != NULL &&
           base >= p)
        range_free(gvs_u64map_remove(&ranges, base));
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

int cuda_fe_mem_device_of(uint64_t p, uint64_t len, CUdevice *dev)
{
    uint64_t base;
    struct range r;
    if (!find(p, &base, &r) || len > r.size - (p - base))
        return 0;
    *dev = r.dev;
    return 1;
}

int cuda_fe_mem_known(uint64_t p)
{
    uint64_t base;
    struct range r;
    return find(p, &base, &r);
}

CUresult cuda_fe_run_noted(struct apigen_call *c, uint16_t op, uint64_t *p,
                           uint64_t *size)
{
    CUdevice dev = 0;
    CUresult r = cuda_fe_run(c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(c, p);
        apigen_get_u64(c, size);
    }
    r = cuda_fe_end(c, r);
    if (r != CUDA_SUCCESS)
        return r;
    (void)cuda_fe_ctx_device(&dev);
    cuda_fe_mem_note(*p, *size, dev);
    return CUDA_SUCCESS;
}

/* An allocation's request, for the device of the thread's context. */
static CUresult begin_alloc(struct apigen_call *c, CUdevice *dev)
{
    CUresult r = cuda_fe_begin(c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    return r == CUDA_SUCCESS ? cuda_fe_ctx_device(dev) : r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    struct apigen_call c;
    uint64_t p = 0;
    CUdevice dev;
    if (dptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    /* The driver clears the pointer of an allocation that fails. */
    *dptr = 0;
    CUresult r = begin_alloc(&c, &dev);
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

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
                            size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    struct apigen_call c;
    uint64_t p = 0, pitch = 0;
    CUdevice dev;
    if (dptr == NULL || pPitch == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin_alloc(&c, &dev);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, WidthInBytes);
    apigen_put_u64(&c, Height);
    apigen_put_u32(&c, ElementSizeBytes);
    r = cuda_fe_run(&c, CUDA_OP_MEM_ALLOC_PITCH, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(&c, &p);
        apigen_get_u64(&c, &pitch);
    }
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS) {
        cuda_fe_mem_note(p, pitch * Height, dev);
        *dptr = (CUdeviceptr)p;
        *pPitch = (size_t)pitch;
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
    if (r == CUDA_SUCCESS) {
        cuda_fe_mem_forget(dptr);
        gvs_remote_managed_forget(dptr);
    }
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

#define PTDS ((uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)

static uint64_t sw(CUstream s, int per_thread)
{
    return cuda_fe_stream_wire(s, per_thread);
}

/* A memset cannot fail at once, and is posted, when its rectangle lies
 * in one allocation of the device of its stream's context, its address
 * and pitch are aligned to its element and its rows do not overlap, and
 * no capture can make it a node; a posted one's failure is the lane's
 * next synchronizing call's. */
static int may_post_memset(uint64_t dst, uint64_t pitch, size_t w, size_t h,
                           int size, uint64_t stream)
{
    CUdevice dev, mdev;
    if (w == 0 || h == 0 || gvs_remote_capturing() || dst % size != 0 ||
        w > UINT64_MAX / (uint64_t)size)
        return 0;
    uint64_t row = (uint64_t)w * size;
    if (h > 1 && (pitch < row || pitch % size != 0 ||
                  h - 1 > (UINT64_MAX - row) / pitch))
        return 0;
    uint64_t span = (h - 1) * (h > 1 ? pitch : 0) + row;
    return cuda_fe_mem_device_of(dst, span, &mdev) &&
           cuda_fe_stream_device(stream, &dev) == 0 && dev == mdev;
}

static CUresult memset_any(uint64_t dst, uint64_t pitch, uint32_t v,
                           size_t w, size_t h, int size, uint64_t stream,
                           int async)
{
    struct apigen_call c;
    CUresult r = cuda_fe_copy_begin(&c, stream, (uint8_t)async);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)size);
    apigen_put_u64(&c, dst);
    apigen_put_u64(&c, pitch);
    apigen_put_u32(&c, v);
    apigen_put_u64(&c, w);
    apigen_put_u64(&c, h);
    if (may_post_memset(dst, pitch, w, h, size, stream))
        return cuda_fe_post(&c, CUDA_OP_MEMSET, APIGEN_DEVICE);
    r = cuda_fe_run(&c, CUDA_OP_MEMSET, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

/* The 1D memsets: one row. */
#define MEMSET_1D(name, type, size, stream, async)                           \
    CUresult name(CUdeviceptr d, type v, size_t n)                           \
    {                                                                        \
        return memset_any(d, n * size, v, n, 1, size, stream, async);        \
    }
#define MEMSET_1D_ASYNC(name, type, size, per_thread)                        \
    CUresult name(CUdeviceptr d, type v, size_t n, CUstream s)               \
    {                                                                        \
        return memset_any(d, n * size, v, n, 1, size, sw(s, per_thread), 1); \
    }
#define MEMSET_2D(name, type, size, stream)                                  \
    CUresult name(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h)   \
    {                                                                        \
        return memset_any(d, pitch, v, w, h, size, stream, 0);               \
    }
#define MEMSET_2D_ASYNC(name, type, size, per_thread)                        \
    CUresult name(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h,   \
                  CUstream s)                                                \
    {                                                                        \
        return memset_any(d, pitch, v, w, h, size, sw(s, per_thread), 1);    \
    }

MEMSET_1D(cuMemsetD8_v2, unsigned char, 1, 0, 0)
MEMSET_1D(cuMemsetD8_v2_ptds, unsigned char, 1, PTDS, 0)
MEMSET_1D(cuMemsetD16_v2, unsigned short, 2, 0, 0)
MEMSET_1D(cuMemsetD16_v2_ptds, unsigned short, 2, PTDS, 0)
MEMSET_1D(cuMemsetD32_v2, unsigned int, 4, 0, 0)
MEMSET_1D(cuMemsetD32_v2_ptds, unsigned int, 4, PTDS, 0)
MEMSET_1D_ASYNC(cuMemsetD8Async, unsigned char, 1, 0)
MEMSET_1D_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
MEMSET_1D_ASYNC(cuMemsetD16Async, unsigned short, 2, 0)
MEMSET_1D_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
MEMSET_1D_ASYNC(cuMemsetD32Async, unsigned int, 4, 0)
MEMSET_1D_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, 1)
MEMSET_2D(cuMemsetD2D8_v2, unsigned char, 1, 0)
MEMSET_2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, PTDS)
MEMSET_2D(cuMemsetD2D16_v2, unsigned short, 2, 0)
MEMSET_2D(cuMemsetD2D16_v2_ptds, unsigned short, 2, PTDS)
MEMSET_2D(cuMemsetD2D32_v2, unsigned int, 4, 0)
MEMSET_2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, PTDS)
MEMSET_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1, 0)
MEMSET_2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1, 1)
MEMSET_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 2, 0)
MEMSET_2D_ASYNC(cuMemsetD2D16Async_ptsz, unsigned short, 2, 1)
MEMSET_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4, 0)
MEMSET_2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4, 1)

/* Page-locked host memory: the layer's table, one with the runtime
 * frontend's (gvs_remote.h).  Over shm:// an allocation is shared with
 * the backend, which pins it: the GPU reaches it and copies from and to
 * it are one DMA there (copy.c).  Otherwise, and for registered memory,
 * it is the program's own memory, which the GPU cannot reach: the
 * backend copies it as any other. */
static CUresult host_code(enum gvs_remote_host_rc rc)
{
    switch (rc) {
    case GVS_RHOST_OK:
        return CUDA_SUCCESS;
    case GVS_RHOST_NOMEM:
        return CUDA_ERROR_OUT_OF_MEMORY;
    case GVS_RHOST_REGISTERED:
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    case GVS_RHOST_NOT_REGISTERED:
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    return host_code(gvs_remote_host_alloc(pp, bytesize, flags, &cuda_fe_shared));
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

/* Freeing NULL does nothing, as cudaFreeHost. */
CUresult cuMemFreeHost(void *p)
{
    int32_t unmapped = CUDA_SUCCESS;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (p == NULL)
        return CUDA_SUCCESS;
    CUresult r = host_code(gvs_remote_host_free(p, &cuda_fe_shared, &unmapped));
    return r == CUDA_SUCCESS ? (CUresult)unmapped : r;
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    return host_code(gvs_remote_host_register(p, bytesize, Flags));
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    return cuMemHostRegister_v2(p, bytesize, Flags);
}

CUresult cuMemHostUnregister(void *p)
{
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    return host_code(gvs_remote_host_unregister(p));
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    struct gvs_remote_host h;
    uint64_t base;
    if (pFlags == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!gvs_remote_host_find(p, &base, &h))
        return CUDA_ERROR_INVALID_VALUE;
    *pFlags = h.flags;
    return CUDA_SUCCESS;
}

/* The device address of memory shared with the backend (over shm://);
 * other page-locked memory the GPU cannot reach. */
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
                                      unsigned int Flags)
{
    struct gvs_remote_host h;
    uint64_t base;
    if (pdptr == NULL || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!gvs_remote_host_find(p, &base, &h))
        return CUDA_ERROR_INVALID_VALUE;
    if (h.dev == 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    *pdptr = (CUdeviceptr)(h.dev + ((uintptr_t)p - base));
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

/* Page-locked host memory is the client's: its attributes are answered
 * here, as the driver gives them for such memory of the current
 * context, its device address the backend's mapping where there is one
 * (none: 0). */
static int host_attrs(uint64_t p, struct attrs *out)
{
    struct gvs_remote_host h;
    uint64_t base;
    CUdevice dev = 0;
    if (!gvs_remote_host_find((const void *)(uintptr_t)p, &base, &h))
        return 0;
    (void)cuda_fe_ctx_device(&dev);
    memset(out, 0, sizeof(*out));
    out->asked = p;
    for (int a = 1; a < ATTR_MAX; a++)
        out->a[a] = (struct attr){CUDA_SUCCESS, sizes[a], 0};
    out->a[CU_POINTER_ATTRIBUTE_CONTEXT].value =
        (uint64_t)(uintptr_t)cuda_fe_ctx_current();
    out->a[CU_POINTER_ATTRIBUTE_MEMORY_TYPE].value = CU_MEMORYTYPE_HOST;
    out->a[CU_POINTER_ATTRIBUTE_DEVICE_POINTER].value =
        h.dev != 0 ? h.dev + (p - base) : 0;
    out->a[CU_POINTER_ATTRIBUTE_HOST_POINTER].value = p;
    out->a[CU_POINTER_ATTRIBUTE_BUFFER_ID].value = base;
    out->a[CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL].value = (uint64_t)dev;
    out->a[CU_POINTER_ATTRIBUTE_RANGE_START_ADDR].value = base;
    out->a[CU_POINTER_ATTRIBUTE_RANGE_SIZE].value = h.size;
    out->a[CU_POINTER_ATTRIBUTE_MAPPED].value = 1;
    return 1;
}

/* The attributes of p: the ones kept with its allocation, else asked
 * and kept there. */
static CUresult attrs_of(uint64_t p, struct attrs *out)
{
    uint64_t base;
    if (host_attrs(p, out))
        return CUDA_SUCCESS;
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

/* A pointer this frontend did not allocate (the runtime frontend's, a
 * library's): the backend's driver says whether it is device memory, and
 * a device allocation is then known here. */
int cuda_fe_mem_is_device(uint64_t p)
{
    uint64_t base, v;
    uint8_t size;
    struct attrs at;
    struct gvs_remote_host h;
    if (cuda_fe_mem_known(p))
        return 1;
    /* Page-locked memory is the client's: no need to ask. */
    if (gvs_remote_host_find((const void *)(uintptr_t)p, &base, &h))
        return 0;
    if (!cuda_fe_initialized() || fetch(p, &at) != CUDA_SUCCESS ||
        attr_value(&at, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p, &v, &size) !=
            CUDA_SUCCESS ||
        (v != CU_MEMORYTYPE_DEVICE && v != CU_MEMORYTYPE_UNIFIED))
        return 0;
    uint64_t start, len, dev = 0;
    if (attr_value(&at, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p, &start,
                   &size) == CUDA_SUCCESS &&
        attr_value(&at, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p, &len, &size) ==
            CUDA_SUCCESS) {
        (void)attr_value(&at, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p, &dev,
                         &size);
        cuda_fe_mem_note(start, len, (CUdevice)dev);
    }
    return 1;
}
