/*
 * Streams, events, host functions and async copies for the host-memory
 * mock of the CUDA runtime (mock_cudart.c).  A created stream is a queue
 * of tasks run in order by a thread of its own, as the GPU and CUDA's
 * callback thread would; the legacy stream (NULL) runs its work on the
 * calling thread once every blocking stream has drained, which is what
 * its implicit synchronization amounts to here.  Semantics follow CUDA's
 * documentation: an async copy from pageable host memory takes the bytes
 * before it returns (one from page-locked memory reads them when it
 * runs), one to pageable host memory returns once done.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "mock_streams.h"

struct task {
    struct task *next;
    void (*run)(struct task *t);
    void *dst, *src; /* src owned when staged */
    size_t count;
    int value;
    cudaHostFn_t fn;
    cudaStreamCallback_t cb;
    void *user;
    struct CUstream_st *stream;
    struct CUevent_st *event;
    uint64_t seq;
};

struct CUstream_st {
    struct CUstream_st *next; /* in `streams` */
    unsigned flags;
    int priority;
    int device;
    unsigned long long id;
    pthread_t thread;
    struct task *head, *tail;
    int busy, stop;
};

struct CUevent_st {
    unsigned flags;
    uint64_t recorded, completed; /* records made, records reached */
    struct timespec when;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct CUstream_st *streams;
static unsigned long long next_stream_id = 100;

/* Tasks ------------------------------------------------------------------ */

/* A copy of count 0 may name NULL, which memmove and memcpy must not
 * be given. */
static void run_copy(struct task *t)
{
    if (t->count != 0)
        memmove(t->dst, t->src, t->count);
}

static void run_staged_copy(struct task *t)
{
    if (t->count != 0)
        memcpy(t->dst, t->src, t->count);
    free(t->src);
}

static void run_memset(struct task *t)
{
    memset(t->dst, t->value, t->count);
}

static void run_host_fn(struct task *t)
{
    t->fn(t->user);
}

static void run_callback(struct task *t)
{
    t->cb(t->stream, cudaSuccess, t->user);
}

static void run_record(struct task *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&lock);
    if (t->seq > t->event->completed) {
        t->event->completed = t->seq;
        t->event->when = now;
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void run_wait(struct task *t)
{
    pthread_mutex_lock(&lock);
    while (t->event->completed < t->seq)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static void *stream_main(void *arg)
{
    struct CUstream_st *s = arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (s->head == NULL && !s->stop)
            pthread_cond_wait(&changed, &lock);
        struct task *t = s->head;
        if (t == NULL)
            break;
        s->busy = 1;
        pthread_mutex_unlock(&lock);
        t->run(t);
        pthread_mutex_lock(&lock);
        s->head = t->next;
        if (s->head == NULL)
            s->tail = NULL;
        s->busy = 0;
        free(t);
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Caller holds lock. */
static int idle_locked(const struct CUstream_st *s)
{
    return s->head == NULL && !s->busy;
}

/* Caller holds lock.  A stream drain() waits for, or NULL. */
static struct CUstream_st *busy_locked(int blocking_only)
{
    for (struct CUstream_st *s = streams; s != NULL; s = s->next)
        if ((!blocking_only || !(s->flags & cudaStreamNonBlocking)) &&
            !idle_locked(s))
            return s;
    return NULL;
}

/* The list is scanned afresh after every wait: while this thread waits,
 * another may destroy (and free) the stream it was looking at. */
static void drain(int blocking_only)
{
    pthread_mutex_lock(&lock);
    while (busy_locked(blocking_only) != NULL)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

void mock_streams_drain(void)
{
    drain(0);
}

static int known_locked(const struct CUstream_st *s)
{
    for (const struct CUstream_st *i = streams; i != NULL; i = i->next)
        if (i == s)
            return 1;
    return 0;
}

/* Queues t on s, or runs it at once on the legacy stream. */
static cudaError_t submit(cudaStream_t s, struct task *t)
{
    if (t == NULL)
        return cudaErrorMemoryAllocation;
    t->stream = s;
    if (s == NULL || s == cudaStreamLegacy) {
        drain(1);
        t->run(t);
        free(t);
        return cudaSuccess;
    }
    pthread_mutex_lock(&lock);
    if (!known_locked(s)) {
        pthread_mutex_unlock(&lock);
        free(t);
        return cudaErrorInvalidResourceHandle;
    }
    if (s->tail != NULL)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}

static struct task *task(void (*run)(struct task *t))
{
    struct task *t = calloc(1, sizeof(*t));
    if (t != NULL)
        t->run = run;
    return t;
}

/* Streams ---------------------------------------------------------------- */

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *ps, unsigned flags,
                                         int priority)
{
    if (flags & ~(unsigned)cudaStreamNonBlocking)
        return cudaErrorInvalidValue;
    struct CUstream_st *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return cudaErrorMemoryAllocation;
    s->flags = flags;
    s->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
    s->device = mock_current_device();
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
        free(s);
        return cudaErrorMemoryAllocation;
    }
    pthread_mutex_lock(&lock);
    s->id = next_stream_id++;
    s->next = streams;
    streams = s;
    pthread_mutex_unlock(&lock);
    *ps = s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned flags)
{
    return cudaStreamCreateWithPriority(ps, flags, 0);
}

/* Finishes the stream's work first, as CUDA does before releasing it. */
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    pthread_mutex_lock(&lock);
    struct CUstream_st **p = &streams;
    while (*p != NULL && *p != s)
        p = &(*p)->next;
    if (*p == NULL) {
        pthread_mutex_unlock(&lock);
        return cudaErrorInvalidResourceHandle;
    }
    *p = s->next;
    s->stop = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    pthread_join(s->thread, NULL);
    free(s);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    if (s == NULL || s == cudaStreamLegacy)
        return cudaSuccess;
    pthread_mutex_lock(&lock);
    cudaError_t e = !known_locked(s)   ? cudaErrorInvalidResourceHandle
                    : idle_locked(s) ? cudaSuccess
                                     : cudaErrorNotReady;
    pthread_mutex_unlock(&lock);
    return e;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (s == NULL || s == cudaStreamLegacy)
        return cudaSuccess;
    pthread_mutex_lock(&lock);
    cudaError_t e = known_locked(s) ? cudaSuccess
                                    : cudaErrorInvalidResourceHandle;
    while (e == cudaSuccess && !idle_locked(s))
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return e;
}

cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned *flags)
{
    *flags = s != NULL && s != cudaStreamLegacy ? s->flags : 0;
    return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority)
{
    *priority = s != NULL && s != cudaStreamLegacy ? s->priority : 0;
    return cudaSuccess;
}

cudaError_t cudaStreamGetDevice(cudaStream_t s, int *device)
{
    *device = s != NULL && s != cudaStreamLegacy ? s->device
                                                 : mock_current_device();
    return cudaSuccess;
}

cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id)
{
    *id = s != NULL && s != cudaStreamLegacy ? s->id : 7;
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned flags)
{
    if (flags != 0)
        return cudaErrorInvalidValue;
    struct task *t = task(run_wait);
    if (t == NULL)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&lock);
    t->event = ev;
    t->seq = ev->recorded;
    pthread_mutex_unlock(&lock);
    return submit(s, t);
}

