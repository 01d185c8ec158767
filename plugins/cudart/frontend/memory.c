#include "fe.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs/mem.h"
#include "gvs_remote.h"

/* Allocations made through this frontend, sorted by base, so that
 * cudaMemcpyDefault can tell device pointers from host ones without a
 * round trip.
 *
 * Device addresses belong to the backend's address space, so the same
 * numbers could also be host memory here.  Each allocation's range is
 * reserved (PROT_NONE, no memory) in this process when it is free, which
 * keeps host buffers out of it from then on. */
struct alloc {
    uintptr_t base;
    size_t size;
    int dev;
    int reserved;
};

static int reserve(uintptr_t base, size_t size)
{
    void *want = (void *)base;
    if (size == 0 || base % (uintptr_t)sysconf(_SC_PAGESIZE) != 0)
        return 0;
    void *p = mmap(want, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                       MAP_FIXED_NOREPLACE,
                   -1, 0);
    if (p == MAP_FAILED)
        return 0;
    if (p != want) {
        /* A kernel without MAP_FIXED_NOREPLACE took it as a hint. */
        munmap(p, size);
        return 0;
    }
    return 1;
}

static void unreserve(const struct alloc *a)
{
    if (a->reserved)
        munmap((void *)a->base, a->size);
}

static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs;
static size_t nallocs, cap_allocs;

/* Index of the first allocation whose base is > p. */
static size_t upper_bound(uintptr_t p)
{
    size_t lo = 0, hi = nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (allocs[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int allocs_insert(uintptr_t base, size_t size, int dev)
{
    int ok = 1;
    pthread_mutex_lock(&allocs_lock);
    if (nallocs == cap_allocs) {
        size_t cap = cap_allocs ? cap_allocs * 2 : 64;
        struct alloc *a = gvs_realloc(allocs, cap * sizeof(*a));
        if (a == NULL) {
            ok = 0;
        } else {
            allocs = a;
            cap_allocs = cap;
        }
    }
    if (ok) {
        size_t i = upper_bound(base);
        memmove(&allocs[i + 1], &allocs[i], (nallocs - i) * sizeof(*allocs));
        allocs[i] = (struct alloc){base, size, dev, reserve(base, size)};
        nallocs++;
    }
    pthread_mutex_unlock(&allocs_lock);
    return ok;
}

static void allocs_remove(uintptr_t base)
{
    pthread_mutex_lock(&allocs_lock);
    size_t i = upper_bound(base);
    if (i > 0 && allocs[i - 1].base == base) {
        unreserve(&allocs[i - 1]);
        memmove(&allocs[i - 1], &allocs[i], (nallocs - i) * sizeof(*allocs));
        nallocs--;
    }
    pthread_mutex_unlock(&allocs_lock);
}

int fe_mem_track(const void *base, size_t size)
{
    return allocs_insert((uintptr_t)base, size, fe_thread_device());
}

void fe_mem_untrack(const void *base)
{
    allocs_remove((uintptr_t)base);
}

int fe_is_device_ptr(const void *p)
{
    uintptr_t u = (uintptr_t)p;
    pthread_mutex_lock(&allocs_lock);
    size_t i = upper_bound(u);
    /* A zero-size allocation still owns its base address. */
    int found = i > 0 && u - allocs[i - 1].base <
                             (allocs[i - 1].size ? allocs[i - 1].size : 1);
    pthread_mutex_unlock(&allocs_lock);
    /* Or the driver frontend's (cuMemAlloc, a virtual memory mapping). */
    return found || fe_symbol_contains(p) ||
           gvs_remote_device_memory(CUDART_PLUGIN_ID, (uint64_t)u);
}

int fe_mem_range_device(const void *p, size_t n)
{
    uintptr_t u = (uintptr_t)p;
    pthread_mutex_lock(&allocs_lock);
    size_t i = upper_bound(u);
    int dev = -1;
    if (i > 0 && u - allocs[i - 1].base <= allocs[i - 1].size &&
        n <= allocs[i - 1].size - (u - allocs[i - 1].base))
        dev = allocs[i - 1].dev;
    pthread_mutex_unlock(&allocs_lock);
    return dev;
}

void fe_mem_forget_device(int dev)
{
    pthread_mutex_lock(&allocs_lock);
    size_t j = 0;
    for (size_t i = 0; i < nallocs; i++) {
        if (allocs[i].dev != dev)
            allocs[j++] = allocs[i];
        else
            unreserve(&allocs[i]);
    }
    nallocs = j;
    pthread_mutex_unlock(&allocs_lock);
}

void fe_mem_fork_lock(void)
{
    pthread_mutex_lock(&allocs_lock);
}

void fe_mem_fork_unlock(void)
{
    pthread_mutex_unlock(&allocs_lock);
}

void fe_mem_fork_child(void)
{
    for (size_t i = 0; i < nallocs; i++)
        unreserve(&allocs[i]);
    nallocs = 0;
    pthread_mutex_unlock(&allocs_lock);
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    void *p;
    if (devPtr == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    /* As natively, a failed allocation leaves a null pointer behind. */
    *devPtr = NULL;
    cudaError_t e = cudart_rpc_cudaMalloc(&p, size);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    if (p != NULL && !allocs_insert((uintptr_t)p, size, fe_thread_device())) {
        /* Untracked memory would be misclassified by cudaMemcpyDefault. */
        (void)cudart_rpc_cudaFree(p);
        return cudart_fe_ret(cudaErrorMemoryAllocation);
    }
    *devPtr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
    /* cudaFree(0) goes to the backend too: programs call it to create the
     * device's context before they start timing, as it does natively. */
    cudaError_t e = cudart_rpc_cudaFree(devPtr);
    if (e == cudaSuccess) {
        allocs_remove((uintptr_t)devPtr);
        fe_managed_forget(devPtr);
    }
    return cudart_fe_ret(e);
}
