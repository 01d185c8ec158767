/* The watcher of a shm:// connection (shm_watch.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "gvs/thread.h"
#include "shm_ring.h"
#include "shm_watch.h"

/* After the first wake-up: the later ones, for a sleeper that made its
 * last look before the peer went and its futex call after. */
static const int again_ms[] = {1, 10, 100};

/* 1 once a byte arrived on the stop pipe (or it broke), after up to
 * ms milliseconds (-1: no limit). */
static int stopped(struct shm_watch *w, int ms)
{
    struct pollfd p = {.fd = w->stop[0], .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    return n != 0;
}

static void *watch_main(void *arg)
{
    struct shm_watch *w = arg;
    struct pollfd p[2] = {{.fd = w->sock, .events = POLLRDHUP},
                          {.fd = w->stop[0], .events = POLLIN}};
    for (;;) {
        int n = poll(p, 2, -1);
        if (n < 0 && errno != EINTR)
            return NULL;
        if (p[1].revents != 0)
            return NULL;
        if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
            break;
    }
    atomic_store(&w->s->peer_gone, 1);
    gvs_shm_wake_all(w->s->ctl);
    for (size_t i = 0; i < sizeof(again_ms) / sizeof(again_ms[0]); i++) {
        if (stopped(w, again_ms[i]))
            return NULL;
        gvs_shm_wake_all(w->s->ctl);
    }
    return NULL;
}

void gvs_shm_watch_init(struct shm_watch *w, int sock, struct shm_conn *s)
{
    w->sock = sock;
    w->s = s;
    atomic_init(&w->owner, 0);
    w->stop[0] = w->stop[1] = -1;
}

static void close_stop(struct shm_watch *w)
{
    for (int i = 0; i < 2; i++) {
        if (w->stop[i] >= 0)
            close(w->stop[i]);
        w->stop[i] = -1;
    }
}

int gvs_shm_watch_ensure(struct shm_watch *w)
{
    pid_t me = getpid();
    pid_t cur = atomic_load(&w->owner);
    if (cur == me)
        return 1;
    /* Another of our threads is starting it: that one will do. */
    if (cur == -me || !atomic_compare_exchange_strong(&w->owner, &cur, -me))
        return 0;
    /* A parent's, copied by fork: its pipe is ours to close here, its
     * thread is not in this process. */
    close_stop(w);
    if (pipe2(w->stop, O_CLOEXEC) < 0) {
        w->stop[0] = w->stop[1] = -1;
        atomic_store(&w->owner, 0);
        return 0;
    }
    if (gvs_thread_start_joinable(watch_main, w, "gvs-shm-watch",
                                  &w->thread) != 0) {
        close_stop(w);
        atomic_store(&w->owner, 0);
        return 0;
    }
    atomic_store(&w->owner, me);
    return 1;
}

void gvs_shm_watch_end(struct shm_watch *w)
{
    if (atomic_load(&w->owner) == getpid()) {
        char b = 0;
        while (write(w->stop[1], &b, 1) < 0 && errno == EINTR)
            ;
        pthread_join(w->thread, NULL);
    }
    close_stop(w);
    atomic_store(&w->owner, 0);
}
