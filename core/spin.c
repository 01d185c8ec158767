#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/spin.h"

#define SPIN_DEFAULT_NS 50000LL
#define SPIN_MIN_CPUS 4

static long long spin_ns;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;

static void spin_init(void)
{
    const char *env = getenv("GVS_SPIN_US");
    if (env != NULL && env[0] != '\0') {
        char *end;
        long long us = strtoll(env, &end, 10);
        spin_ns = (*end == '\0' && us > 0 && us < 1000000) ? us * 1000 : 0;
        return;
    }
    spin_ns = sysconf(_SC_NPROCESSORS_ONLN) >= SPIN_MIN_CPUS ? SPIN_DEFAULT_NS
                                                             : 0;
}

long long gvs_spin_ns(void)
{
    pthread_once(&spin_once, spin_init);
    return spin_ns;
}

long long gvs_spin_busy_ns(void)
{
    return 20 * gvs_spin_ns();
}

long long gvs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int fd_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

static int conn_readable(struct gvs_conn *c)
{
    return c->ops->readable != NULL ? c->ops->readable(c) : fd_readable(c->fd);
}

int gvs_conn_readable(struct gvs_conn *c)
{
    if (c->ops->readable == NULL && c->fd < 0)
        return 0;
    return conn_readable(c);
}

int gvs_conn_spin_readable(struct gvs_conn *c, long long ns)
{
    if ((c->ops->readable == NULL && c->fd < 0) || ns <= 0)
        return 0;
    long long start = gvs_now_ns();
    do {
        if (conn_readable(c))
            return 1;
        gvs_cpu_relax();
    } while (gvs_now_ns() - start < ns);
    return 0;
}
