/*
 * A driver of two GPUs held in memory, for the mock backend (gvs-cuda.so
 * in the tests' plugin dir) that serves cuda.mock_devices without a GPU:
 * it stands for backend/driver.c and fills cuda_be_drv with functions
 * that answer as the driver would, by fixed values (mock_devices.c
 * checks them on the client).
 */
#include "be.h"
#include "mock_driver.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mock_driver.h"

#define MOCK_DEVICES 2

static CUresult mock_init(unsigned int flags)
{
    return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult mock_count(int *count)
{
    *count = MOCK_DEVICES;
    return CUDA_SUCCESS;
}

static CUresult check_dev(CUdevice dev)
{
    return dev >= 0 && dev < MOCK_DEVICES ? CUDA_SUCCESS
                                          : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult mock_get(CUdevice *device, int ordinal)
{
    CUresult r = check_dev(ordinal);
    if (r == CUDA_SUCCESS)
        *device = ordinal;
    return r;
}

static CUresult mock_attribute(int *pi, CUdevice_attribute attrib,
                               CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r != CUDA_SUCCESS)
        return r;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *pi = 9;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *pi = 0;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *pi = 132;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
        *pi = 1;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
        *pi = 0x18 + dev;
        return CUDA_SUCCESS;
    default:
        /* The others, which NVIDIA's runtime reads as it starts: one
         * value that serves as a size, a limit and a flag, so that a
         * program built with the static runtime runs on the mock. */
        if (attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
            return CUDA_ERROR_INVALID_VALUE;
        *pi = 1024;
        return CUDA_SUCCESS;
    }
}

static CUresult mock_uuid(CUuuid *uuid, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        for (int i = 0; i < 16; i++)
            uuid->bytes[i] = (char)(0xa0 + 16 * dev + i);
    return r;
}

static CUresult mock_capability(int *major, int *minor, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS) {
        *major = 9;
        *minor = 0;
    }
    return r;
}

static CUresult mock_total(size_t *bytes, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        *bytes = (size_t)80 << 30;
    return r;
}

static CUresult mock_name(char *name, int len, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        snprintf(name, (size_t)len, "gvs mock GPU %d", (int)dev);
    return r;
}

static CUresult mock_peer(int *can, CUdevice dev, CUdevice peer)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        r = check_dev(peer);
    if (r == CUDA_SUCCESS)
        *can = dev != peer;
    return r;
}

static CUresult mock_p2p(int *value, CUdevice_P2PAttribute attrib,
                         CUdevice src, CUdevice dst)
{
    CUresult r = check_dev(src);
    if (r == CUDA_SUCCESS)
        r = check_dev(dst);
    if (r == CUDA_SUCCESS && src == dst)
        r = CUDA_ERROR_INVALID_DEVICE;
    if (r == CUDA_SUCCESS)
        *value = attrib == CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ? 0 : 1;
    return r;
}

static CUresult mock_properties(CUdevprop *prop, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS) {
        memset(prop, 0, sizeof(*prop));
        prop->maxThreadsPerBlock = 1024;
        prop->SIMDWidth = 32;
        prop->clockRate = 1980000;
    }
    return r;
}

static CUresult mock_tex1d(size_t *width, CUarray_format format,
                           unsigned channels, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS && (channels < 1 || channels > 4 || format == 0))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *width = (size_t)1 << 28;
    return r;
}

static CUresult mock_affinity(int *pi, CUexecAffinityType type, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        *pi = type == CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    return r;
}

static CUresult mock_bus_id(char *id, int len, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        snprintf(id, (size_t)len, "0000:%02x:00.0", 0x18 + (int)dev);
    return r;
}

static CUresult mock_by_bus_id(CUdevice *dev, const char *id)
{
    unsigned bus;
    if (sscanf(id, "0000:%2x:00.0", &bus) != 1 || bus < 0x18 ||
        bus >= 0x18 + MOCK_DEVICES)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = (CUdevice)(bus - 0x18);
    return CUDA_SUCCESS;
}


/* Contexts, memory, modules, streams and events of the mock: objects are
 * small allocations the backend only passes around; device memory is
 * host memory, and a launch runs nothing. */
static int ctx_objs[MOCK_DEVICES];
static _Thread_local CUcontext current;

/* Each primary context's references and flags, for GetState. */
static int primary_refs[MOCK_DEVICES];
static unsigned primary_flags[MOCK_DEVICES];

static CUresult mock_retain(CUcontext *ctx, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS) {
        *ctx = (CUcontext)&ctx_objs[dev];
        primary_refs[dev]++;
    }
    return r;
}

static CUresult mock_release(CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS && primary_refs[dev] > 0)
        primary_refs[dev]--;
    return r;
}

static CUresult mock_reset(CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        primary_refs[dev] = 0;
    return r;
}

static CUresult mock_primary_state(CUdevice dev, unsigned *flags,
                                   int *active)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS) {
        *flags = primary_flags[dev];
        *active = primary_refs[dev] > 0;
    }
    return r;
}

static CUresult mock_primary_flags(CUdevice dev, unsigned flags)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        primary_flags[dev] = flags;
    return r;
}

/* Every function's attribute a is 100 + a until set (for all functions
 * at once), the first eight are not settable; past the cluster
 * scheduling preference, there is none. */
static int attr_set[CU_FUNC_ATTRIBUTE_MAX];
static int attr_is_set[CU_FUNC_ATTRIBUTE_MAX];

static CUresult mock_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    if ((int)a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    *v = attr_is_set[a] ? attr_set[a] : 100 + (int)a;
    return CUDA_SUCCESS;
}

