#include "parcopy.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "gvs/thread.h"

#define PAR_MIN ((size_t)1 << 20)
#define PAR_HELPERS_MAX 3

struct part {
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
};

/* One copy at a time (busy); the helpers wait for a new generation of
 * parts under lock, and the caller for `left` to reach 0. */
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static struct part parts[PAR_HELPERS_MAX];
static unsigned generation;
/* The generation when the helpers were started: each waits for the next
 * one.  Not 0: a forked child inherits the parent's count, and a helper
 * that took the parent's last parts for new ones would copy stale
 * memory and count itself done for a copy it never made. */
static unsigned helpers_from;
static int left;
static int helpers = -1; /* started; -1 until the first copy decides */

static void *helper_main(void *arg)
{
    int i = (int)(intptr_t)arg;
    unsigned seen = helpers_from;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (generation == seen)
            pthread_cond_wait(&work, &lock);
        seen = generation;
        struct part p = parts[i];
        pthread_mutex_unlock(&lock);
        memcpy(p.dst, p.src, p.len);
        pthread_mutex_lock(&lock);
        if (--left == 0)
            pthread_cond_signal(&done);
    }
    return NULL;
}

/* Caller holds busy. */
static void start_helpers(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cpus > 4 ? (int)((cpus - 4) / 4) : 0;
    const char *env = getenv("GVS_COPY_THREADS");
    if (env != NULL && env[0] >= '0' && env[0] <= '9' && env[1] == '\0')
        want = env[0] - '0';
    if (want > PAR_HELPERS_MAX)
        want = PAR_HELPERS_MAX;
    pthread_mutex_lock(&lock);
    helpers_from = generation;
    pthread_mutex_unlock(&lock);
    helpers = 0;
    while (helpers < want &&
           gvs_thread_start(helper_main, (void *)(intptr_t)helpers, "gvs-copy") == 0)
        helpers++;
}

void remote_fe_parallel_memcpy(void *dst, const void *src, size_t len)
{
    if (len < PAR_MIN || pthread_mutex_trylock(&busy) != 0) {
        memcpy(dst, src, len);
        return;
    }
    if (helpers < 0)
        start_helpers();
    int n = helpers + 1;
    /* Parts of whole cache lines; the caller takes the last, with the
     * remainder. */
    size_t each = len / (size_t)n / 64 * 64;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < helpers; i++)
        parts[i] = (struct part){(uint8_t *)dst + (size_t)i * each,
                                 (const uint8_t *)src + (size_t)i * each,
                                 each};
    left = helpers;
    generation++;
    pthread_cond_broadcast(&work);
    pthread_mutex_unlock(&lock);
    size_t off = (size_t)helpers * each;
    memcpy((uint8_t *)dst + off, (const uint8_t *)src + off, len - off);
    pthread_mutex_lock(&lock);
    while (left > 0)
        pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&busy);
}

void remote_fe_parallel_memcpy_fork_child(void)
{
    pthread_mutex_init(&busy, NULL);
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&work, NULL);
    pthread_cond_init(&done, NULL);
    left = 0;
    helpers = -1;
}
