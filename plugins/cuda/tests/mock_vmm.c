/*
 * The mock driver's virtual memory API (mock_driver.c): a reservation is
 * address space of the worker (PROT_NONE), a physical allocation a memfd,
 * a mapping the memfd mapped there (MAP_SHARED: two mappings of one
 * allocation show the same bytes), and access its protection.  The
 * granularity is 2 MiB, as on the GPUs CUDA 13 supports; the rules the
 * driver documents are checked (alignment, offset 0, flags 0, whole
 * mappings to unmap, a fully mapped range to set access on).
 */
#include "be.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mock_driver.h"

#define GRANULE ((size_t)2 << 20)
#define MOCK_VMM_MAX 64

/* A physical allocation; free while size is 0.  Handles point here. */
struct phys {
    int fd;
    size_t size;
    CUmemAllocationProp prop;
    unsigned refs, maps;
};

static struct phys physs[MOCK_VMM_MAX];

static struct {
    uintptr_t p;
    size_t n;
} reservations[MOCK_VMM_MAX];

static struct {
    uintptr_t p;
    size_t n;
    struct phys *h;
    unsigned long long access;
} maps[MOCK_VMM_MAX];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Away from the mock's other device addresses (mock_driver.c). */
static uintptr_t next_va = (uintptr_t)0x540000000000ull;

/* Caller holds lock.  The mapping holding p, or -1. */
static int map_of(uintptr_t p)
{
    for (int i = 0; i < MOCK_VMM_MAX; i++)
        if (maps[i].h != NULL && p - maps[i].p < maps[i].n)
            return i;
    return -1;
}

/* Caller holds lock.  Whether [p, p + n) lies in one reservation. */
static int reserved(uintptr_t p, size_t n)
{
    for (int i = 0; i < MOCK_VMM_MAX; i++)
        if (reservations[i].n != 0 && p - reservations[i].p < reservations[i].n &&
            n <= reservations[i].n - (p - reservations[i].p))
            return 1;
    return 0;
}

/* Caller holds lock.  Whether every byte of [p, p + n) is mapped. */
static int fully_mapped(uintptr_t p, size_t n)
{
    while (n > 0) {
        int i = map_of(p);
        if (i < 0)
            return 0;
        size_t step = maps[i].n - (p - maps[i].p);
        if (step >= n)
            return 1;
        p += step;
        n -= step;
    }
    return 0;
}

