/*
 * The mock driver's host functions and stream callbacks.  Other work runs
 * as it is launched, so a function enqueued after it runs after it; the
 * functions run in order on one thread of the mock's, as the driver runs
 * them on a callback thread of its own, and a stream is busy (a query
 * answers CUDA_ERROR_NOT_READY, a synchronization waits) until every one
 * enqueued on it has returned (a context synchronization: every one).  A stream's status is the int its mock object
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
static CUstream running_stream; /* while running */

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
        running_stream = j->stream;
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

/* Whether a function of s (of any stream when all) has yet to return. */
static int busy_locked(CUstream s, int all)
{
    if (running && (all || running_stream == s))
        return 1;
    for (struct job *j = head; j != NULL; j = j->next)
        if (all || j->stream == s)
            return 1;
    return 0;
}

static CUresult mock_query(CUstream s)
{
    pthread_mutex_lock(&lock);
    int busy = busy_locked(s, 0);
    pthread_mutex_unlock(&lock);
    return busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

static void wait_for(CUstream s, int all)
{
    pthread_mutex_lock(&lock);
    while (busy_locked(s, all))
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

CUresult mock_callbacks_wait(void)
{
    wait_for(NULL, 1);
    return CUDA_SUCCESS;
}

static CUresult mock_stream_sync(CUstream s)
{
    wait_for(s, 0);
    return CUDA_SUCCESS;
}

void mock_callbacks_fill(void)
{
    cuda_be_drv.cuLaunchHostFunc = mock_host_fn;
    cuda_be_drv.cuStreamAddCallback = mock_add_callback;
    cuda_be_drv.cuStreamQuery = mock_query;
    cuda_be_drv.cuStreamSynchronize = mock_stream_sync;
}
