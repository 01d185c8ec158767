/* Page-locked host allocations (the backend's staging of bulk copies)
 * and cudaEventRecord, for the host-memory mock of the CUDA runtime.  An
 * async copy from page-locked memory reads it when the copy runs, not
 * when it is queued, as a DMA would: mock_streams.c asks
 * mock_host_pinned whether to take the bytes at once.  A device reset
 * frees them all, as the end of the context they were made in does:
 * unmapped, so that a use after it faults. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cuda_runtime_api.h>

#include "mock_streams.h"

#define MAX_PINNED 256

static struct {
    char *base;
    size_t size;
} pinned[MAX_PINNED];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags)
{
    if (p == NULL || (flags & ~(unsigned)(cudaHostAllocPortable |
                                          cudaHostAllocMapped |
                                          cudaHostAllocWriteCombined)))
        return cudaErrorInvalidValue;
    *p = NULL;
    size = size ? size : 1;
    char *b = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_PINNED && *p == NULL; i++)
        if (pinned[i].base == NULL) {
            pinned[i].base = b;
            pinned[i].size = size;
            *p = b;
        }
    pthread_mutex_unlock(&lock);
    if (*p == NULL) {
        munmap(b, size);
        return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    if (p == NULL)
        return cudaSuccess;
    cudaError_t e = cudaErrorInvalidValue;
    size_t size = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_PINNED; i++)
        if (pinned[i].base == p) {
            pinned[i].base = NULL;
            size = pinned[i].size;
            e = cudaSuccess;
        }
    pthread_mutex_unlock(&lock);
    if (e == cudaSuccess)
        munmap(p, size ? size : 1);
    return e;
}

void mock_pinned_reset(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_PINNED; i++)
        if (pinned[i].base != NULL) {
            munmap(pinned[i].base, pinned[i].size ? pinned[i].size : 1);
            pinned[i].base = NULL;
        }
    pthread_mutex_unlock(&lock);
}

int mock_host_pinned(const void *p)
{
    const char *c = p;
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_PINNED && !found; i++)
        found = pinned[i].base != NULL && c >= pinned[i].base &&
                c < pinned[i].base + pinned[i].size;
    pthread_mutex_unlock(&lock);
    return found;
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    return cudaEventRecordWithFlags(ev, s, 0);
}
