/* Ids of CUDA objects the session did not create (a device's default
 * memory pool, whatever pool is current): the same id every time either
 * API plugin names the object (remote_be.h, handle_intern). */
#include "state.h"

#include <pthread.h>

#include "gvs/err.h"
#include "gvs/u64map.h"

/* Guards `ids` and the adding and removing of interned ids.  One map per
 * handle type would be the same: the objects are CUDA's own pointers,
 * which no two types share. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map ids; /* object -> id */

int remote_be_handle_intern(uint16_t type, void *obj, uint64_t *id)
{
    int rc = 0;
    pthread_mutex_lock(&lock);
    void *known = gvs_u64map_get(&ids, (uint64_t)(uintptr_t)obj);
    if (known != NULL) {
        *id = (uint64_t)(uintptr_t)known;
    } else {
        rc = gvs_handles_add(remote_be_handles(), type, obj, id);
        if (rc == 0 &&
            gvs_u64map_put(&ids, (uint64_t)(uintptr_t)obj,
                           (void *)(uintptr_t)*id) < 0) {
            gvs_handles_remove(remote_be_handles(), type, *id);
            rc = GVS_E_NOMEM;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void *remote_be_handle_forget(uint16_t type, uint64_t id)
{
    pthread_mutex_lock(&lock);
    void *obj = gvs_handles_get(remote_be_handles(), type, id);
    if (obj != NULL) {
        gvs_u64map_remove(&ids, (uint64_t)(uintptr_t)obj);
        gvs_handles_remove(remote_be_handles(), type, id);
    }
    pthread_mutex_unlock(&lock);
    return obj;
}

void remote_be_intern_close(void)
{
    gvs_u64map_clear(&ids);
}
