/* Texture and surface objects (remote_be.h): the values each plugin of
 * the session created, with the description each was made from. */
#include <pthread.h>
#include <string.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "state.h"

struct texobj {
    uint16_t plugin;
    uint8_t *desc;
    size_t len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map sets[2]; /* textures, surfaces */

int remote_be_texobj_keep(uint16_t plugin, int surface, uint64_t value,
                          const uint8_t *desc, size_t len)
{
    struct texobj *o = gvs_malloc(sizeof(*o));
    uint8_t *copy = gvs_malloc(len ? len : 1);
    int rc = o != NULL && copy != NULL ? 0 : -1;
    if (rc == 0) {
        memcpy(copy, desc, len);
        *o = (struct texobj){plugin, copy, len};
        pthread_mutex_lock(&lock);
        rc = gvs_u64map_put(&sets[surface != 0], value, o) < 0 ? -1 : 0;
        pthread_mutex_unlock(&lock);
    }
    if (rc < 0) {
        gvs_free(o);
        gvs_free(copy);
    }
    return rc;
}

/* Caller holds lock. */
static struct texobj *find(uint16_t plugin, int surface, uint64_t value)
{
    struct texobj *o = gvs_u64map_get(&sets[surface != 0], value);
    return o != NULL && o->plugin == plugin ? o : NULL;
}

int32_t remote_be_texobj_destroy(uint16_t plugin, int surface, uint64_t value,
                                 int32_t (*destroy)(uint64_t value),
                                 int32_t missing)
{
    pthread_mutex_lock(&lock);
    struct texobj *o = find(plugin, surface, value);
    int32_t r = o != NULL ? destroy(value) : missing;
    if (o != NULL && r == 0) {
        gvs_u64map_remove(&sets[surface != 0], value);
        gvs_free(o->desc);
        gvs_free(o);
    }
    pthread_mutex_unlock(&lock);
    return r;
}

int remote_be_texobj_desc(uint16_t plugin, int surface, uint64_t value,
                          uint8_t **desc, size_t *len)
{
    int rc = 1;
    pthread_mutex_lock(&lock);
    const struct texobj *o = find(plugin, surface, value);
    if (o != NULL) {
        *desc = gvs_malloc(o->len ? o->len : 1);
        rc = *desc != NULL ? 0 : GVS_E_NOMEM;
        if (rc == 0) {
            memcpy(*desc, o->desc, o->len);
            *len = o->len;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void remote_be_texobjs_free(void)
{
    pthread_mutex_lock(&lock);
    for (size_t s = 0; s < 2; s++) {
        for (size_t i = 0; i < sets[s].n; i++) {
            struct texobj *o = sets[s].e[i].val;
            gvs_free(o->desc);
            gvs_free(o);
        }
        gvs_u64map_clear(&sets[s]);
    }
    pthread_mutex_unlock(&lock);
}
