#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/thread.h"

#define NAME_MAX_LEN 15

/* The new thread's own copy of what it runs; it frees it. */
struct thread_start {
    void *(*fn)(void *);
    void *arg;
    char name[NAME_MAX_LEN + 1];
};

/* Threads created and not yet running their function.  fork() waits for
 * them, the starter does not: on the H200 a client whose starters slept
 * until their thread ran launched at 75% of the native rate over unix
 * instead of 105%, measured side by side (where the scheduler then puts
 * the polling threads is the likely cause). */
static _Atomic uint32_t starting;

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

static void started(void)
{
    if (atomic_fetch_sub(&starting, 1) == 1)
        futex(&starting, FUTEX_WAKE_PRIVATE, INT32_MAX);
}

static void *trampoline(void *p)
{
    struct thread_start s = *(struct thread_start *)p;
    gvs_free(p);
    pthread_setname_np(pthread_self(), s.name);
    started();
    return s.fn(s.arg);
}

/* A child must not inherit a thread that the C library or a sanitizer
 * runtime is still setting up: the locks it holds would stay held in the
 * child, whose own new threads then wait for them forever. */
static void fork_prepare(void)
{
    uint32_t n;
    while ((n = atomic_load(&starting)) != 0)
        futex(&starting, FUTEX_WAIT_PRIVATE, n);
}

__attribute__((constructor)) static void thread_init(void)
{
    pthread_atfork(fork_prepare, NULL, NULL);
}

static int start(void *(*fn)(void *), void *arg, const char *name,
                 pthread_t *joinable)
{
    struct thread_start *s = gvs_malloc(sizeof(*s));
    if (s == NULL)
        return GVS_E_NOMEM;
    *s = (struct thread_start){.fn = fn, .arg = arg};
    strncpy(s->name, name, NAME_MAX_LEN);
    sigset_t all, old;
    pthread_attr_t attr;
    pthread_t th;
    if (pthread_attr_init(&attr) != 0) {
        gvs_free(s);
        return GVS_E_NOMEM;
    }
    if (joinable == NULL)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_fetch_add(&starting, 1);
    int rc = pthread_create(joinable ? joinable : &th, &attr, trampoline, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        return 0;
    started();
    gvs_free(s);
    return GVS_E_NOMEM;
}

int gvs_thread_start(void *(*fn)(void *), void *arg, const char *name)
{
    return start(fn, arg, name, NULL);
}

int gvs_thread_start_joinable(void *(*fn)(void *), void *arg, const char *name,
                              pthread_t *out)
{
    return start(fn, arg, name, out);
}
