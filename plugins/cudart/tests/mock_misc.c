/*
 * Memory hints, the profiler, IPC and the location-based pool API for
 * the host-memory mock of the CUDA runtime (mock_cudart.c).  Hints and
 * the profiler only check their arguments; an IPC handle carries the
 * exporting worker's address, which no other worker can open, as a
 * handle of another GPU host could not be.  Async notifications and log
 * callbacks are called on the registering or refused call's thread.
 */
#include <pthread.h>
#include <string.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

cudaError_t cudaProfilerStart(void)
{
    return cudaSuccess;
}

cudaError_t cudaProfilerStop(void)
{
    return cudaSuccess;
}

cudaError_t cudaCtxResetPersistingL2Cache(void)
{
    return cudaSuccess;
}

cudaError_t cudaDeviceFlushGPUDirectRDMAWrites(
    enum cudaFlushGPUDirectRDMAWritesTarget target,
    enum cudaFlushGPUDirectRDMAWritesScope scope)
{
    return target == cudaFlushGPUDirectRDMAWritesTargetCurrentDevice &&
                   (scope == cudaFlushGPUDirectRDMAWritesToOwner ||
                    scope == cudaFlushGPUDirectRDMAWritesToAllDevices)
               ? cudaSuccess
               : cudaErrorInvalidValue;
}

cudaError_t cudaMemAdvise(const void *p, size_t count,
                          enum cudaMemoryAdvise advice,
                          struct cudaMemLocation loc)
{
    (void)p, (void)count, (void)loc;
    return advice >= cudaMemAdviseSetReadMostly &&
                   advice <= cudaMemAdviseUnsetAccessedBy
               ? cudaSuccess
               : cudaErrorInvalidValue;
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void *p, size_t length,
                                     unsigned int flags)
{
    (void)s, (void)p, (void)length;
    return flags == cudaMemAttachGlobal || flags == cudaMemAttachHost ||
                   flags == cudaMemAttachSingle
               ? cudaSuccess
               : cudaErrorInvalidValue;
}

cudaError_t cudaMemDiscardBatchAsync(void **p, size_t *sizes, size_t count,
                                     unsigned long long flags, cudaStream_t s)
{
    (void)p, (void)sizes, (void)s;
    return count != 0 && flags == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMemDiscardAndPrefetchBatchAsync(
    void **p, size_t *sizes, size_t count, struct cudaMemLocation *locs,
    size_t *idxs, size_t nlocs, unsigned long long flags, cudaStream_t s)
{
    (void)p, (void)sizes, (void)locs, (void)idxs, (void)s;
    return count != 0 && nlocs != 0 && flags == 0 ? cudaSuccess
                                                  : cudaErrorInvalidValue;
}

/* Device locations only, as the mock has no host pools. */
cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *pool,
                                     struct cudaMemLocation *loc,
                                     enum cudaMemAllocationType type)
{
    if (loc->type != cudaMemLocationTypeDevice ||
        type != cudaMemAllocationTypePinned)
        return cudaErrorInvalidValue;
    return cudaDeviceGetDefaultMemPool(pool, loc->id);
}

cudaError_t cudaMemGetMemPool(cudaMemPool_t *pool, struct cudaMemLocation *loc,
                              enum cudaMemAllocationType type)
{
    if (loc->type != cudaMemLocationTypeDevice ||
        type != cudaMemAllocationTypePinned)
        return cudaErrorInvalidValue;
    return cudaDeviceGetMemPool(pool, loc->id);
}

cudaError_t cudaMemSetMemPool(struct cudaMemLocation *loc,
                              enum cudaMemAllocationType type,
                              cudaMemPool_t pool)
{
    if (loc->type != cudaMemLocationTypeDevice ||
        type != cudaMemAllocationTypePinned)
        return cudaErrorInvalidValue;
    return cudaDeviceSetMemPool(loc->id, pool);
}

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *h, void *p)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->reserved, &p, sizeof(p));
    return cudaSuccess;
}

cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t h,
                                 unsigned int flags)
{
    (void)p, (void)h, (void)flags;
    return cudaErrorInvalidResourceHandle;
}

cudaError_t cudaIpcCloseMemHandle(void *p)
{
    (void)p;
    return cudaErrorInvalidValue;
}

/* Every atomic is supported on the mock's devices and between them;
 * the host supports the integer ones only. */
