/*
 * The mock driver's host functions and stream callbacks.  Other work runs
 * as it is launched, so a function enqueued after it runs after it; the
 * functions run in order on one thread of the mock's, as the driver runs
 * them on a callback thread of its own, and a stream is busy (a query
 * answers CUDA_ERROR_NOT_READY, a synchronization waits) until every one
 * enqueued has returned.  A stream's status is the int its mock object
 * holds (mock_driver.h, MOCK_BROKEN_PRIORITY).
 */
#include "be.h"
#include "mock_driver.h"

#include <pthread.h>

#include "gvs/mem.h"
#include "gvs/thread.h"

struct job {
    struct job *next;
    CUstream stream;
    CUhostFn fn; /* or cb */
    CUstreamCallback cb;
    void *data;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct job *head, *tail;
static int running, started;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (head == NULL)
            pthread_cond_wait(&changed, &lock);
        struct job *j = head;
        head = j->next;
        if (head == NULL)
            tail = NULL;
        running = 1;
        pthread_mutex_unlock(&lock);
        if (j->fn != NULL)
            j->fn(j->data);
        else
            j->cb(j->stream,
                  j->stream != NULL ? (CUresult) * (int *)j->stream
                                    : CUDA_SUCCESS,
                  j->data);
        gvs_free(j);
        pthread_mutex_lock(&lock);
        running = 0;
        pthread_cond_broadcast(&changed);
    }
    return NULL;
}

static CUresult enqueue(struct job j)
{
    struct job *p = gvs_malloc(sizeof(*p));
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = j;
    pthread_mutex_lock(&lock);
    if (!started && gvs_thread_start(worker, NULL, "mock-callbacks") == 0)
        started = 1;
    if (!started) {
        pthread_mutex_unlock(&lock);
        gvs_free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (tail != NULL)
        tail->next = p;
    else
        head = p;
    tail = p;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static CUresult mock_host_fn(CUstream s, CUhostFn fn, void *data)
{
    if (fn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return enqueue((struct job){.stream = s, .fn = fn, .data = data});
}

static CUresult mock_add_callback(CUstream s, CUstreamCallback cb,
                                  void *data, unsigned flags)
{
    if (cb == NULL || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return enqueue((struct job){.stream = s, .cb = cb, .data = data});
}

static int busy_locked(void)
{
    return head != NULL || running;
}

static CUresult mock_query(CUstream s)
{
    (void)s;
    pthread_mutex_lock(&lock);
    int busy = busy_locked();
    pthread_mutex_unlock(&lock);
    return busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

CUresult mock_callbacks_wait(void)
{
    pthread_mutex_lock(&lock);
    while (busy_locked())
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static CUresult mock_stream_sync(CUstream s)
{
    (void)s;
    return mock_callbacks_wait();
}

void mock_callbacks_fill(void)
{
    cuda_be_drv.cuLaunchHostFunc = mock_host_fn;
    cuda_be_drv.cuStreamAddCallback = mock_add_callback;
    cuda_be_drv.cuStreamQuery = mock_query;
    cuda_be_drv.cuStreamSynchronize = mock_stream_sync;
}
