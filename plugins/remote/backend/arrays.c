/* The session's arrays and mipmapped arrays (remote_be.h, "Arrays"): one
 * kind of table object for both APIs, each with the ids of its
 * sub-arrays (a mipmapped array's levels, an array's planes). */
#include <pthread.h>

#include "gvs/err.h"
#include "gvs/handles.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "state.h"

struct array {
    void *handle;
    int sub;                /* owned by its parent */
    struct gvs_u64map subs; /* level or plane -> array id */
};

/* Guards every array's sub-arrays. */
static pthread_mutex_t subs_lock = PTHREAD_MUTEX_INITIALIZER;

static int valid_type(uint16_t type)
{
    return type == GVS_RH_ARRAY || type == GVS_RH_MIPMAPPED_ARRAY;
}

static int add(uint16_t type, void *handle, int sub, uint64_t *id)
{
    struct array *a = gvs_calloc(1, sizeof(*a));
    if (a == NULL)
        return -1;
    a->handle = handle;
    a->sub = sub;
    if (gvs_handles_add(remote_be_handles(), type, a, id) == 0)
        return 0;
    gvs_free(a);
    return -1;
}

int remote_be_array_add(uint16_t type, void *handle, uint64_t *id)
{
    return valid_type(type) && handle != NULL ? add(type, handle, 0, id) : -1;
}

void *remote_be_array_get(uint16_t type, uint64_t id, int *sub)
{
    struct array *a = valid_type(type)
                          ? gvs_handles_get(remote_be_handles(), type, id)
                          : NULL;
    if (a != NULL && sub != NULL)
        *sub = a->sub;
    return a != NULL ? a->handle : NULL;
}

int32_t remote_be_array_sub(uint16_t type, uint64_t parent, uint32_t key,
                            int32_t (*get)(void *parent, uint32_t key,
                                           void **sub),
                            int32_t missing, int32_t nomem, uint64_t *id)
{
    int32_t r = missing;
    void *handle = NULL;
    pthread_mutex_lock(&subs_lock);
    struct array *p = valid_type(type)
                          ? gvs_handles_get(remote_be_handles(), type, parent)
                          : NULL;
    void *known = p != NULL ? gvs_u64map_get(&p->subs, key) : NULL;
    if (known != NULL) {
        *id = (uint64_t)(uintptr_t)known;
        r = 0;
    } else if (p != NULL && (r = get(p->handle, key, &handle)) == 0) {
        if (add(GVS_RH_ARRAY, handle, 1, id) < 0) {
            r = nomem;
        } else if (gvs_u64map_put(&p->subs, key, (void *)(uintptr_t)*id) < 0) {
            gvs_free(gvs_handles_remove(remote_be_handles(), GVS_RH_ARRAY,
                                        *id));
            r = nomem;
        }
    }
    pthread_mutex_unlock(&subs_lock);
    return r;
}

int remote_be_array_remove(uint16_t type, uint64_t id)
{
    struct gvs_handles *t = remote_be_handles();
    struct array *a = valid_type(type) ? gvs_handles_remove(t, type, id)
                                       : NULL;
    if (a == NULL)
        return -1;
    /* CUDA freed the sub-arrays with their parent. */
    pthread_mutex_lock(&subs_lock);
    for (size_t i = 0; i < a->subs.n; i++)
        gvs_free(gvs_handles_remove(t, GVS_RH_ARRAY,
                                    (uint64_t)(uintptr_t)a->subs.e[i].val));
    gvs_u64map_clear(&a->subs);
    pthread_mutex_unlock(&subs_lock);
    gvs_free(a);
    return 0;
}

void remote_be_array_release(uint16_t type, void *obj, void *arg)
{
    (void)arg;
    if (!valid_type(type))
        return;
    struct array *a = obj;
    gvs_u64map_clear(&a->subs);
    gvs_free(a);
}