cudaError_t cudaDeviceGetHostAtomicCapabilities(
    unsigned int *caps, const enum cudaAtomicOperation *ops,
    unsigned int count, int device)
{
    if (caps == NULL || ops == NULL || count == 0 || device < 0 || device > 1)
        return cudaErrorInvalidValue;
    for (unsigned i = 0; i < count; i++)
        caps[i] = ops[i] <= cudaAtomicOperationIntegerDecrement
                      ? cudaAtomicCapabilitySigned | cudaAtomicCapabilityUnsigned
                      : 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetP2PAtomicCapabilities(
    unsigned int *caps, const enum cudaAtomicOperation *ops,
    unsigned int count, int src, int dst)
{
    if (caps == NULL || ops == NULL || count == 0 || src < 0 || src > 1 ||
        dst < 0 || dst > 1 || src == dst)
        return cudaErrorInvalidDevice;
    for (unsigned i = 0; i < count; i++)
        caps[i] = cudaAtomicCapabilitySigned | cudaAtomicCapabilityUnsigned |
                  cudaAtomicCapabilityReduction;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetTexture1DLinearMaxWidth(
    size_t *width, const struct cudaChannelFormatDesc *d, int device)
{
    /* In long long: the client's sizes are any ints. */
    long long bits = (long long)d->x + d->y + d->z + d->w;
    if (device < 0 || device > 1)
        return cudaErrorInvalidDevice;
    if (bits <= 0 || bits % 8 != 0)
        return cudaErrorInvalidValue;
    *width = ((size_t)1 << 28) / (size_t)(bits / 8);
    return cudaSuccess;
}

/* A range's attributes: read-mostly never set, preferred location and
 * last prefetch device 0, accessed by nobody. */
cudaError_t cudaMemRangeGetAttribute(void *data, size_t size,
                                     enum cudaMemRangeAttribute a,
                                     const void *p, size_t count)
{
    (void)p;
    if (count == 0)
        return cudaErrorInvalidValue;
    if (a == cudaMemRangeAttributeAccessedBy) {
        if (size % 4 != 0)
            return cudaErrorInvalidValue;
        memset(data, 0xff, size);
        return cudaSuccess;
    }
    if (size != 4)
        return cudaErrorInvalidValue;
    int v;
    switch (a) {
    case cudaMemRangeAttributeReadMostly:
        v = 0;
        break;
    case cudaMemRangeAttributePreferredLocation:
    case cudaMemRangeAttributeLastPrefetchLocation:
        v = 0;
        break;
    case cudaMemRangeAttributePreferredLocationType:
    case cudaMemRangeAttributeLastPrefetchLocationType:
        v = cudaMemLocationTypeDevice;
        break;
    default:
        return cudaErrorInvalidValue;
    }
    memcpy(data, &v, 4);
    return cudaSuccess;
}

cudaError_t cudaMemRangeGetAttributes(void **data, size_t *sizes,
                                      enum cudaMemRangeAttribute *attrs,
                                      size_t n, const void *p, size_t count)
{
    for (size_t i = 0; i < n; i++) {
        cudaError_t e =
            cudaMemRangeGetAttribute(data[i], sizes[i], attrs[i], p, count);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* An event handle, like a memory one, names the exporting worker's
 * event, which no other worker can open. */
cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *h, cudaEvent_t ev)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->reserved, &ev, sizeof(ev));
    return cudaSuccess;
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *ev, cudaIpcEventHandle_t h)
{
    (void)ev, (void)h;
    return cudaErrorInvalidResourceHandle;
}

/* The mock's driver log holds two lines; the iterator counts lines. */
static const char *const log_lines[] = {"[mock] first log line\n",
                                        "[mock] second log line\n"};

/* At most 4 registrations of each kind at a time; a handle is the
 * address of its slot. */
#define MOCK_REGS 4

struct cudaAsyncCallbackEntry {
    int live, device;
};

struct CUlogsCallbackEntry_st {
    int live;
    cudaLogsCallback_t fn;
    void *user;
};

static pthread_mutex_t regs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cudaAsyncCallbackEntry async_regs[MOCK_REGS];
static struct CUlogsCallbackEntry_st log_regs[MOCK_REGS];

/* The mock's process is over its device memory budget by 1 MiB: a new
 * registration hears of it at once, before the call returns. */
cudaError_t cudaDeviceRegisterAsyncNotification(int device,
                                                cudaAsyncCallback fn,
                                                void *user,
                                                cudaAsyncCallbackHandle_t *out)
{
    if (device < 0 || device > 1)
        return cudaErrorInvalidDevice;
    if (fn == NULL || out == NULL)
        return cudaErrorInvalidValue;
    cudaAsyncCallbackHandle_t h = NULL;
    pthread_mutex_lock(&regs_lock);
    for (int i = 0; i < MOCK_REGS && h == NULL; i++)
        if (!async_regs[i].live) {
            h = &async_regs[i];
            *h = (struct cudaAsyncCallbackEntry){1, device};
        }
    pthread_mutex_unlock(&regs_lock);
    if (h == NULL)
        return cudaErrorMemoryAllocation;
    *out = h;
    cudaAsyncNotificationInfo_t info = {cudaAsyncNotificationTypeOverBudget,
                                        {{(unsigned long long)1 << 20}}};
    fn(&info, user, h);
    return cudaSuccess;
}

cudaError_t cudaDeviceUnregisterAsyncNotification(int device,
                                                  cudaAsyncCallbackHandle_t h)
{
    cudaError_t e = cudaErrorInvalidValue;
    if (device < 0 || device > 1)
        return cudaErrorInvalidDevice;
    pthread_mutex_lock(&regs_lock);
    for (int i = 0; i < MOCK_REGS; i++)
        if (h == &async_regs[i] && h->live && h->device == device) {
            h->live = 0;
            e = cudaSuccess;
        }
    pthread_mutex_unlock(&regs_lock);
    return e;
}

cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t fn, void *user,
                                     cudaLogsCallbackHandle *out)
{
    cudaLogsCallbackHandle h = NULL;
    if (fn == NULL)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&regs_lock);
    for (int i = 0; i < MOCK_REGS && h == NULL; i++)
        if (!log_regs[i].live) {
            h = &log_regs[i];
            *h = (struct CUlogsCallbackEntry_st){1, fn, user};
        }
    pthread_mutex_unlock(&regs_lock);
    if (h == NULL)
        return cudaErrorMemoryAllocation;
    if (out != NULL)
        *out = h;
    return cudaSuccess;
}

cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle h)
{
    cudaError_t e = cudaErrorInvalidValue;
    pthread_mutex_lock(&regs_lock);
    for (int i = 0; i < MOCK_REGS; i++)
        if (h == &log_regs[i] && h->live) {
            h->live = 0;
            e = cudaSuccess;
        }
    pthread_mutex_unlock(&regs_lock);
    return e;
}

/* The mock's driver logs the calls of this file it refuses. */
static const char refused[] = "[mock] cudaLogsCurrent: invalid argument";

static cudaError_t refuse(void)
{
    struct CUlogsCallbackEntry_st regs[MOCK_REGS];
    char message[sizeof(refused)];
    pthread_mutex_lock(&regs_lock);
    memcpy(regs, log_regs, sizeof(regs));
    pthread_mutex_unlock(&regs_lock);
    for (int i = 0; i < MOCK_REGS; i++)
        if (regs[i].live) {
            memcpy(message, refused, sizeof(refused));
            regs[i].fn(regs[i].user, cudaLogLevelError, message,
                       sizeof(refused) - 1);
        }
    return cudaErrorInvalidValue;
}

cudaError_t cudaLogsCurrent(cudaLogIterator *it, unsigned int flags)
{
    if (it == NULL || flags != 0)
        return refuse();
    *it = 2;
    return cudaSuccess;
}

cudaError_t cudaLogsDumpToMemory(cudaLogIterator *it, char *buf, size_t *size,
                                 unsigned int flags)
{
    if (buf == NULL || size == NULL || flags != 0)
        return cudaErrorInvalidValue;
    size_t n = 0;
    unsigned from = it != NULL ? *it : 0;
    for (unsigned i = from; i < 2; i++) {
        size_t len = strlen(log_lines[i]);
        if (n + len + 1 > *size)
            break;
        memcpy(buf + n, log_lines[i], len);
        n += len;
    }
    if (n == 0 && from < 2) {
        *size = 0;
        return cudaErrorInvalidValue;
    }
    buf[n] = 0;
    *size = n;
    if (it != NULL)
        *it = 2;
    return cudaSuccess;
}
