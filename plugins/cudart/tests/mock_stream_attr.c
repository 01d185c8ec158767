/*
 * Stream attributes for the host-memory mock (mock_streams.c): values
 * kept by stream and attribute id, copied whole by
 * cudaStreamCopyAttributes; nothing reads them.
 */
#include <pthread.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define STREAMS_MAX 64
#define ATTRS_MAX 32

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cudaStream_t s;
    cudaLaunchAttributeValue v[ATTRS_MAX];
} table[STREAMS_MAX];

/* The slot of s, made on first use; caller holds lock.  -1 when full. */
static int slot(cudaStream_t s)
{
    for (int i = 0; i < STREAMS_MAX; i++)
        if (table[i].s == s)
            return i;
    for (int i = 0; i < STREAMS_MAX; i++)
        if (table[i].s == NULL) {
            table[i].s = s;
            return i;
        }
    return -1;
}

static int settable(cudaStreamAttrID id)
{
    return id == cudaStreamAttributeAccessPolicyWindow ||
           id == cudaStreamAttributeSynchronizationPolicy ||
           id == cudaStreamAttributePriority ||
           id == cudaStreamAttributeMemSyncDomainMap ||
           id == cudaStreamAttributeMemSyncDomain;
}

cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID id,
                                   cudaStreamAttrValue *v)
{
    if (!settable(id))
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    int i = slot(s);
    if (i >= 0)
        *v = table[i].v[id];
    pthread_mutex_unlock(&lock);
    return i >= 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID id,
                                   const cudaStreamAttrValue *v)
{
    if (!settable(id))
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    int i = slot(s);
    if (i >= 0)
        table[i].v[id] = *v;
    pthread_mutex_unlock(&lock);
    return i >= 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    pthread_mutex_lock(&lock);
    int d = slot(dst), s = slot(src);
    if (d >= 0 && s >= 0)
        memcpy(table[d].v, table[s].v, sizeof(table[d].v));
    pthread_mutex_unlock(&lock);
    return d >= 0 && s >= 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}
