/* The program's user-object destructors (gvs_remote.h), kept by id until
 * the backend's notification runs them: one table for every API
 * frontend of the process. */
#include <pthread.h>

#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

struct destructor {
    void (*fn)(void *);
    void *ptr;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map records;
static uint64_t last_id;

/* A forked child has a new session, where none of these will run. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (size_t i = 0; i < records.n; i++)
        gvs_free(records.e[i].val);
    gvs_u64map_clear(&records);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void destructors_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static struct destructor *take(uint64_t id)
{
    pthread_mutex_lock(&lock);
    struct destructor *d = gvs_u64map_remove(&records, id);
    pthread_mutex_unlock(&lock);
    return d;
}

EXPORT uint64_t gvs_remote_destructor_add(void (*fn)(void *), void *ptr)
{
    struct destructor *d = gvs_malloc(sizeof(*d));
    uint64_t id = 0;
    if (d == NULL)
        return 0;
    *d = (struct destructor){fn, ptr};
    pthread_mutex_lock(&lock);
    if (gvs_u64map_put(&records, last_id + 1, d) == 0)
        id = ++last_id;
    pthread_mutex_unlock(&lock);
    if (id == 0)
        gvs_free(d);
    return id;
}

EXPORT void gvs_remote_destructor_forget(uint64_t id)
{
    gvs_free(take(id));
}

EXPORT void gvs_remote_destructor_run(struct gvs_buf *body)
{
    uint64_t id;
    if (gvs_buf_get_u64(body, &id) < 0 || gvs_buf_expect_end(body) < 0)
        return;
    struct destructor *d = take(id);
    if (d != NULL)
        d->fn(d->ptr);
    gvs_free(d);
}
