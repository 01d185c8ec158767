/* Waits bounded on CLOCK_MONOTONIC, which a change of the wall clock
 * does not move (state.h). */
#include "state.h"

void remote_be_cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

void remote_be_deadline(struct timespec *t, long ns)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_sec += ns / 1000000000L;
    t->tv_nsec += ns % 1000000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}
