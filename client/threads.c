#include <pthread.h>
#include <signal.h>

#include "gvs/err.h"
#include "internal.h"

int client_thread_start(void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    pthread_attr_t attr;
    pthread_t th;
    if (pthread_attr_init(&attr) != 0)
        return GVS_E_NOMEM;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&th, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : GVS_E_NOMEM;
}
