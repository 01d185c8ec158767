/* Tables of the program's records by id (remote_fe.h): host callbacks,
 * user-object destructors.  A forked child's session is new, where none
 * of the parent's records will be asked for: it starts with every table
 * empty. */
#include "remote_fe.h"

#include "gvs/mem.h"

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static struct remote_records *tables; /* every table that holds records */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&tables_lock);
    for (struct remote_records *t = tables; t != NULL; t = t->next)
        pthread_mutex_lock(&t->lock);
}

static void fork_parent(void)
{
    for (struct remote_records *t = tables; t != NULL; t = t->next)
        pthread_mutex_unlock(&t->lock);
    pthread_mutex_unlock(&tables_lock);
}

static void fork_child(void)
{
    for (struct remote_records *t = tables; t != NULL; t = t->next) {
        for (size_t i = 0; i < t->map.n; i++)
            gvs_free(t->map.e[i].val);
        gvs_u64map_clear(&t->map);
        pthread_mutex_unlock(&t->lock);
    }
    pthread_mutex_unlock(&tables_lock);
}

static void atfork_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* A table joins the list the fork handlers walk at its first record. */
static void enlist(struct remote_records *t)
{
    pthread_once(&atfork_once, atfork_init);
    pthread_mutex_lock(&tables_lock);
    if (!t->listed) {
        t->next = tables;
        tables = t;
        t->listed = 1;
    }
    pthread_mutex_unlock(&tables_lock);
}

uint64_t remote_records_add(struct remote_records *t, void *rec)
{
    uint64_t id = 0;
    if (rec == NULL)
        return 0;
    enlist(t);
    pthread_mutex_lock(&t->lock);
    if (gvs_u64map_put(&t->map, t->last_id + 1, rec) == 0)
        id = ++t->last_id;
    pthread_mutex_unlock(&t->lock);
    if (id == 0)
        gvs_free(rec);
    return id;
}

void *remote_records_take(struct remote_records *t, uint64_t id)
{
    pthread_mutex_lock(&t->lock);
    void *rec = gvs_u64map_remove(&t->map, id);
    pthread_mutex_unlock(&t->lock);
    return rec;
}

int remote_records_copy(struct remote_records *t, uint64_t id, void *out,
                        size_t size)
{
    pthread_mutex_lock(&t->lock);
    const void *rec = gvs_u64map_get(&t->map, id);
    if (rec != NULL)
        memcpy(out, rec, size);
    pthread_mutex_unlock(&t->lock);
    return rec != NULL ? 0 : -1;
}
