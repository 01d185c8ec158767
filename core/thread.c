#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/thread.h"

/* Lives on the starter's stack until `running` is set: the new thread
 * copies what it needs first and touches it no more after the wake-up. */
struct thread_start {
    void *(*fn)(void *);
    void *arg;
    const char *name;
    _Atomic uint32_t running;
};

static void *trampoline(void *p)
{
    struct thread_start *s = p;
    void *(*fn)(void *) = s->fn;
    void *arg = s->arg;
    pthread_setname_np(pthread_self(), s->name);
    atomic_store(&s->running, 1);
    syscall(SYS_futex, (uint32_t *)&s->running, FUTEX_WAKE_PRIVATE, 1, NULL,
            NULL, 0);
    return fn(arg);
}

int gvs_thread_start(void *(*fn)(void *), void *arg, const char *name)
{
    struct thread_start s = {.fn = fn, .arg = arg, .name = name};
    sigset_t all, old;
    pthread_attr_t attr;
    pthread_t th;
    if (pthread_attr_init(&attr) != 0)
        return GVS_E_NOMEM;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&th, &attr, trampoline, &s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return GVS_E_NOMEM;
    while (atomic_load(&s.running) == 0)
        syscall(SYS_futex, (uint32_t *)&s.running, FUTEX_WAIT_PRIVATE, 0,
                NULL, NULL, 0);
    return 0;
}