/* Events ----------------------------------------------------------------- */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *pe, unsigned flags)
{
    if ((flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming |
                             cudaEventInterprocess)) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return cudaErrorInvalidValue;
    struct CUevent_st *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return cudaErrorMemoryAllocation;
    e->flags = flags;
    *pe = e;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t ev, cudaStream_t s,
                                     unsigned flags)
{
    if (flags != 0)
        return cudaErrorInvalidValue;
    struct task *t = task(run_record);
    if (t == NULL)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&lock);
    t->event = ev;
    t->seq = ++ev->recorded;
    pthread_mutex_unlock(&lock);
    return submit(s, t);
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    pthread_mutex_lock(&lock);
    cudaError_t e = ev->completed >= ev->recorded ? cudaSuccess
                                                  : cudaErrorNotReady;
    pthread_mutex_unlock(&lock);
    return e;
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    pthread_mutex_lock(&lock);
    while (ev->completed < ev->recorded)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&lock);
    if (a->recorded == 0 || b->recorded == 0 ||
        ((a->flags | b->flags) & cudaEventDisableTiming))
        e = cudaErrorInvalidResourceHandle;
    else if (a->completed < a->recorded || b->completed < b->recorded)
        e = cudaErrorNotReady;
    else
        *ms = (float)(b->when.tv_sec - a->when.tv_sec) * 1e3f +
              (float)(b->when.tv_nsec - a->when.tv_nsec) / 1e6f;
    pthread_mutex_unlock(&lock);
    return e;
}

/* Host functions ---------------------------------------------------------- */

cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *user)
{
    struct task *t = task(run_host_fn);
    if (t != NULL) {
        t->fn = fn;
        t->user = user;
    }
    return submit(s, t);
}

cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb,
                                  void *user, unsigned flags)
{
    if (flags != 0)
        return cudaErrorInvalidValue;
    struct task *t = task(run_callback);
    if (t != NULL) {
        t->cb = cb;
        t->user = user;
    }
    return submit(s, t);
}

/* Memory ---------------------------------------------------------------- */

static _Atomic unsigned long long d2h_pinned;

unsigned long long mock_d2h_pinned_copies(void)
{
    return atomic_load(&d2h_pinned);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t s)
{
    struct task *t;
    if (!mock_dev_ok(dst, count) || !mock_dev_ok(src, count))
        return cudaErrorIllegalAddress;
    if (kind == cudaMemcpyDeviceToHost && mock_host_pinned(dst))
        atomic_fetch_add(&d2h_pinned, 1);
    if (kind == cudaMemcpyHostToDevice && !mock_host_pinned(src)) {
        t = task(run_staged_copy);
        if (t != NULL && (t->src = malloc(count ? count : 1)) == NULL) {
            free(t);
            t = NULL;
        }
        if (t != NULL)
            memcpy(t->src, src, count);
    } else {
        t = task(run_copy);
        if (t != NULL)
            t->src = (void *)src;
    }
    if (t != NULL) {
        t->dst = dst;
        t->count = count;
    }
    cudaError_t e = submit(s, t);
    if (e == cudaSuccess && kind == cudaMemcpyDeviceToHost && !mock_host_pinned(dst))
        e = cudaStreamSynchronize(s);
    return e;
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t s)
{
    if (!mock_dev_ok(p, count))
        return cudaErrorIllegalAddress;
    struct task *t = task(run_memset);
    if (t != NULL) {
        t->dst = p;
        t->value = value;
        t->count = count;
    }
    return submit(s, t);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    *free_bytes = (size_t)60 << 30;
    *total = (size_t)80 << 30;
    return cudaSuccess;
}

/* Every range the backend passes has been checked to be "device" memory,
 * which is not managed here: natively that is cudaErrorInvalidValue. */
cudaError_t cudaMemPrefetchAsync(const void *p, size_t count,
                                 struct cudaMemLocation loc, unsigned flags,
                                 cudaStream_t s)
{
    (void)p, (void)count, (void)loc, (void)flags, (void)s;
    return cudaErrorInvalidValue;
}
