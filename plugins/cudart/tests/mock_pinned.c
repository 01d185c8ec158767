/* Page-locked host allocations (the backend's staging of bulk copies)
 * and cudaEventRecord, for the host-memory mock of the CUDA runtime.  An
 * async copy from page-locked memory reads it when the copy runs, not
 * when it is queued, as a DMA would: mock_streams.c asks
 * mock_host_pinned whether to take the bytes at once. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

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
    char *b = malloc(size ? size : 1);
    if (b == NULL)
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
        free(b);
        return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    if (p == NULL)
        return cudaSuccess;
    cudaError_t e = cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_PINNED; i++)
        if (pinned[i].base == p) {
            pinned[i].base = NULL;
            e = cudaSuccess;
        }
    pthread_mutex_unlock(&lock);
    if (e == cudaSuccess)
        free(p);
    return e;
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