int mock_vmm_range(CUdeviceptr p, CUdeviceptr *base, size_t *size)
{
    pthread_mutex_lock(&lock);
    int i = map_of((uintptr_t)p);
    if (i >= 0 && base != NULL) {
        *base = (CUdeviceptr)maps[i].p;
        *size = maps[i].n;
    }
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

static CUresult valid_prop(const CUmemAllocationProp *prop)
{
    if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return prop->location.id >= 0 && prop->location.id < 2
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult mock_granularity(size_t *g, const CUmemAllocationProp *prop,
                                 CUmemAllocationGranularity_flags option)
{
    CUresult r = valid_prop(prop);
    if (r == CUDA_SUCCESS && option > CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *g = GRANULE;
    return r;
}

static CUresult mock_reserve(CUdeviceptr *p, size_t size, size_t align,
                             CUdeviceptr addr, unsigned long long flags)
{
    (void)addr;
    if (size == 0 || size % GRANULE != 0 || flags != 0 ||
        (align & (align - 1)) != 0 || align > GRANULE)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MOCK_VMM_MAX && r != CUDA_SUCCESS; i++) {
        if (reservations[i].n != 0)
            continue;
        void *m = mmap((void *)next_va, size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                           MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (m == MAP_FAILED)
            break;
        next_va += size + GRANULE;
        reservations[i].p = (uintptr_t)m;
        reservations[i].n = size;
        *p = (CUdeviceptr)(uintptr_t)m;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static CUresult mock_address_free(CUdeviceptr p, size_t size)
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MOCK_VMM_MAX; i++)
        if (reservations[i].n != 0 && reservations[i].p == (uintptr_t)p &&
            reservations[i].n == size && !fully_mapped(p, 1)) {
            munmap((void *)reservations[i].p, size);
            reservations[i].n = 0;
            r = CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&lock);
    return r;
}

static CUresult mock_create(CUmemGenericAllocationHandle *h, size_t size,
                            const CUmemAllocationProp *prop,
                            unsigned long long flags)
{
    CUresult r = valid_prop(prop);
    if (r == CUDA_SUCCESS && (size == 0 || size % GRANULE != 0 || flags != 0))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    struct phys *ph = NULL;
    for (int i = 0; i < MOCK_VMM_MAX && ph == NULL; i++)
        if (physs[i].size == 0)
            ph = &physs[i];
    if (ph != NULL) {
        ph->fd = memfd_create("mock-vmm", MFD_CLOEXEC);
        if (ph->fd >= 0 && ftruncate(ph->fd, (off_t)size) < 0)
            close(ph->fd);
        else if (ph->fd >= 0)
            *ph = (struct phys){ph->fd, size, *prop, 1, 0};
    }
    pthread_mutex_unlock(&lock);
    if (ph == NULL || ph->size == 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *h = (CUmemGenericAllocationHandle)(uintptr_t)ph;
    return CUDA_SUCCESS;
}

/* Caller holds lock.  The memory goes with its last handle and mapping. */
static void settle(struct phys *ph)
{
    if (ph->refs == 0 && ph->maps == 0) {
        close(ph->fd);
        ph->size = 0;
    }
}

static CUresult mock_release(CUmemGenericAllocationHandle h)
{
    struct phys *ph = (struct phys *)(uintptr_t)h;
    pthread_mutex_lock(&lock);
    ph->refs--;
    settle(ph);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static CUresult mock_map(CUdeviceptr p, size_t size, size_t offset,
                         CUmemGenericAllocationHandle h,
                         unsigned long long flags)
{
    struct phys *ph = (struct phys *)(uintptr_t)h;
    if (p % GRANULE != 0 || size == 0 || size % GRANULE != 0 || offset != 0 ||
        flags != 0 || size > ph->size)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    int overlaps = 0;
    for (size_t o = 0; o < size && !overlaps; o += GRANULE)
        overlaps = map_of((uintptr_t)p + o) >= 0;
    for (int i = 0; i < MOCK_VMM_MAX && r != CUDA_SUCCESS &&
                    !overlaps && reserved((uintptr_t)p, size);
         i++) {
        if (maps[i].h != NULL)
            continue;
        if (mmap((void *)(uintptr_t)p, size, PROT_NONE,
                 MAP_SHARED | MAP_FIXED, ph->fd, 0) == MAP_FAILED) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        maps[i].p = (uintptr_t)p;
        maps[i].n = size;
        maps[i].h = ph;
        maps[i].access = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        ph->maps++;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

/* The range must be whole mappings, back to reserved address space. */
static CUresult mock_unmap(CUdeviceptr p, size_t size)
{
    uintptr_t at = (uintptr_t)p, end = at + size;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&lock);
    for (uintptr_t q = at; q < end && r == CUDA_SUCCESS;) {
        int i = map_of(q);
        if (i < 0 || maps[i].p != q || maps[i].n > end - q)
            r = CUDA_ERROR_INVALID_VALUE;
        else
            q += maps[i].n;
    }
    while (r == CUDA_SUCCESS && at < end) {
        int i = map_of(at);
        mmap((void *)maps[i].p, maps[i].n, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        at += maps[i].n;
        maps[i].h->maps--;
        settle(maps[i].h);
        maps[i].h = NULL;
    }
    pthread_mutex_unlock(&lock);
    return size == 0 ? CUDA_ERROR_INVALID_VALUE : r;
}

static CUresult mock_set_access(CUdeviceptr p, size_t size,
                                const CUmemAccessDesc *desc, size_t count)
{
    if (count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++)
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
            desc[i].location.id < 0 || desc[i].location.id >= 2 ||
            (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
             desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
             desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
            return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    if (fully_mapped((uintptr_t)p, size)) {
        int prot = desc[count - 1].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                       ? PROT_READ | PROT_WRITE
                   : desc[count - 1].flags == CU_MEM_ACCESS_FLAGS_PROT_READ
                       ? PROT_READ
                       : PROT_NONE;
        mprotect((void *)(uintptr_t)p, size, prot);
        for (uintptr_t q = (uintptr_t)p; q < (uintptr_t)p + size;) {
            int i = map_of(q);
            maps[i].access = desc[count - 1].flags;
            q = maps[i].p + maps[i].n;
        }
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static CUresult mock_get_access(unsigned long long *flags,
                                const CUmemLocation *loc, CUdeviceptr p)
{
    if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE || loc->id < 0 ||
        loc->id >= 2)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    int i = map_of((uintptr_t)p);
    if (i >= 0)
        *flags = maps[i].access;
    pthread_mutex_unlock(&lock);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_properties(CUmemAllocationProp *prop,
                                CUmemGenericAllocationHandle h)
{
    *prop = ((struct phys *)(uintptr_t)h)->prop;
    return CUDA_SUCCESS;
}

static CUresult mock_retain(CUmemGenericAllocationHandle *h, void *addr)
{
    pthread_mutex_lock(&lock);
    int i = map_of((uintptr_t)addr);
    if (i >= 0) {
        maps[i].h->refs++;
        *h = (CUmemGenericAllocationHandle)(uintptr_t)maps[i].h;
    }
    pthread_mutex_unlock(&lock);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The descriptor is one of the allocation's memfd, as the driver's is
 * one of its own. */
static CUresult mock_export(void *out, CUmemGenericAllocationHandle h,
                            CUmemAllocationHandleType type,
                            unsigned long long flags)
{
    struct phys *ph = (struct phys *)(uintptr_t)h;
    if (flags != 0 || (ph->prop.requestedHandleTypes & type) == 0 ||
        type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = dup(ph->fd);
    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *(int *)out = fd;
    return CUDA_SUCCESS;
}

void mock_vmm_fill(void)
{
    cuda_be_drv.cuMemGetAllocationGranularity = mock_granularity;
    cuda_be_drv.cuMemAddressReserve = mock_reserve;
    cuda_be_drv.cuMemAddressFree = mock_address_free;
    cuda_be_drv.cuMemCreate = mock_create;
    cuda_be_drv.cuMemRelease = mock_release;
    cuda_be_drv.cuMemMap = mock_map;
    cuda_be_drv.cuMemUnmap = mock_unmap;
    cuda_be_drv.cuMemSetAccess = mock_set_access;
    cuda_be_drv.cuMemGetAccess = mock_get_access;
    cuda_be_drv.cuMemGetAllocationPropertiesFromHandle = mock_properties;
    cuda_be_drv.cuMemRetainAllocationHandle = mock_retain;
    cuda_be_drv.cuMemExportToShareableHandle = mock_export;
}
