/* The program's user-object destructors (gvs_remote.h), kept by id until
 * the backend's notification runs them: one table for every API
 * frontend of the process. */
#include "gvs/mem.h"
#include "remote_fe.h"

#define EXPORT __attribute__((visibility("default")))

struct destructor {
    void (*fn)(void *);
    void *ptr;
};

static struct remote_records records = REMOTE_RECORDS_INIT;

EXPORT uint64_t gvs_remote_destructor_add(void (*fn)(void *), void *ptr)
{
    struct destructor *d = gvs_malloc(sizeof(*d));
    if (d != NULL)
        *d = (struct destructor){fn, ptr};
    return remote_records_add(&records, d);
}

static struct destructor *take(uint64_t id)
{
    return remote_records_take(&records, id);
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
