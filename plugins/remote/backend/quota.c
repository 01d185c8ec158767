/*
 * The session's GPU memory quota (remote_be.h; docs/security.md), one
 * for every API plugin of the session: the runtime's cudaMalloc and the
 * driver's cuMemAlloc count against the same bytes.
 *
 * Each allocation counted is an entry of one map per key space, holding
 * its bytes, device and owner; `used` is their sum plus what handlers
 * have taken for allocations CUDA is still making, and `device_bytes`
 * their sum on each device ordinal gvsd shows per GPU.  One lock guards
 * it all: allocations are far rarer than copies or launches.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "state.h"

/* No device holds this much: a larger request (or an overflowing
 * estimate) fails as CUDA would fail it, and sums of a few in flight
 * cannot wrap. */
#define QUOTA_REQUEST_MAX ((uint64_t)1 << 56)

struct quota_entry {
    uint64_t bytes;
    uint64_t owner;
    int device;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct gvs_host_api *host;
static struct gvs_session *session;
static uint64_t quota, used;
static struct gvs_u64map maps[GVS_RQ_KINDS];
/* What the entries hold on each device, and what gvsd was last told. */
static uint64_t device_bytes[GVS_SESSION_GPUS];
static uint64_t device_reported[GVS_SESSION_GPUS];

void remote_be_quota_open(const struct gvs_host_api *h,
                          struct gvs_session *s)
{
    struct gvs_session_info info;
    h->session_info(s, &info);
    pthread_mutex_lock(&lock);
    host = h;
    session = s;
    quota = info.memory_quota;
    pthread_mutex_unlock(&lock);
}

/* Caller holds lock. */
static void report(void)
{
    host->report_memory(session, used);
    for (int d = 0; d < GVS_SESSION_GPUS; d++) {
        if (device_bytes[d] != device_reported[d])
            host->report_gpu_memory(session, d, device_bytes[d]);
        device_reported[d] = device_bytes[d];
    }
}

/* Caller holds lock.  bytes more (add) or fewer on device. */
static void count_on(int device, uint64_t bytes, int add)
{
    if (device >= 0 && device < GVS_SESSION_GPUS)
        device_bytes[device] = add ? device_bytes[device] + bytes
                                   : device_bytes[device] - bytes;
}

int remote_be_quota_take(uint64_t bytes)
{
    int rc = 0;
    pthread_mutex_lock(&lock);
    if (bytes > QUOTA_REQUEST_MAX ||
        (quota != 0 && (used > quota || bytes > quota - used)))
        rc = -1;
    if (rc == 0 && bytes > 0) {
        used += bytes;
        report();
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Caller holds lock.  Removes key's entry, giving its bytes back. */
static void drop(struct gvs_u64map *m, uint64_t key)
{
    struct quota_entry *q = gvs_u64map_remove(m, key);
    if (q != NULL) {
        used -= q->bytes;
        count_on(q->device, q->bytes, 0);
        gvs_free(q);
    }
}

void remote_be_quota_settle(int ok, enum gvs_remote_quota_kind kind,
                            uint64_t key, int device, uint64_t owner,
                            uint64_t taken, uint64_t bytes)
{
    struct quota_entry *q = NULL;
    if (ok && key != 0)
        q = gvs_malloc(sizeof(*q));
    pthread_mutex_lock(&lock);
    used -= taken;
    if (ok && key != 0) {
        /* CUDA hands out a key again only once it is free: whatever we
         * still count under it (memory a reset or a graph took back
         * unseen) is gone. */
        drop(&maps[kind], key);
        used += bytes;
        count_on(device, bytes, 1);
        if (q != NULL) {
            *q = (struct quota_entry){bytes, owner, device};
            /* Without an entry the bytes stay counted for the session's
             * life: erring on the tenant's side, never the host's. */
            if (gvs_u64map_put(&maps[kind], key, q) < 0)
                gvs_free(q);
        }
    }
    report();
    pthread_mutex_unlock(&lock);
}

void remote_be_quota_release(enum gvs_remote_quota_kind kind, uint64_t key)
{
    pthread_mutex_lock(&lock);
    drop(&maps[kind], key);
    report();
    pthread_mutex_unlock(&lock);
}

/* Caller holds lock.  Drops every entry for which pick(entry, arg). */
static void drop_where(int (*pick)(const struct quota_entry *, uint64_t),
                       uint64_t arg)
{
    for (size_t k = 0; k < sizeof(maps) / sizeof(maps[0]); k++) {
        struct gvs_u64map *m = &maps[k];
        for (size_t i = m->n; i-- > 0;)
            if (pick(m->e[i].val, arg))
                drop(m, m->e[i].key);
    }
    report();
}

static int on_device(const struct quota_entry *q, uint64_t device)
{
    return q->device == (int)device;
}

static int of_owner(const struct quota_entry *q, uint64_t owner)
{
    return q->owner == owner;
}

void remote_be_quota_release_device(int device)
{
    pthread_mutex_lock(&lock);
    drop_where(on_device, (uint64_t)device);
    pthread_mutex_unlock(&lock);
}

void remote_be_quota_release_owner(uint64_t owner)
{
    if (owner == 0)
        return;
    pthread_mutex_lock(&lock);
    drop_where(of_owner, owner);
    pthread_mutex_unlock(&lock);
}

void remote_be_quota_mem_info(size_t *free, size_t *total)
{
    pthread_mutex_lock(&lock);
    if (quota != 0) {
        uint64_t left = used < quota ? quota - used : 0;
        if (*total > quota)
            *total = (size_t)quota;
        if (free != NULL && *free > left)
            *free = (size_t)left;
    }
    pthread_mutex_unlock(&lock);
}

void remote_be_quota_usage(int device, uint64_t *bytes, uint64_t *limit)
{
    pthread_mutex_lock(&lock);
    *bytes = device >= 0 && device < GVS_SESSION_GPUS ? device_bytes[device] : 0;
    *limit = quota;
    pthread_mutex_unlock(&lock);
}

void remote_be_quota_close(void)
{
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < GVS_RQ_KINDS; k++) {
        for (size_t i = 0; i < maps[k].n; i++)
            gvs_free(maps[k].e[i].val);
        gvs_u64map_clear(&maps[k]);
    }
    used = 0;
    memset(device_bytes, 0, sizeof(device_bytes));
    memset(device_reported, 0, sizeof(device_reported));
    pthread_mutex_unlock(&lock);
}

/* The devices gvsd was told the UUID of, a bit each. */
static _Atomic uint32_t named;

int remote_be_quota_device_unnamed(int device)
{
    return device >= 0 && device < GVS_SESSION_GPUS &&
           (atomic_load(&named) & (1u << device)) == 0;
}

void remote_be_quota_name_device(int device, const uint8_t uuid[16])
{
    if (remote_be_quota_device_unnamed(device) &&
        (atomic_fetch_or(&named, 1u << device) & (1u << device)) == 0)
        host->report_gpu_uuid(session, device, uuid);
}
