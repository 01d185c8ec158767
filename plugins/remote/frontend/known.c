/*
 * The streams and events this process made and has not destroyed,
 * through either API frontend, each with its owner, and whether a stream
 * capture may be under way (gvs_remote.h): what lets an event record, a
 * stream wait or a memset be posted without a round trip when it cannot
 * fail.  Whatever the tables do not know (an id made up or destroyed, an
 * event opened from another process, a capture) takes the round trip,
 * so its error comes back at once, as natively.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

struct owner {
    uint16_t api;
    uint64_t tag;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map tables[GVS_REMOTE_KNOWN_KINDS];
/* Captures begun and not known to have ended: over-counting only costs
 * round trips. */
static atomic_int captures;

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void clear_locked(struct gvs_u64map *m)
{
    for (size_t i = 0; i < m->n; i++)
        gvs_free(m->e[i].val);
    gvs_u64map_clear(m);
}

/* The child's session has none of the parent's streams and events. */
static void fork_child(void)
{
    for (int k = 0; k < GVS_REMOTE_KNOWN_KINDS; k++)
        clear_locked(&tables[k]);
    atomic_store(&captures, 0);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void known_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

EXPORT void gvs_remote_known_add(int kind, uint64_t id, uint16_t api,
                                  uint64_t owner)
{
    if (kind < 0 || kind >= GVS_REMOTE_KNOWN_KINDS || owner == 0)
        return;
    struct owner *o = gvs_malloc(sizeof(*o));
    /* Out of memory it stays unknown, which only costs round trips. */
    if (o == NULL)
        return;
    *o = (struct owner){api, owner};
    pthread_mutex_lock(&lock);
    gvs_free(gvs_u64map_remove(&tables[kind], id));
    if (gvs_u64map_put(&tables[kind], id, o) < 0)
        gvs_free(o);
    pthread_mutex_unlock(&lock);
}

EXPORT void gvs_remote_known_remove(int kind, uint64_t id)
{
    if (kind < 0 || kind >= GVS_REMOTE_KNOWN_KINDS)
        return;
    pthread_mutex_lock(&lock);
    gvs_free(gvs_u64map_remove(&tables[kind], id));
    pthread_mutex_unlock(&lock);
}

EXPORT uint64_t gvs_remote_known_owner(int kind, uint64_t id, uint16_t *api)
{
    uint64_t tag = 0;
    if (kind < 0 || kind >= GVS_REMOTE_KNOWN_KINDS)
        return 0;
    pthread_mutex_lock(&lock);
    const struct owner *o = gvs_u64map_get(&tables[kind], id);
    if (o != NULL) {
        tag = o->tag;
        *api = o->api;
    }
    pthread_mutex_unlock(&lock);
    return tag;
}

EXPORT void gvs_remote_known_forget_owner(uint16_t api, uint64_t owner)
{
    pthread_mutex_lock(&lock);
    for (int k = 0; k < GVS_REMOTE_KNOWN_KINDS; k++) {
        struct gvs_u64map *m = &tables[k];
        size_t i = 0;
        while (i < m->n) {
            const struct owner *o = m->e[i].val;
            if (o->api == api && o->tag == owner)
                gvs_free(gvs_u64map_remove(m, m->e[i].key));
            else
                i++;
        }
    }
    pthread_mutex_unlock(&lock);
}

EXPORT void gvs_remote_capture_begins(void)
{
    atomic_fetch_add(&captures, 1);
}

EXPORT void gvs_remote_capture_ends(void)
{
    atomic_fetch_sub(&captures, 1);
}

EXPORT int gvs_remote_capturing(void)
{
    return atomic_load(&captures) != 0;
}