static CUresult mock_func_set_attr(CUfunction f, CUfunction_attribute a,
                                   int v)
{
    (void)f;
    if ((int)a < CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
        a >= CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    attr_set[a] = v;
    attr_is_set[a] = 1;
    return CUDA_SUCCESS;
}

static CUresult mock_func_cache(CUfunction f, CUfunc_cache c)
{
    (void)f;
    (void)c;
    return CUDA_SUCCESS;
}

static CUresult mock_kernel_attr(int *v, CUfunction_attribute a,
                                 CUkernel k, CUdevice dev)
{
    (void)k;
    CUresult r = check_dev(dev);
    return r == CUDA_SUCCESS ? mock_func_attr(v, a, NULL) : r;
}

static CUresult mock_kernel_set_attr(CUfunction_attribute a, int v,
                                     CUkernel k, CUdevice dev)
{
    (void)k;
    CUresult r = check_dev(dev);
    return r == CUDA_SUCCESS ? mock_func_set_attr(NULL, a, v) : r;
}

static CUresult mock_ctx_create(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    CUresult r = check_dev(dev);
    (void)flags;
    if (r == CUDA_SUCCESS && (*ctx = malloc(1)) == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        current = *ctx;
    return r;
}

static CUresult mock_ctx_destroy(CUcontext ctx)
{
    if (ctx != (CUcontext)&ctx_objs[0] && ctx != (CUcontext)&ctx_objs[1])
        free(ctx);
    return CUDA_SUCCESS;
}

static CUresult mock_get_current(CUcontext *ctx)
{
    *ctx = current;
    return CUDA_SUCCESS;
}

static CUresult mock_set_current(CUcontext ctx)
{
    current = ctx;
    return CUDA_SUCCESS;
}

static CUresult mock_ctx_device(CUdevice *dev)
{
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = current == (CUcontext)&ctx_objs[1];
    return CUDA_SUCCESS;
}

/* Every stream is of the current context. */
static CUresult mock_stream_ctx(CUstream s, CUcontext *out)
{
    (void)s;
    *out = current;
    return current != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* Waits for the host functions too (mock_callbacks.c). */
static CUresult mock_ctx_sync(void)
{
    return current != NULL ? mock_callbacks_wait() : CUDA_ERROR_INVALID_CONTEXT;
}

/* Calls with nothing to do in the mock (profiler, L2 cache). */
static CUresult mock_no_args(void)
{
    return CUDA_SUCCESS;
}

/* Device memory: the mock's allocations, by base. */
#define MOCK_ALLOCS 256
static struct {
    uint8_t *p;
    size_t n;
} allocs[MOCK_ALLOCS];

static int alloc_of(CUdeviceptr p)
{
    for (int i = 0; i < MOCK_ALLOCS; i++)
        if (allocs[i].p != NULL && p >= (CUdeviceptr)(uintptr_t)allocs[i].p &&
            p < (CUdeviceptr)(uintptr_t)allocs[i].p + allocs[i].n)
            return i;
    return -1;
}

/* Like a GPU's, "device" addresses come from a range of their own, away
 * from where a client's heap would be: the client maps its shadows of
 * managed memory at the same addresses (the layer's), which a heap
 * address of the worker may hold in the client too (the ASan build's
 * allocator puts both processes' heaps at the same place). */
static uintptr_t next_va = (uintptr_t)0x520000000000ull;

static CUresult mock_alloc(CUdeviceptr *p, size_t n)
{
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    for (int i = 0; i < MOCK_ALLOCS; i++)
        if (allocs[i].p == NULL) {
            size_t len = n ? n : 1;
            void *m = mmap((void *)next_va, len, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                           0);
            if (m == MAP_FAILED)
                return CUDA_ERROR_OUT_OF_MEMORY;
            next_va += (len + ((size_t)2 << 20)) & ~(((size_t)2 << 20) - 1);
            allocs[i].p = m;
            allocs[i].n = n;
            *p = (CUdeviceptr)(uintptr_t)m;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Managed memory is device memory to the mock: host memory already. */
static CUresult mock_alloc_managed(CUdeviceptr *p, size_t n,
                                   unsigned int flags)
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return mock_alloc(p, n);
}

static CUresult mock_advise(CUdeviceptr p, size_t n, CUmem_advise advice,
                            CUmemLocation loc)
{
    (void)loc;
    int known = advice >= CU_MEM_ADVISE_SET_READ_MOSTLY &&
                advice <= CU_MEM_ADVISE_UNSET_ACCESSED_BY;
    return alloc_of(p) >= 0 && n > 0 && known ? CUDA_SUCCESS
                                              : CUDA_ERROR_INVALID_VALUE;
}

/* Every range attribute reads as zeros. */
static CUresult mock_range_attribute(void *data, size_t size,
                                     CUmem_range_attribute a, CUdeviceptr p,
                                     size_t n)
{
    if (alloc_of(p) < 0 || n == 0 || a < CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY ||
        a > CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION)
        return CUDA_ERROR_INVALID_VALUE;
    memset(data, 0, size);
    return CUDA_SUCCESS;
}

/* Pools: each device's default one and the created ones, their release
 * threshold the one attribute they keep. */
#define MOCK_POOLS 8
static struct mock_pool {
    int used;
    uint64_t threshold;
} pools[MOCK_POOLS] = {{1, 0}, {1, 0}};
static CUmemoryPool current_pool[MOCK_DEVICES] = {
    (CUmemoryPool)&pools[0], (CUmemoryPool)&pools[1]};

static struct mock_pool *pool_of(CUmemoryPool p)
{
    for (int i = 0; i < MOCK_POOLS; i++)
        if (p == (CUmemoryPool)&pools[i] && pools[i].used)
            return &pools[i];
    return NULL;
}

static CUresult mock_pool_create(CUmemoryPool *out, const CUmemPoolProps *pp)
{
    if (pp->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        pp->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        check_dev(pp->location.id) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = MOCK_DEVICES; i < MOCK_POOLS; i++)
        if (!pools[i].used) {
            pools[i] = (struct mock_pool){1, 0};
            *out = (CUmemoryPool)&pools[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult mock_pool_destroy(CUmemoryPool p)
{
    struct mock_pool *mp = pool_of(p);
    if (mp == NULL || mp < &pools[MOCK_DEVICES])
        return CUDA_ERROR_INVALID_VALUE;
    mp->used = 0;
    return CUDA_SUCCESS;
}

static CUresult mock_pool_attr(CUmemoryPool p, CUmemPool_attribute a,
                               void *v, int set)
{
    struct mock_pool *mp = pool_of(p);
    if (mp == NULL || a != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        return CUDA_ERROR_INVALID_VALUE;
    if (set)
        mp->threshold = *(uint64_t *)v;
    else
        *(uint64_t *)v = mp->threshold;
    return CUDA_SUCCESS;
}

static CUresult mock_pool_set_attr(CUmemoryPool p, CUmemPool_attribute a,
                                   void *v)
{
    return mock_pool_attr(p, a, v, 1);
}

static CUresult mock_pool_get_attr(CUmemoryPool p, CUmemPool_attribute a,
                                   void *v)
{
    return mock_pool_attr(p, a, v, 0);
}

static CUresult mock_default_pool(CUmemoryPool *out, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        *out = (CUmemoryPool)&pools[dev];
    return r;
}

static CUresult mock_current_pool(CUmemoryPool *out, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS)
        *out = current_pool[dev];
    return r;
}

static CUresult mock_set_pool(CUdevice dev, CUmemoryPool p)
{
    CUresult r = check_dev(dev);
    if (r == CUDA_SUCCESS && pool_of(p) == NULL)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        current_pool[dev] = p;
    return r;
}

static CUresult mock_alloc_async(CUdeviceptr *p, size_t n, CUstream s)
{
    (void)s;
    return mock_alloc(p, n);
}

static CUresult mock_alloc_pool(CUdeviceptr *p, size_t n, CUmemoryPool pool,
                                CUstream s)
{
    (void)s;
    return pool_of(pool) != NULL ? mock_alloc(p, n)
                                 : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_free(CUdeviceptr p);

static CUresult mock_free_async(CUdeviceptr p, CUstream s)
{
    (void)s;
    return mock_free(p);
}

/* Every operation is supported natively, on every device. */
static CUresult mock_atomic_caps(unsigned int *caps,
                                 const CUatomicOperation *ops,
                                 unsigned int n, CUdevice dev)
{
    CUresult r = check_dev(dev);
    for (unsigned int i = 0; r == CUDA_SUCCESS && i < n; i++)
        caps[i] = (unsigned int)ops[i] <= CU_ATOMIC_OPERATION_FLOAT_MAX
                      ? CU_ATOMIC_CAPABILITY_SIGNED
                      : 0;
    return r;
}

/* One line of logs, whatever the iterator; it says the batches of
 * copies made, once there are any. */
static CUresult mock_logs_dump(CUlogIterator *it, char *buf, size_t *size,
                               unsigned int flags)
{
    char line[96];
    unsigned long long calls, copies;
    mock_batch_counts(&calls, &copies);
    int n = calls == 0 ? snprintf(line, sizeof(line), "mock driver log\n")
                       : snprintf(line, sizeof(line),
                                  "mock driver log: %llu batches, %llu "
                                  "copies\n",
                                  calls, copies);
    if (flags != 0 || n < 0 || *size < (size_t)n + 1)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(buf, line, (size_t)n + 1);
    *size = (size_t)n;
    if (it != NULL)
        *it += 1;
    return CUDA_SUCCESS;
}

/* IPC: a handle names an allocation by its index; opening it gives the
 * allocation itself, as another process's worker would map it. */
static CUresult mock_ipc_get(CUipcMemHandle *h, CUdeviceptr p)
{
    int i = alloc_of(p);
    if (i < 0)
        return CUDA_ERROR_INVALID_VALUE;
    memset(h, 0, sizeof(*h));
    memcpy(h->reserved, &i, sizeof(i));
    return CUDA_SUCCESS;
}

static CUresult mock_ipc_open(CUdeviceptr *p, CUipcMemHandle h,
                              unsigned int flags)
{
    int i;
    memcpy(&i, h.reserved, sizeof(i));
    if (flags > CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS || i < 0 ||
        i >= MOCK_ALLOCS || allocs[i].p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *p = (CUdeviceptr)(uintptr_t)allocs[i].p;
    return CUDA_SUCCESS;
}

static CUresult mock_ipc_close(CUdeviceptr p)
{
    return alloc_of(p) >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    int i = alloc_of(p);
    if (i < 0 && mock_vmm_range(p, base, size))
        return CUDA_SUCCESS;
    if (i < 0)
        return CUDA_ERROR_NOT_FOUND;
    *base = (CUdeviceptr)(uintptr_t)allocs[i].p;
    *size = allocs[i].n;
    return CUDA_SUCCESS;
}

/* Rows padded to 512 bytes, as on every GPU CUDA 13 supports. */
static CUresult mock_alloc_pitch(CUdeviceptr *p, size_t *pitch, size_t width,
                                 size_t height, unsigned elem)
{
    (void)elem;
    if (width == 0 || height == 0 || width > ((size_t)1 << 30) ||
        height > ((size_t)1 << 30) / ((width + 511) & ~(size_t)511))
        return CUDA_ERROR_INVALID_VALUE;
    *pitch = (width + 511) & ~(size_t)511;
    return mock_alloc(p, *pitch * height);
}

static CUresult mock_free(CUdeviceptr p)
{
    int i = alloc_of(p);
    if (i < 0 || (CUdeviceptr)(uintptr_t)allocs[i].p != p)
        return CUDA_ERROR_INVALID_VALUE;
    munmap(allocs[i].p, allocs[i].n ? allocs[i].n : 1);
    allocs[i].p = NULL;
    return CUDA_SUCCESS;
}

static CUresult mock_mem_info(size_t *free_bytes, size_t *total)
{
    *free_bytes = (size_t)60 << 30;
    *total = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

static CUresult mock_pointer(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    if (a != CU_POINTER_ATTRIBUTE_MEMORY_TYPE ||
        (alloc_of(p) < 0 && !mock_vmm_range(p, NULL, NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    *(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
}

/* Pinning shared host memory: the mock's device reaches the worker's
 * memory at its own address. */
static CUresult mock_host_register(void *p, size_t n, unsigned int flags)
{
    (void)flags;
    return p != NULL && n != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_host_alloc(void **p, size_t n, unsigned int flags)
{
    (void)flags;
    *p = malloc(n);
    return *p != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult mock_free_host(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

static CUresult mock_host_unregister(void *p)
{
    return p != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_host_device_pointer(CUdeviceptr *d, void *p,
                                         unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

static CUresult mock_h2d(CUdeviceptr d, const void *s, size_t n)
{
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}

static CUresult stream_status(CUstream s);

static CUresult mock_h2d_async(CUdeviceptr d, const void *s, size_t n,
                               CUstream st)
{
    CUresult r = stream_status(st);
    return r != CUDA_SUCCESS ? r : mock_h2d(d, s, n);
}

static CUresult mock_d2h(void *d, CUdeviceptr s, size_t n)
{
    memcpy(d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}

static CUresult mock_d2h_async(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    return mock_d2h(d, s, n);
}

static CUresult mock_d2d(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}

static CUresult mock_d2d_async(CUdeviceptr d, CUdeviceptr s, size_t n,
                               CUstream st)
{
    (void)st;
    return mock_d2d(d, s, n);
}

static CUresult mock_set8(CUdeviceptr d, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}

static CUresult mock_set16(CUdeviceptr d, unsigned short v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy((uint8_t *)(uintptr_t)d + 2 * i, &v, 2);
    return CUDA_SUCCESS;
}

static CUresult mock_set32(CUdeviceptr d, unsigned int v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy((uint8_t *)(uintptr_t)d + 4 * i, &v, 4);
    return CUDA_SUCCESS;
}

static CUresult mock_set8a(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    (void)s;
    return mock_set8(d, v, n);
}

static CUresult mock_set16a(CUdeviceptr d, unsigned short v, size_t n,
                            CUstream s)
{
    (void)s;
    return mock_set16(d, v, n);
}

static CUresult mock_set32a(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    (void)s;
    return mock_set32(d, v, n);
}

/* 2D copies and memsets: rows of plain memory on both sides. */
static CUresult mock_copy2d(const CUDA_MEMCPY2D *c)
{
    for (size_t r = 0; r < c->Height; r++) {
        uint8_t *dst = c->dstMemoryType == CU_MEMORYTYPE_HOST
                           ? (uint8_t *)c->dstHost
                           : (uint8_t *)(uintptr_t)c->dstDevice;
        const uint8_t *src = c->srcMemoryType == CU_MEMORYTYPE_HOST
                                 ? (const uint8_t *)c->srcHost
                                 : (const uint8_t *)(uintptr_t)c->srcDevice;
        memmove(dst + r * c->dstPitch, src + r * c->srcPitch, c->WidthInBytes);
    }
    return CUDA_SUCCESS;
}

static CUresult mock_copy2d_async(const CUDA_MEMCPY2D *c, CUstream s)
{
    (void)s;
    return mock_copy2d(c);
}

static CUresult mock_set2d32(CUdeviceptr d, size_t pitch, unsigned v,
                             size_t w, size_t h)
{
    for (size_t r = 0; r < h; r++)
        mock_set32(d + r * pitch, v, w);
    return CUDA_SUCCESS;
}

static CUresult mock_set2d8(CUdeviceptr d, size_t pitch, unsigned char v,
                            size_t w, size_t h)
{
    for (size_t r = 0; r < h; r++)
        mock_set8(d + r * pitch, v, w);
    return CUDA_SUCCESS;
}

static CUresult mock_set2d8a(CUdeviceptr d, size_t pitch, unsigned char v,
                             size_t w, size_t h, CUstream s)
{
    (void)s;
    return mock_set2d8(d, pitch, v, w, h);
}

static CUresult mock_set2d32a(CUdeviceptr d, size_t pitch, unsigned v,
                              size_t w, size_t h, CUstream s)
{
    (void)s;
    return mock_set2d32(d, pitch, v, w, h);
}

/* Images: text starting "//gvs-mock" is a module (or library) of two
 * kernels the mock runs on the host: fill(u32 *p, u32 value, u32 n) and
 * add(u32 *p, u32 n, u32 delta) (launch.c).  The text comes alone (as
 * PTX), as a fat binary's payload or as an ELF file's first section
 * (modules.c writes such files), filling either to its last byte, a NUL:
 * an image cut short is none.  Anything else is no image. */
struct mock_kernel {
    const char *name;
    unsigned nparams;
    size_t offset[3], size[3];
};

static const struct mock_kernel mock_kernels[2] = {
    {"fill", 3, {0, 8, 12}, {8, 4, 4}},
    {"add", 3, {0, 8, 12}, {8, 4, 4}},
};
static int mock_module;

static uint64_t image_field(const void *code, size_t off, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)code + off, n);
    return v;
}

/* The mock text of the image at code, or NULL; *kind names its form. */
static const char *image_text(const void *code, const char **kind)
{
    const char *text = NULL;
    uint64_t size = 0;
    if (code == NULL)
        return NULL;
    if (strncmp(code, MOCK_IMAGE, strlen(MOCK_IMAGE)) == 0) {
        *kind = "ptx";
        return code;
    }
    /* No magic number holds a NUL: shorter text is no image. */
    if (strnlen(code, 4) < 4)
        return NULL;
    if (image_field(code, 0, 4) == 0xba55ed50u) {
        *kind = "fatbin";
        text = (const char *)code + image_field(code, 6, 2);
        size = image_field(code, 8, 8);
    } else if (memcmp(code, "\x7f" "ELF", 4) == 0 &&
               image_field(code, 0x3c, 2) > 0 &&
               image_field((const uint8_t *)code +
                               image_field(code, 0x28, 8), 4, 4) == 1) {
        /* A section of bytes (SHT_PROGBITS) in the file, as the backend
         * measured it. */
        const uint8_t *sh = (const uint8_t *)code + image_field(code, 0x28, 8);
        *kind = "cubin";
        text = (const char *)code + image_field(sh, 0x18, 8);
        size = image_field(sh, 0x20, 8);
    }
    if (text == NULL || size == 0 || strnlen(text, size) != size - 1 ||
        strncmp(text, MOCK_IMAGE, strlen(MOCK_IMAGE)) != 0)
        return NULL;
    return text;
}

/* Loads the image at code as the driver does with JIT options: text
 * "//gvs-mock bad" does not compile (CUDA_ERROR_INVALID_PTX, an error
 * log); other images say their form in the info log and take 2.5 ms of
 * wall time. */
static CUresult image_load(const void *code, unsigned n,
                           const CUjit_option *o, void **v)
{
    const char *kind = NULL, *text = image_text(code, &kind);
    char msg[64];
    if (n > 0 && (o == NULL || v == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    if (text == NULL)
        return CUDA_ERROR_INVALID_IMAGE;
    if (strncmp(text, MOCK_IMAGE " bad", strlen(MOCK_IMAGE " bad")) == 0) {
        mock_jit_log(n, o, v, CU_JIT_ERROR_LOG_BUFFER,
                     CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, "mock: bad PTX");
        return CUDA_ERROR_INVALID_PTX;
    }
    snprintf(msg, sizeof(msg), "mock: loaded a %s image", kind);
    mock_jit_log(n, o, v, CU_JIT_INFO_LOG_BUFFER,
                 CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, msg);
    for (unsigned i = 0; i < n; i++)
        if (o[i] == CU_JIT_WALL_TIME) {
            float ms = 2.5f;
            memcpy(&v[i], &ms, sizeof(ms));
        }
    return CUDA_SUCCESS;
}

static const struct mock_kernel *kernel_of(const void *h)
{
    for (int i = 0; i < 2; i++)
        if (h == (const void *)&mock_kernels[i])
            return &mock_kernels[i];
    return NULL;
}

static CUresult mock_lib_load(CUlibrary *lib, const void *code,
                              CUjit_option *o, void **ov, unsigned n,
                              CUlibraryOption *lo, void **lov, unsigned ln)
{
    (void)lo, (void)lov, (void)ln;
    CUresult r = image_load(code, n, o, ov);
    if (r != CUDA_SUCCESS)
        return r;
    *lib = (CUlibrary)&mock_module;
    return CUDA_SUCCESS;
}

/* The library's __managed__ variables: "mcounter" (4 ints, starting
 * {42, 0, 0, 0}) and "mpair" (2 ints), in one allocation, so one page,
 * as a module's are. */
static CUresult mock_lib_managed(CUdeviceptr *dptr, size_t *bytes,
                                 CUlibrary lib, const char *name)
{
    static CUdeviceptr segment;
    int counter = strcmp(name, "mcounter") == 0;
    if (lib != (CUlibrary)&mock_module)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!counter && strcmp(name, "mpair") != 0)
        return CUDA_ERROR_NOT_FOUND;
    if (segment == 0) {
        CUresult r = mock_alloc(&segment, 64);
        if (r != CUDA_SUCCESS)
            return r;
        ((int *)(uintptr_t)segment)[0] = 42;
    }
    *dptr = counter ? segment : segment + 40;
    *bytes = counter ? 16 : 8;
    return CUDA_SUCCESS;
}

static CUresult mock_mod_load(CUmodule *mod, const void *image, unsigned n,
                              CUjit_option *o, void **v)
{
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult r = image_load(image, n, o, v);
    if (r != CUDA_SUCCESS)
        return r;
    *mod = (CUmodule)&mock_module;
    return CUDA_SUCCESS;
}

static CUresult mock_unload(void *h)
{
    return h == &mock_module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult mock_kernel_count(unsigned *n, void *h)
{
    *n = 2;
    return h == &mock_module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult mock_enumerate(void **out, unsigned n, void *h)
{
    for (unsigned i = 0; i < n && i < 2; i++)
        out[i] = (void *)&mock_kernels[i];
    return h == &mock_module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult mock_kernel_name(const char **name, void *h)
{
    const struct mock_kernel *k = kernel_of(h);
    if (k == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = k->name;
    return CUDA_SUCCESS;
}

static CUresult mock_param(void *h, size_t i, size_t *off, size_t *size)
{
    const struct mock_kernel *k = kernel_of(h);
    if (k == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (i >= k->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    *off = k->offset[i];
    *size = k->size[i];
    return CUDA_SUCCESS;
}

static CUresult mock_kernel_function(CUfunction *f, CUkernel k)
{
    if (kernel_of(k) == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *f = (CUfunction)k;
    return CUDA_SUCCESS;
}

/* 2048 threads per multiprocessor, scaled by the carveout percentage
 * once one was set (so that a setting changes the answer); no block
 * takes more than 48 KiB of dynamic shared memory. */
static CUresult mock_occupancy_flags(int *n, CUfunction f, int block,
                                     size_t smem, unsigned flags)
{
    (void)flags;
    if (kernel_of(f) == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (block <= 0 || block > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    *n = smem > 48 * 1024 ? 0 : 2048 / block;
    const CUfunction_attribute c =
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
    if (attr_is_set[c])
        *n = *n * attr_set[c] / 100;
    return CUDA_SUCCESS;
}

static CUresult mock_occupancy(int *n, CUfunction f, int block, size_t smem)
{
    return mock_occupancy_flags(n, f, block, smem, 0);
}

/* Runs the kernel on the host, after the checks the driver makes at
 * launch time. */
static CUresult mock_launch(CUfunction f, unsigned gx, unsigned gy,
                            unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shmem, CUstream s,
                            void **params, void **extra)
{
    const struct mock_kernel *k = kernel_of(f);
    const uint8_t *buf = NULL;
    size_t size = 0;
    (void)s;
    if (k == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    for (size_t i = 0; params == NULL && extra != NULL &&
                       extra[i] != CU_LAUNCH_PARAM_END;
         i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = *(size_t *)extra[i + 1];
    }
    /* An extra buffer must hold every parameter. */
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
        (uint64_t)bx * by * bz > 1024 || shmem > 48 * 1024 ||
        (params == NULL &&
         (buf == NULL || size < k->offset[2] + k->size[2])))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t p;
    uint32_t a, b;
    memcpy(&p, params ? params[0] : buf + k->offset[0], 8);
    memcpy(&a, params ? params[1] : buf + k->offset[1], 4);
    memcpy(&b, params ? params[2] : buf + k->offset[2], 4);
    uint32_t n = k == &mock_kernels[0] ? b : a;
    int i = alloc_of(p);
    CUdeviceptr base = 0;
    size_t len = 0;
    if (i >= 0) {
        base = (CUdeviceptr)(uintptr_t)allocs[i].p;
        len = allocs[i].n;
    }
    if ((i < 0 && !mock_vmm_range(p, &base, &len)) || p + 4ull * n > base + len)
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    uint32_t *v = (uint32_t *)(uintptr_t)p;
    for (uint32_t j = 0; j < n; j++)
        v[j] = k == &mock_kernels[0] ? a : v[j] + b;
    return CUDA_SUCCESS;
}

/* With attributes: a cluster must divide the grid and hold at most 8
 * blocks, as on Hopper; the other attributes are taken as they come. */
static CUresult mock_launch_ex(const CUlaunchConfig *c, CUfunction f,
                               void **params, void **extra)
{
    for (unsigned i = 0; i < c->numAttrs; i++) {
        if (c->attrs[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            continue;
        unsigned x = c->attrs[i].value.clusterDim.x,
                 y = c->attrs[i].value.clusterDim.y,
                 z = c->attrs[i].value.clusterDim.z;
        if (x == 0 || y == 0 || z == 0 || (uint64_t)x * y * z > 8 ||
            c->gridDimX % x != 0 || c->gridDimY % y != 0 ||
            c->gridDimZ % z != 0)
            return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
    return mock_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ,
                       c->blockDimX, c->blockDimY, c->blockDimZ,
                       c->sharedMemBytes, c->hStream, params, extra);
}

static CUresult mock_fail(void)
{
    return CUDA_ERROR_INVALID_HANDLE;
}

static CUresult mock_capture_info(CUstream s, CUstreamCaptureStatus *status,
                                  cuuint64_t *id, CUgraph *g,
                                  const CUgraphNode **deps,
                                  const CUgraphEdgeData **edges, size_t *n)
{
    (void)s, (void)g, (void)deps, (void)edges;
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    *id = 0;
    *n = 0;
    return CUDA_SUCCESS;
}

/* Each thread's capture mode, as the driver keeps it. */
static _Thread_local CUstreamCaptureMode capture_mode;

static CUresult mock_capture_mode(CUstreamCaptureMode *m)
{
    CUstreamCaptureMode old = capture_mode;
    capture_mode = *m;
    *m = old;
    return CUDA_SUCCESS;
}

static int stream_objs[64];
static unsigned nstreams;

/* A stream's object holds its status (mock_callbacks.c). */
static CUresult mock_stream_create(CUstream *s, unsigned flags, int prio)
{
    int *obj = &stream_objs[nstreams++ % 64];
    (void)flags;
    *obj = prio == MOCK_BROKEN_PRIORITY ? CUDA_ERROR_LAUNCH_FAILED
                                        : CUDA_SUCCESS;
    *s = (CUstream)obj;
    return CUDA_SUCCESS;
}

/* A stream's status: what its object holds (MOCK_BROKEN_PRIORITY), the
 * default streams' CUDA_SUCCESS. */
static CUresult stream_status(CUstream s)
{
    int *obj = (int *)s;
    return obj >= stream_objs && obj < stream_objs + 64 ? (CUresult)*obj
                                                        : CUDA_SUCCESS;
}

/* A stream's id: its object's place, from 1; the legacy stream's 0. */
static CUresult mock_stream_id(CUstream s, unsigned long long *id)
{
    *id = s != NULL ? (unsigned long long)((int *)s - stream_objs) + 1 : 0;
    return CUDA_SUCCESS;
}

static CUresult mock_event_create(CUevent *e, unsigned flags)
{
    (void)flags;
    *e = (CUevent)&stream_objs[nstreams++ % 64];
    return CUDA_SUCCESS;
}

/* Work runs as it is launched: streams and events are always done. */
static CUresult mock_record(CUevent e, CUstream s)
{
    (void)e, (void)s;
    return CUDA_SUCCESS;
}

static CUresult mock_record_flags(CUevent e, CUstream s, unsigned flags)
{
    return flags == 0 ? mock_record(e, s) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_wait(CUstream s, CUevent e, unsigned flags)
{
    (void)s, (void)e;
    return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_done(void *obj)
{
    (void)obj;
    return CUDA_SUCCESS;
}

static CUresult mock_destroy(void *obj)
{
    (void)obj;
    return CUDA_SUCCESS;
}

/* Graphs: a graph is its nodes in the order they were added, which
 * every dependency precedes; an executable graph is a copy of them, run
 * in that order.  Kernel, memcpy (device to device, rows of the width),
 * memset (32-bit) and empty nodes, of up to 4 dependencies. */
#define MOCK_NODES 8

struct mock_node {
    CUgraphNodeType type;
    CUfunction f;
    unsigned grid, block;
    uint8_t params[16]; /* fill and add take 16 bytes (mock_kernels) */
    CUdeviceptr dst, src;
    size_t width, rows, pitch;
    unsigned value;
    CUhostFn host;
    void *user;
    void *args[3]; /* a kernel's, into params, as queries answer them */
    int priority;  /* the one kernel node attribute the mock keeps */
    CUmemorytype types[2]; /* a copy's destination and source */
    /* A batch memory operation node's context and operations. */
    CUcontext ctx;
    unsigned nops;
    CUstreamBatchMemOpParams ops[2];
    unsigned ndeps;
    const struct mock_node *deps[4];
};

/* Graph memory: a memory alloc node's bytes, which the mock's pointer
 * attributes do not know (as CUDA's do not while no graph runs them);
 * kept until the worker exits. */
#define MOCK_GRAPH_MEM 16
static struct {
    uint8_t *p;
    size_t n;
} graph_mem[MOCK_GRAPH_MEM];

static int graph_mem_of(CUdeviceptr p)
{
    for (int i = 0; i < MOCK_GRAPH_MEM; i++)
        if (graph_mem[i].p != NULL &&
            p >= (CUdeviceptr)(uintptr_t)graph_mem[i].p &&
            p < (CUdeviceptr)(uintptr_t)graph_mem[i].p + graph_mem[i].n)
            return i;
    return -1;
}

static CUresult graph_mem_alloc(size_t n, CUdeviceptr *p)
{
    for (int i = 0; i < MOCK_GRAPH_MEM; i++)
        if (graph_mem[i].p == NULL) {
            if (n == 0 || (graph_mem[i].p = calloc(1, n)) == NULL)
                return CUDA_ERROR_OUT_OF_MEMORY;
            graph_mem[i].n = n;
            *p = (CUdeviceptr)(uintptr_t)graph_mem[i].p;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Device memory a node may name: an allocation or graph memory. */
static int node_mem(CUdeviceptr p)
{
    return alloc_of(p) >= 0 || graph_mem_of(p) >= 0;
}

#define MOCK_GRAPH_OBJS 16

struct mock_graph {
    unsigned n;
    struct mock_node node[MOCK_NODES];
    unsigned nobjs;
    CUuserObject objs[MOCK_GRAPH_OBJS];
};

/* User objects: a count of references; a graph holds up to
 * MOCK_GRAPH_OBJS of them, released when it is destroyed. */
struct mock_uobj {
    void *ptr;
    CUhostFn destroy;
    unsigned refs;
};

static CUresult mock_uobj_create(CUuserObject *o, void *ptr, CUhostFn fn,
                                 unsigned refs, unsigned flags)
{
    if (fn == NULL || refs == 0 ||
        flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
        return CUDA_ERROR_INVALID_VALUE;
    struct mock_uobj *u = malloc(sizeof(*u));
    if (u == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *u = (struct mock_uobj){ptr, fn, refs};
    *o = (CUuserObject)u;
    return CUDA_SUCCESS;
}

static CUresult mock_uobj_retain(CUuserObject o, unsigned n)
{
    ((struct mock_uobj *)o)->refs += n;
    return CUDA_SUCCESS;
}

static CUresult mock_uobj_release(CUuserObject o, unsigned n)
{
    struct mock_uobj *u = (struct mock_uobj *)o;
    if (n > u->refs)
        return CUDA_ERROR_INVALID_VALUE;
    if ((u->refs -= n) == 0) {
        u->destroy(u->ptr);
        free(u);
    }
    return CUDA_SUCCESS;
}

#define MOCK_GRAPHS 16
static struct mock_graph *graphs[MOCK_GRAPHS];

static CUresult mock_graph_create(CUgraph *g, unsigned flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < MOCK_GRAPHS; i++)
        if (graphs[i] == NULL) {
            if ((graphs[i] = calloc(1, sizeof(*graphs[i]))) == NULL)
                return CUDA_ERROR_OUT_OF_MEMORY;
            *g = (CUgraph)graphs[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult mock_graph_destroy(CUgraph g)
{
    struct mock_graph *m = (struct mock_graph *)g;
    for (int i = 0; i < MOCK_GRAPHS; i++)
        if (graphs[i] == m)
            graphs[i] = NULL;
    for (unsigned i = 0; i < m->nobjs; i++)
        (void)mock_uobj_release(m->objs[i], 1);
    free(g);
    return CUDA_SUCCESS;
}

/* One reference a call, moved or retained. */
static CUresult mock_graph_retain(CUgraph g, CUuserObject o, unsigned n,
                                  unsigned flags)
{
    struct mock_graph *m = (struct mock_graph *)g;
    if (n != 1 || m->nobjs == MOCK_GRAPH_OBJS)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!(flags & CU_GRAPH_USER_OBJECT_MOVE))
        (void)mock_uobj_retain(o, 1);
    m->objs[m->nobjs++] = o;
    return CUDA_SUCCESS;
}

/* The mock finds a node's graph by the node's place in it. */
static struct mock_graph *graph_of_node(const struct mock_node *n)
{
    for (int i = 0; i < MOCK_GRAPHS; i++)
        if (graphs[i] != NULL && n >= graphs[i]->node &&
            n < graphs[i]->node + graphs[i]->n)
            return graphs[i];
    return NULL;
}

/* Conditional nodes: a handle the mock handed out, in the current
 * context, of one or two bodies (not run: the mock's graphs run their
 * own nodes only); the bodies stay until the worker exits. */
static unsigned long long cond_handles;

static CUresult mock_cond_handle(CUgraphConditionalHandle *h, CUgraph g,
                                 CUcontext ctx, unsigned value,
                                 unsigned flags)
{
    (void)value;
    if (g == NULL || ctx != current || flags > CU_GRAPH_COND_ASSIGN_DEFAULT)
        return CUDA_ERROR_INVALID_VALUE;
    *h = ++cond_handles;
    return CUDA_SUCCESS;
}

static CUresult conditional_of(const CUDA_CONDITIONAL_NODE_PARAMS *k,
                               struct mock_node *n)
{
    if (k->handle == 0 || k->handle > cond_handles || k->ctx != current ||
        k->size == 0 || k->size > 2 || k->phGraph_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < k->size; i++)
        if (mock_graph_create(&k->phGraph_out[i], 0) != CUDA_SUCCESS)
            return CUDA_ERROR_OUT_OF_MEMORY;
    n->value = (unsigned)k->handle;
    return CUDA_SUCCESS;
}

/* The node's parameters from the driver's generic ones. */
static CUresult node_of(CUgraphNodeParams *p, struct mock_node *n)
{
    memset(n, 0, sizeof(*n));
    n->type = p->type;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUfunction f = p->kernel.func != NULL ? p->kernel.func
                                              : (CUfunction)p->kernel.kern;
        const struct mock_kernel *k = kernel_of(f);
        if (k == NULL)
            return CUDA_ERROR_INVALID_HANDLE;
        n->f = f;
        n->grid = p->kernel.gridDimX;
        n->block = p->kernel.blockDimX;
        void **extra = p->kernel.extra;
        if (p->kernel.kernelParams != NULL) {
            for (unsigned i = 0; i < k->nparams; i++)
                memcpy(n->params + k->offset[i], p->kernel.kernelParams[i],
                       k->size[i]);
        } else if (extra != NULL &&
                   extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER &&
                   extra[2] == CU_LAUNCH_PARAM_BUFFER_SIZE &&
                   *(size_t *)extra[3] == sizeof(n->params)) {
            memcpy(n->params, extra[1], sizeof(n->params));
        } else {
            return CUDA_ERROR_INVALID_VALUE;
        }
        return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
        /* Host sides (the worker's memory: plain memory here too) are
         * taken as they are. */
        const CUDA_MEMCPY3D *c = &p->memcpy.copyParams;
        int dst_host = c->dstMemoryType == CU_MEMORYTYPE_HOST,
            src_host = c->srcMemoryType == CU_MEMORYTYPE_HOST;
        if ((!src_host && c->srcMemoryType != CU_MEMORYTYPE_DEVICE &&
             c->srcMemoryType != CU_MEMORYTYPE_UNIFIED) ||
            (!dst_host && c->dstMemoryType != CU_MEMORYTYPE_DEVICE &&
             c->dstMemoryType != CU_MEMORYTYPE_UNIFIED) ||
            c->Depth != 1 || c->Height != 1 ||
            (!dst_host && !node_mem(c->dstDevice)) ||
            (!src_host && !node_mem(c->srcDevice)) ||
            (dst_host && c->dstHost == NULL) || (src_host && c->srcHost == NULL))
            return CUDA_ERROR_INVALID_VALUE;
        n->dst = dst_host ? (CUdeviceptr)(uintptr_t)c->dstHost : c->dstDevice;
        n->src = src_host ? (CUdeviceptr)(uintptr_t)c->srcHost : c->srcDevice;
        n->width = c->WidthInBytes;
        n->types[0] = c->dstMemoryType;
        n->types[1] = c->srcMemoryType;
        return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET:
        if (p->memset.elementSize != 4 || !node_mem(p->memset.dst))
            return CUDA_ERROR_INVALID_VALUE;
        n->dst = p->memset.dst;
        n->width = p->memset.width;
        n->rows = p->memset.height;
        n->pitch = p->memset.pitch;
        n->value = p->memset.value;
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_HOST:
        if (p->host.fn == NULL)
            return CUDA_ERROR_INVALID_VALUE;
        n->host = p->host.fn;
        n->user = p->host.userData;
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        if (p->alloc.poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
            return CUDA_ERROR_INVALID_VALUE;
        n->width = p->alloc.bytesize;
        if (graph_mem_alloc(n->width, &n->dst) != CUDA_SUCCESS)
            return CUDA_ERROR_OUT_OF_MEMORY;
        p->alloc.dptr = n->dst;
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        n->dst = p->free.dptr;
        return graph_mem_of(n->dst) >= 0 ? CUDA_SUCCESS
                                         : CUDA_ERROR_INVALID_VALUE;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        return conditional_of(&p->conditional, n);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        if (p->memOp.ctx == NULL || p->memOp.flags != 0 ||
            p->memOp.count == 0 || p->memOp.count > 2)
            return CUDA_ERROR_INVALID_VALUE;
        for (unsigned i = 0; i < p->memOp.count; i++) {
            CUresult r = mock_memop_check(&p->memOp.paramArray[i]);
            if (r != CUDA_SUCCESS)
                return r;
            n->ops[i] = p->memOp.paramArray[i];
        }
        n->ctx = p->memOp.ctx;
        n->nops = p->memOp.count;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}


/* Node queries, as CUDA answers them: the node's type, else
 * CUDA_ERROR_INVALID_VALUE. */
static const struct mock_node *typed_node(CUgraphNode node,
                                          CUgraphNodeType type)
{
    const struct mock_node *n = (const struct mock_node *)node;
    return n != NULL && n->type == type ? n : NULL;
}

static CUresult mock_node_type(CUgraphNode node, CUgraphNodeType *type)
{
    *type = ((const struct mock_node *)node)->type;
    return CUDA_SUCCESS;
}

static CUresult mock_kernel_params(CUgraphNode node,
                                   CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    struct mock_node *n =
        (struct mock_node *)typed_node(node, CU_GRAPH_NODE_TYPE_KERNEL);
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const struct mock_kernel *k = kernel_of(n->f);
    for (unsigned i = 0; i < k->nparams; i++)
        n->args[i] = n->params + k->offset[i];
    memset(p, 0, sizeof(*p));
    p->func = n->f;
    p->gridDimX = n->grid;
    p->gridDimY = p->gridDimZ = 1;
    p->blockDimX = n->block;
    p->blockDimY = p->blockDimZ = 1;
    p->kernelParams = n->args;
    return CUDA_SUCCESS;
}

static CUresult mock_memset_params(CUgraphNode node,
                                   CUDA_MEMSET_NODE_PARAMS *p)
{
    const struct mock_node *n = typed_node(node, CU_GRAPH_NODE_TYPE_MEMSET);
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *p = (CUDA_MEMSET_NODE_PARAMS){n->dst, n->pitch, n->value, 4, n->width,
                                   n->rows};
    return CUDA_SUCCESS;
}

static CUresult mock_memcpy_params(CUgraphNode node, CUDA_MEMCPY3D *p)
{
    const struct mock_node *n = typed_node(node, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(*p));
    p->dstMemoryType = n->types[0];
    p->srcMemoryType = n->types[1];
    if (n->types[1] == CU_MEMORYTYPE_HOST)
        p->srcHost = (const void *)(uintptr_t)n->src;
    else
        p->srcDevice = n->src;
    if (n->types[0] == CU_MEMORYTYPE_HOST)
        p->dstHost = (void *)(uintptr_t)n->dst;
    else
        p->dstDevice = n->dst;
    p->WidthInBytes = n->width;
    p->Height = p->Depth = 1;
    return CUDA_SUCCESS;
}

static CUresult mock_host_params(CUgraphNode node, CUDA_HOST_NODE_PARAMS *p)
{
    const struct mock_node *n = typed_node(node, CU_GRAPH_NODE_TYPE_HOST);
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *p = (CUDA_HOST_NODE_PARAMS){n->host, n->user};
    return CUDA_SUCCESS;
}

static CUresult mock_alloc_params(CUgraphNode node,
                                  CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    const struct mock_node *n =
        typed_node(node, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(*p));
    p->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->bytesize = n->width;
    p->dptr = n->dst;
    return CUDA_SUCCESS;
}

static CUresult mock_free_params(CUgraphNode node, CUdeviceptr *p)
{
    const struct mock_node *n = typed_node(node, CU_GRAPH_NODE_TYPE_MEM_FREE);
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *p = n->dst;
    return CUDA_SUCCESS;
}

static CUresult mock_memop_params(CUgraphNode node,
                                  CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
    struct mock_node *n =
        (struct mock_node *)typed_node(node, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *p = (CUDA_BATCH_MEM_OP_NODE_PARAMS){n->ctx, n->nops, n->ops, 0};
    return CUDA_SUCCESS;
}

/* Kernel node attributes: the priority alone. */
static CUresult mock_node_attr(CUgraphNode node, CUkernelNodeAttrID attr,
                               CUkernelNodeAttrValue *v, int set)
{
    struct mock_node *n =
        (struct mock_node *)typed_node(node, CU_GRAPH_NODE_TYPE_KERNEL);
    if (n == NULL || attr != CU_LAUNCH_ATTRIBUTE_PRIORITY)
        return CUDA_ERROR_INVALID_VALUE;
    if (set)
        n->priority = v->priority;
    else
        v->priority = n->priority;
    return CUDA_SUCCESS;
}

static CUresult mock_get_node_attr(CUgraphNode node, CUkernelNodeAttrID attr,
                                   CUkernelNodeAttrValue *v)
{
    return mock_node_attr(node, attr, v, 0);
}

static CUresult mock_set_node_attr(CUgraphNode node, CUkernelNodeAttrID attr,
                                   const CUkernelNodeAttrValue *v)
{
    return mock_node_attr(node, attr, (CUkernelNodeAttrValue *)v, 1);
}

static CUresult mock_copy_node_attrs(CUgraphNode dst, CUgraphNode src)
{
    struct mock_node *d =
        (struct mock_node *)typed_node(dst, CU_GRAPH_NODE_TYPE_KERNEL);
    const struct mock_node *s = typed_node(src, CU_GRAPH_NODE_TYPE_KERNEL);
    if (d == NULL || s == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    d->priority = s->priority;
    return CUDA_SUCCESS;
}

/* A device's graph memory: every attribute is the bytes graph memory
 * holds; the high watermarks can be set to 0 (ignored here). */
static CUresult mock_graph_mem_get(CUdevice dev, CUgraphMem_attribute attr,
                                   void *v)
{
    cuuint64_t bytes = 0;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if ((unsigned)attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < MOCK_GRAPH_MEM; i++)
        bytes += graph_mem[i].n;
    *(cuuint64_t *)v = bytes;
    return CUDA_SUCCESS;
}

static CUresult mock_graph_mem_set(CUdevice dev, CUgraphMem_attribute attr,
                                   void *v)
{
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    return (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH ||
            attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) &&
                   *(cuuint64_t *)v == 0
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_graph_mem_trim(CUdevice dev)
{
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult mock_graph_add(CUgraphNode *out, CUgraph g,
                               const CUgraphNode *deps, size_t ndeps,
                               CUgraphNodeParams *p)
{
    struct mock_graph *m = (struct mock_graph *)g;
    for (size_t i = 0; i < ndeps; i++)
        if ((struct mock_node *)deps[i] < m->node ||
            (struct mock_node *)deps[i] >= m->node + m->n)
            return CUDA_ERROR_INVALID_VALUE;
    if (m->n == MOCK_NODES || ndeps > 4)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct mock_node *n = &m->node[m->n];
    CUresult r = node_of(p, n);
    for (size_t i = 0; r == CUDA_SUCCESS && i < ndeps; i++)
        n->deps[n->ndeps++] = (const struct mock_node *)deps[i];
    if (r == CUDA_SUCCESS)
        *out = (CUgraphNode)&m->node[m->n++];
    return r;
}

static CUresult mock_add_deps(CUgraph g, const CUgraphNode *from,
                              const CUgraphNode *to, size_t n)
{
    (void)g;
    for (size_t i = 0; i < n; i++) {
        struct mock_node *t = (struct mock_node *)to[i];
        if (t->ndeps == 4)
            return CUDA_ERROR_OUT_OF_MEMORY;
        t->deps[t->ndeps++] = (const struct mock_node *)from[i];
    }
    return CUDA_SUCCESS;
}

/* Edges of no data: every edge, or those into one node. */
static CUresult list_edges(const struct mock_graph *m,
                           const struct mock_node *into, CUgraphNode *from,
                           CUgraphNode *to, CUgraphEdgeData *ed, size_t *n)
{
    size_t k = 0;
    for (unsigned i = 0; i < m->n; i++) {
        const struct mock_node *t = &m->node[i];
        for (unsigned j = 0; j < t->ndeps && (into == NULL || into == t);
             j++, k++) {
            if (from == NULL || k >= *n)
                continue;
            from[k] = (CUgraphNode)t->deps[j];
            if (to != NULL)
                to[k] = (CUgraphNode)t;
            if (ed != NULL)
                memset(&ed[k], 0, sizeof(ed[k]));
        }
    }
    *n = from != NULL && k > *n ? *n : k;
    return CUDA_SUCCESS;
}

static CUresult mock_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to,
                           CUgraphEdgeData *ed, size_t *n)
{
    return list_edges((struct mock_graph *)g, NULL, from, to, ed, n);
}

static CUresult mock_node_deps(CUgraphNode node, CUgraphNode *deps,
                               CUgraphEdgeData *ed, size_t *n)
{
    const struct mock_node *t = (const struct mock_node *)node;
    struct mock_graph *m = graph_of_node(t);
    return m != NULL ? list_edges(m, t, deps, NULL, ed, n)
                     : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_node_set(CUgraphNode node, CUgraphNodeParams *p)
{
    struct mock_node n, *to = (struct mock_node *)node;
    CUresult r = node_of(p, &n);
    if (r == CUDA_SUCCESS && n.type != to->type)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *to = n;
    return r;
}

/* Only the graph the executable graph was made from knows the node's
 * index: the mock keeps it beside the copy. */
struct mock_exec {
    struct mock_graph *from;
    struct mock_graph copy;
};

static CUresult mock_exec_set(CUgraphExec x, CUgraphNode node,
                              CUgraphNodeParams *p)
{
    struct mock_exec *e = (struct mock_exec *)x;
    ptrdiff_t i = (struct mock_node *)node - e->from->node;
    if (i < 0 || i >= (ptrdiff_t)e->copy.n)
        return CUDA_ERROR_INVALID_VALUE;
    return mock_node_set((CUgraphNode)&e->copy.node[i], p);
}

static CUresult mock_instantiate(CUgraphExec *x, CUgraph g,
                                 unsigned long long flags)
{
    struct mock_exec *e = malloc(sizeof(*e));
    if (e == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->from = (struct mock_graph *)g;
    e->copy = *e->from;
    /* The executable graph holds references of its own, as CUDA's. */
    for (unsigned i = 0; i < e->copy.nobjs; i++)
        (void)mock_uobj_retain(e->copy.objs[i], 1);
    *x = (CUgraphExec)e;
    return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_exec_destroy(CUgraphExec x)
{
    struct mock_exec *e = (struct mock_exec *)x;
    for (unsigned i = 0; i < e->copy.nobjs; i++)
        (void)mock_uobj_release(e->copy.objs[i], 1);
    free(x);
    return CUDA_SUCCESS;
}

static CUresult mock_graph_launch(CUgraphExec x, CUstream s)
{
    const struct mock_graph *m = &((struct mock_exec *)x)->copy;
    CUresult r = CUDA_SUCCESS;
    for (unsigned i = 0; i < m->n && r == CUDA_SUCCESS; i++) {
        const struct mock_node *n = &m->node[i];
        size_t size = sizeof(n->params);
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)n->params,
                         CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                         CU_LAUNCH_PARAM_END};
        if (n->type == CU_GRAPH_NODE_TYPE_KERNEL)
            r = mock_launch(n->f, n->grid, 1, 1, n->block, 1, 1, 0, s, NULL,
                            extra);
        else if (n->type == CU_GRAPH_NODE_TYPE_MEMCPY)
            r = mock_d2d(n->dst, n->src, n->width);
        else if (n->type == CU_GRAPH_NODE_TYPE_MEMSET)
            r = mock_set2d32(n->dst, n->pitch, n->value, n->width, n->rows);
        else if (n->type == CU_GRAPH_NODE_TYPE_HOST)
            r = cuda_be_drv.cuLaunchHostFunc(s, n->host, n->user);
        for (unsigned j = 0;
             n->type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP && j < n->nops; j++)
            mock_memop_run(&n->ops[j]);
    }
    return r;
}

/* The description: a line a node. */
static CUresult mock_dot(CUgraph g, const char *path, unsigned flags)
{
    struct mock_graph *m = (struct mock_graph *)g;
    FILE *f = fopen(path, "w");
    (void)flags;
    if (f == NULL)
        return CUDA_ERROR_OPERATING_SYSTEM;
    fprintf(f, "digraph mock {\n");
    for (unsigned i = 0; i < m->n; i++)
        fprintf(f, "  node%u [type=%d];\n", i, (int)m->node[i].type);
    fprintf(f, "}\n");
    return fclose(f) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
}

static CUresult mock_graph_nodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
    struct mock_graph *m = (struct mock_graph *)g;
    size_t i = 0;
    for (; nodes != NULL && i < *n && i < m->n; i++)
        nodes[i] = (CUgraphNode)&m->node[i];
    *n = nodes != NULL ? i : m->n;
    return CUDA_SUCCESS;
}

/* Fills what every generated handler calls and the mock has no answer
 * for with one that fails: the tests that reach them check the
 * failure. */
static void fill_rest(void)
{
    cuda_be_drv.cuDevicePrimaryCtxRetain = mock_retain;
    cuda_be_drv.cuDevicePrimaryCtxRelease_v2 = mock_release;
    cuda_be_drv.cuDevicePrimaryCtxReset_v2 = mock_reset;
    cuda_be_drv.cuDevicePrimaryCtxGetState = mock_primary_state;
    cuda_be_drv.cuDevicePrimaryCtxSetFlags_v2 = mock_primary_flags;
    cuda_be_drv.cuFuncGetAttribute = mock_func_attr;
    cuda_be_drv.cuKernelGetAttribute = mock_kernel_attr;
    cuda_be_drv.cuKernelSetAttribute = mock_kernel_set_attr;
    cuda_be_drv.cuOccupancyMaxActiveBlocksPerMultiprocessor = mock_occupancy;
    cuda_be_drv.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags =
        mock_occupancy_flags;
    cuda_be_drv.cuFuncSetAttribute = mock_func_set_attr;
    cuda_be_drv.cuFuncSetCacheConfig = mock_func_cache;
    cuda_be_drv.cuCtxCreate_v2 = mock_ctx_create;
    cuda_be_drv.cuCtxDestroy_v2 = mock_ctx_destroy;
    cuda_be_drv.cuCtxSynchronize = mock_ctx_sync;
    cuda_be_drv.cuStreamGetCtx = mock_stream_ctx;
    cuda_be_drv.cuCtxGetCurrent = mock_get_current;
    cuda_be_drv.cuCtxSetCurrent = mock_set_current;
    cuda_be_drv.cuCtxGetDevice = mock_ctx_device;
    cuda_be_drv.cuMemAlloc_v2 = mock_alloc;
    cuda_be_drv.cuMemFree_v2 = mock_free;
    cuda_be_drv.cuMemAllocManaged = mock_alloc_managed;
    cuda_be_drv.cuDeviceGetHostAtomicCapabilities = mock_atomic_caps;
    cuda_be_drv.cuLogsDumpToMemory = mock_logs_dump;
    cuda_be_drv.cuIpcGetMemHandle = mock_ipc_get;
    cuda_be_drv.cuIpcOpenMemHandle_v2 = mock_ipc_open;
    cuda_be_drv.cuIpcCloseMemHandle = mock_ipc_close;
    cuda_be_drv.cuMemGetAddressRange_v2 = mock_range;
    cuda_be_drv.cuMemPoolCreate = mock_pool_create;
    cuda_be_drv.cuMemPoolDestroy = mock_pool_destroy;
    cuda_be_drv.cuMemPoolSetAttribute = mock_pool_set_attr;
    cuda_be_drv.cuMemPoolGetAttribute = mock_pool_get_attr;
    cuda_be_drv.cuDeviceGetDefaultMemPool = mock_default_pool;
    cuda_be_drv.cuDeviceGetMemPool = mock_current_pool;
    cuda_be_drv.cuDeviceSetMemPool = mock_set_pool;
    cuda_be_drv.cuMemAllocAsync = mock_alloc_async;
    cuda_be_drv.cuMemAllocFromPoolAsync = mock_alloc_pool;
    cuda_be_drv.cuMemFreeAsync = mock_free_async;
    cuda_be_drv.cuMemAdvise_v2 = mock_advise;
    cuda_be_drv.cuMemRangeGetAttribute = mock_range_attribute;
    cuda_be_drv.cuProfilerStart = mock_no_args;
    cuda_be_drv.cuProfilerStop = mock_no_args;
    cuda_be_drv.cuCtxResetPersistingL2Cache = mock_no_args;
    cuda_be_drv.cuMemAllocPitch_v2 = mock_alloc_pitch;
    cuda_be_drv.cuMemGetInfo_v2 = mock_mem_info;
    cuda_be_drv.cuPointerGetAttribute = mock_pointer;
    cuda_be_drv.cuMemHostRegister_v2 = mock_host_register;
    cuda_be_drv.cuMemHostUnregister = mock_host_unregister;
    cuda_be_drv.cuMemHostAlloc = mock_host_alloc;
    cuda_be_drv.cuMemFreeHost = mock_free_host;
    cuda_be_drv.cuMemHostGetDevicePointer_v2 = mock_host_device_pointer;
    cuda_be_drv.cuMemcpyHtoD_v2 = mock_h2d;
    cuda_be_drv.cuMemcpyHtoDAsync_v2 = mock_h2d_async;
    cuda_be_drv.cuMemcpyDtoH_v2 = mock_d2h;
    cuda_be_drv.cuMemcpyDtoHAsync_v2 = mock_d2h_async;
    cuda_be_drv.cuMemcpyDtoD_v2 = mock_d2d;
    cuda_be_drv.cuMemcpyDtoDAsync_v2 = mock_d2d_async;
    cuda_be_drv.cuMemsetD8_v2 = mock_set8;
    cuda_be_drv.cuMemsetD16_v2 = mock_set16;
    cuda_be_drv.cuMemsetD32_v2 = mock_set32;
    cuda_be_drv.cuMemsetD8Async = mock_set8a;
    cuda_be_drv.cuMemsetD16Async = mock_set16a;
    cuda_be_drv.cuMemsetD32Async = mock_set32a;
    cuda_be_drv.cuLibraryLoadData = mock_lib_load;
    cuda_be_drv.cuLibraryGetManaged = mock_lib_managed;
    cuda_be_drv.cuModuleLoadDataEx = mock_mod_load;
    *(void **)&cuda_be_drv.cuLibraryUnload = (void *)mock_unload;
    *(void **)&cuda_be_drv.cuModuleUnload = (void *)mock_unload;
    *(void **)&cuda_be_drv.cuLibraryGetKernelCount = (void *)mock_kernel_count;
    *(void **)&cuda_be_drv.cuModuleGetFunctionCount = (void *)mock_kernel_count;
    *(void **)&cuda_be_drv.cuLibraryEnumerateKernels = (void *)mock_enumerate;
    *(void **)&cuda_be_drv.cuModuleEnumerateFunctions = (void *)mock_enumerate;
    *(void **)&cuda_be_drv.cuKernelGetName = (void *)mock_kernel_name;
    *(void **)&cuda_be_drv.cuFuncGetName = (void *)mock_kernel_name;
    *(void **)&cuda_be_drv.cuKernelGetParamInfo = (void *)mock_param;
    *(void **)&cuda_be_drv.cuFuncGetParamInfo = (void *)mock_param;
    cuda_be_drv.cuKernelGetFunction = mock_kernel_function;
    cuda_be_drv.cuLaunchKernel = mock_launch;
    cuda_be_drv.cuLaunchKernelEx = mock_launch_ex;
    cuda_be_drv.cuMemcpy2D_v2 = mock_copy2d;
    cuda_be_drv.cuMemcpy2DAsync_v2 = mock_copy2d_async;
    cuda_be_drv.cuMemsetD2D32_v2 = mock_set2d32;
    cuda_be_drv.cuMemsetD2D32Async = mock_set2d32a;
    cuda_be_drv.cuMemsetD2D8_v2 = mock_set2d8;
    cuda_be_drv.cuMemsetD2D8Async = mock_set2d8a;
    cuda_be_drv.cuStreamCreateWithPriority = mock_stream_create;
    cuda_be_drv.cuStreamDestroy_v2 = (__typeof__(cuda_be_drv.cuStreamDestroy_v2))mock_destroy;
    cuda_be_drv.cuEventCreate = mock_event_create;
    cuda_be_drv.cuStreamGetId = mock_stream_id;
    cuda_be_drv.cuStreamGetCaptureInfo_v3 = mock_capture_info;
    cuda_be_drv.cuThreadExchangeStreamCaptureMode = mock_capture_mode;
    cuda_be_drv.cuEventRecord = mock_record;
    cuda_be_drv.cuEventRecordWithFlags = mock_record_flags;
    cuda_be_drv.cuStreamWaitEvent = mock_wait;
    *(void **)&cuda_be_drv.cuEventSynchronize = (void *)mock_done;
    *(void **)&cuda_be_drv.cuEventQuery = (void *)mock_done;
    cuda_be_drv.cuEventDestroy_v2 = (__typeof__(cuda_be_drv.cuEventDestroy_v2))mock_destroy;
    mock_callbacks_fill();
    mock_arrays_fill();
    cuda_be_drv.cuGraphCreate = mock_graph_create;
    cuda_be_drv.cuGraphDestroy = mock_graph_destroy;
    cuda_be_drv.cuGraphExecDestroy = mock_exec_destroy;
    cuda_be_drv.cuGraphAddDependencies = mock_add_deps;
    cuda_be_drv.cuUserObjectCreate = mock_uobj_create;
    cuda_be_drv.cuUserObjectRetain = mock_uobj_retain;
    cuda_be_drv.cuUserObjectRelease = mock_uobj_release;
    cuda_be_drv.cuGraphRetainUserObject = mock_graph_retain;
    cuda_be_drv.cuGraphGetEdges_v2 = mock_edges;
    cuda_be_drv.cuGraphNodeGetDependencies_v2 = mock_node_deps;
    *(void **)&cuda_be_drv.cuGraphDestroyNode = (void *)mock_destroy;
    cuda_be_drv.cuGraphAddNode = mock_graph_add;
    cuda_be_drv.cuGraphNodeSetParams = mock_node_set;
    cuda_be_drv.cuGraphExecNodeSetParams = mock_exec_set;
    cuda_be_drv.cuGraphInstantiateWithFlags = mock_instantiate;
    cuda_be_drv.cuGraphLaunch = mock_graph_launch;
    cuda_be_drv.cuGraphGetNodes = mock_graph_nodes;
    cuda_be_drv.cuGraphDebugDotPrint = mock_dot;
    mock_peer_fill();
    mock_link_fill();
    mock_batch_fill();
    mock_vmm_fill();
    cuda_be_drv.cuGraphNodeGetType = mock_node_type;
    cuda_be_drv.cuGraphKernelNodeGetParams_v2 = mock_kernel_params;
    cuda_be_drv.cuGraphMemsetNodeGetParams = mock_memset_params;
    cuda_be_drv.cuGraphMemcpyNodeGetParams = mock_memcpy_params;
    cuda_be_drv.cuGraphHostNodeGetParams = mock_host_params;
    cuda_be_drv.cuGraphMemAllocNodeGetParams = mock_alloc_params;
    cuda_be_drv.cuGraphMemFreeNodeGetParams = mock_free_params;
    cuda_be_drv.cuGraphKernelNodeGetAttribute = mock_get_node_attr;
    cuda_be_drv.cuGraphKernelNodeSetAttribute = mock_set_node_attr;
    cuda_be_drv.cuGraphKernelNodeCopyAttributes = mock_copy_node_attrs;
    cuda_be_drv.cuDeviceGetGraphMemAttribute = mock_graph_mem_get;
    cuda_be_drv.cuDeviceSetGraphMemAttribute = mock_graph_mem_set;
    cuda_be_drv.cuDeviceGraphMemTrim = mock_graph_mem_trim;
    cuda_be_drv.cuGraphConditionalHandleCreate = mock_cond_handle;
    cuda_be_drv.cuGraphBatchMemOpNodeGetParams = mock_memop_params;
    mock_memops_fill();
#define CUDA_MOCK_FAIL(name)                                                 \
    if (cuda_be_drv.name == NULL)                                            \
        *(void **)&cuda_be_drv.name = (void *)mock_fail;
    CUDA_BE_CALLED(CUDA_MOCK_FAIL)
    CUDA_BE_CALLED_BY_HAND(CUDA_MOCK_FAIL)
#undef CUDA_MOCK_FAIL
}

int cuda_be_driver_load(void)
{
    cuda_be_drv.cuDeviceCanAccessPeer = mock_peer;
    cuda_be_drv.cuDeviceGetP2PAttribute = mock_p2p;
    cuda_be_drv.cuDeviceGetProperties = mock_properties;
    cuda_be_drv.cuDeviceGetTexture1DLinearMaxWidth = mock_tex1d;
    cuda_be_drv.cuDeviceGetExecAffinitySupport = mock_affinity;
    cuda_be_drv.cuDeviceGetPCIBusId = mock_bus_id;
    cuda_be_drv.cuDeviceGetByPCIBusId = mock_by_bus_id;
    cuda_be_drv.cuInit = mock_init;
    cuda_be_drv.cuDriverGetVersion = mock_version;
    cuda_be_drv.cuDeviceGetCount = mock_count;
    cuda_be_drv.cuDeviceGet = mock_get;
    cuda_be_drv.cuDeviceGetAttribute = mock_attribute;
    cuda_be_drv.cuDeviceGetUuid = mock_uuid;
    cuda_be_drv.cuDeviceGetUuid_v2 = mock_uuid;
    cuda_be_drv.cuDeviceComputeCapability = mock_capability;
    cuda_be_drv.cuDeviceTotalMem_v2 = mock_total;
    cuda_be_drv.cuDeviceGetName = mock_name;
    fill_rest();
    /* A function the backend calls that the mock lacks leaves the mock
     * "without a driver": every call fails, and so does the test. */
#define CUDA_MOCK_SET(name)                                                  \
    if (cuda_be_drv.name == NULL)                                            \
        return -1;
    CUDA_BE_CALLED(CUDA_MOCK_SET)
    CUDA_BE_CALLED_BY_HAND(CUDA_MOCK_SET)
#undef CUDA_MOCK_SET
    return 0;
}
