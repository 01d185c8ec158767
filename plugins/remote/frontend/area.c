/*
 * The connection's data area (gvs_conn_area: ivshmem://, where no
 * descriptor crosses the VM boundary) as the place of shared host memory:
 * extents of whole pages, first fit, each shared with the backend as a
 * memfd is over shm:// and unix:// (shared.c).  The area is this
 * connection's alone, so its bookkeeping is this process's; a connection
 * made anew (a forked child's, or after a reconnect) starts with its
 * area empty.
 */
#include "remote_fe.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/mem.h"

struct extent {
    size_t off, len;
};

/* Extents in use, by offset; a leaf lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *base; /* the area the extents are of */
static size_t size;
static struct extent *used;
static size_t nused, cap;

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child's session is new: what the parent placed in its area is
 * plain memory to the child (hostmem.c), which never gives it back. */
static void fork_child(void)
{
    base = NULL;
    size = 0;
    nused = 0;
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void area_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Caller holds lock.  Where the first gap of len bytes starts, or -1. */
static long long first_fit(size_t len, size_t *at)
{
    size_t off = 0;
    for (size_t i = 0; i <= nused; i++) {
        size_t end = i < nused ? used[i].off : size;
        if (end - off >= len) {
            *at = i;
            return (long long)off;
        }
        if (i < nused)
            off = used[i].off + used[i].len;
    }
    return -1;
}

int remote_fe_area_take(struct gvs_client *cl, size_t len, void **p,
                        uint64_t *off)
{
    void *b;
    size_t n;
    *p = NULL;
    *off = 0;
    if (gvs_client_area(cl, &b, &n) < 0)
        return GVS_E_NOTSUP;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (len == 0 || len % page != 0 || len > n)
        return GVS_E_NOMEM;
    int rc = GVS_E_NOMEM;
    pthread_mutex_lock(&lock);
    if (b != base || n != size) {
        base = b;
        size = n;
        nused = 0;
    }
    size_t at;
    long long o = first_fit(len, &at);
    if (o >= 0 && nused == cap) {
        size_t ncap = cap != 0 ? cap * 2 : 16;
        struct extent *e = gvs_realloc(used, ncap * sizeof(*e));
        if (e != NULL) {
            used = e;
            cap = ncap;
        }
    }
    if (o >= 0 && nused < cap) {
        memmove(&used[at + 1], &used[at], (nused - at) * sizeof(*used));
        used[at] = (struct extent){(size_t)o, len};
        nused++;
        *p = base + o;
        *off = (uint64_t)o;
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    /* Fresh memory reads as zeros, as a new memfd's does; the area may
     * hold what an earlier allocation, or an earlier process of the
     * guest in this slot, left there. */
    if (rc == 0)
        memset(*p, 0, len);
    return rc;
}

int remote_fe_area_give(const void *p)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    const uint8_t *q = p;
    if (base != NULL && q >= base && q < base + size)
        for (size_t i = 0; i < nused && !found; i++)
            if (base + used[i].off == q) {
                memmove(&used[i], &used[i + 1],
                        (nused - i - 1) * sizeof(*used));
                nused--;
                found = 1;
            }
    pthread_mutex_unlock(&lock);
    return found;
}
