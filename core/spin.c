#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/spin.h"

#define SPIN_DEFAULT_NS 50000LL
#define SPIN_MIN_CPUS 4
/* How often a process looks at the host's load: a look costs a couple
 * of microseconds, a millisecond is ten thousand waits' worth. */
#define LOAD_PERIOD_NS 1000000LL

static _Atomic long long spin_ns;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;
/* GVS_SPIN_US was set: it alone decides. */
static int spin_env;
/* The default policy's view of the host: /proc/loadavg, open while the
 * default spins; whether more threads were runnable than CPUs at the
 * last look, and when to look next. */
static atomic_int load_fd = -1;
static long load_cpus;
static atomic_int load_busy;
static _Atomic long long load_next;
static pthread_mutex_t away_lock = PTHREAD_MUTEX_INITIALIZER;

long long gvs_spin_default_ns(long cpus, int peer_away)
{
    return cpus >= SPIN_MIN_CPUS || peer_away ? SPIN_DEFAULT_NS : 0;
}

/* The default policy's new value; once spin_init ran, under away_lock.
 * The load is looked at before the first spin. */
static void spin_set(long long ns)
{
    if (ns > 0 && atomic_load(&load_fd) < 0)
        atomic_store(&load_fd, open("/proc/loadavg", O_RDONLY | O_CLOEXEC));
    atomic_store(&spin_ns, ns);
}

static void spin_init(void)
{
    const char *env = getenv("GVS_SPIN_US");
    if (env != NULL && env[0] != '\0') {
        char *end;
        long long us = strtoll(env, &end, 10);
        spin_env = 1;
        atomic_store(&spin_ns,
                     (*end == '\0' && us > 0 && us < 1000000) ? us * 1000 : 0);
        return;
    }
    load_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    spin_set(gvs_spin_default_ns(load_cpus, 0));
}

void gvs_spin_peer_away(void)
{
    pthread_once(&spin_once, spin_init);
    if (spin_env)
        return;
    pthread_mutex_lock(&away_lock);
    spin_set(gvs_spin_default_ns(load_cpus, 1));
    pthread_mutex_unlock(&away_lock);
}

int gvs_spin_load_busy(const char *loadavg, long cpus)
{
    const char *p = loadavg;
    for (int field = 0; field < 3; field++) {
        p = strchr(p, ' ');
        if (p == NULL)
            return -1;
        p++;
    }
    char *end;
    long running = strtol(p, &end, 10);
    if (end == p || *end != '/' || running < 0)
        return -1;
    return running > cpus;
}

/* Looks at the host's load when LOAD_PERIOD_NS passed since the last
 * look (one thread of the process looks; the others use what it saw). */
static void load_look(void)
{
    long long now = gvs_now_ns();
    long long next = atomic_load_explicit(&load_next, memory_order_relaxed);
    if (now < next || !atomic_compare_exchange_strong_explicit(
                          &load_next, &next, now + LOAD_PERIOD_NS,
                          memory_order_relaxed, memory_order_relaxed))
        return;
    char b[128];
    ssize_t n = pread(atomic_load(&load_fd), b, sizeof(b) - 1, 0);
    if (n <= 0)
        return;
    b[n] = '\0';
    int busy = gvs_spin_load_busy(b, load_cpus);
    if (busy >= 0)
        atomic_store_explicit(&load_busy, busy, memory_order_relaxed);
}

long long gvs_spin_ns(void)
{
    pthread_once(&spin_once, spin_init);
    if (atomic_load_explicit(&load_fd, memory_order_relaxed) < 0)
        return atomic_load_explicit(&spin_ns, memory_order_relaxed);
    load_look();
    return atomic_load_explicit(&load_busy, memory_order_relaxed)
               ? 0
               : atomic_load_explicit(&spin_ns, memory_order_relaxed);
}

long long gvs_spin_busy_ns(void)
{
    return 20 * gvs_spin_ns();
}

long long gvs_spin_hot_next(long long horizon, long long quiet_ns)
{
    if (quiet_ns > GVS_SPIN_HOT_MAX_NS)
        return 0;
    long long faded = horizon - horizon / 16;
    long long next = quiet_ns > 0 && 2 * quiet_ns > faded ? 2 * quiet_ns
                                                          : faded;
    return next < GVS_SPIN_HOT_MAX_NS ? (next > 0 ? next : 0)
                                      : GVS_SPIN_HOT_MAX_NS;
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
