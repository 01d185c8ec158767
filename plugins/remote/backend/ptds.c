/* Per-thread default streams (remote_be.h): one per lane and context,
 * for both API plugins, as natively the runtime's cudaStreamPerThread
 * is the driver's CU_STREAM_PER_THREAD of the device's primary context.
 * The driver destroys a context's streams with it, so each context has a
 * generation, moved on when it loses them: a lane's stream of an older
 * generation is gone, and its entry is free for reuse. */
#include <pthread.h>

#include "gvs/mem.h"
#include "state.h"

struct gvs_remote_ptds {
    uint64_t key; /* ctx_key */
    uint64_t generation;
    void *s; /* CUstream */
};

/* The generation of each context that lost its streams, by ctx_key
 * (absent: 0). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map generations;

/* A created context by its CUcontext, a primary context by its device
 * (below any address: CUDA's objects are never in the first page). */
static uint64_t ctx_key(void *ctx, int dev)
{
    return ctx != NULL ? (uint64_t)(uintptr_t)ctx : (uint64_t)(uint32_t)dev;
}

static uint64_t generation(uint64_t key)
{
    pthread_mutex_lock(&lock);
    uint64_t g = (uint64_t)(uintptr_t)gvs_u64map_get(&generations, key);
    pthread_mutex_unlock(&lock);
    return g;
}

void remote_be_ptds_lost(void *ctx, int dev)
{
    uint64_t key = ctx_key(ctx, dev);
    pthread_mutex_lock(&lock);
    uint64_t g = (uint64_t)(uintptr_t)gvs_u64map_remove(&generations, key);
    /* Out of memory, the generation stays 0: a context that lost its
     * streams twice looks unchanged, at worst, until the next loss. */
    (void)gvs_u64map_put(&generations, key, (void *)(uintptr_t)(g + 1));
    pthread_mutex_unlock(&lock);
}

/* The lane's entry for key, else one whose stream is gone, else a new
 * one; NULL when out of memory. */
static struct gvs_remote_ptds *entry(struct gvs_remote_lane *l, uint64_t key)
{
    struct gvs_remote_ptds *free_one = NULL;
    for (uint32_t i = 0; i < l->nptds; i++) {
        if (l->ptds[i].key == key)
            return &l->ptds[i];
        if (free_one == NULL && l->ptds[i].generation !=
                                    generation(l->ptds[i].key))
            free_one = &l->ptds[i];
    }
    if (free_one != NULL) {
        *free_one = (struct gvs_remote_ptds){key, 0, NULL};
        return free_one;
    }
    struct gvs_remote_ptds *n =
        gvs_realloc(l->ptds, ((size_t)l->nptds + 1) * sizeof(*n));
    if (n == NULL)
        return NULL;
    l->ptds = n;
    n[l->nptds] = (struct gvs_remote_ptds){key, 0, NULL};
    return &n[l->nptds++];
}

int32_t remote_be_ptds_stream(struct gvs_call *call, void *ctx, int dev,
                              int32_t (*create)(void **s), int32_t nomem,
                              void **out)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    uint64_t key = ctx_key(ctx, dev);
    struct gvs_remote_ptds *e = l != NULL ? entry(l, key) : NULL;
    if (e == NULL)
        return nomem;
    uint64_t g = generation(key);
    if (e->s == NULL || e->generation != g) {
        void *s = NULL;
        int32_t r = create(&s);
        if (r != 0)
            return r;
        *e = (struct gvs_remote_ptds){key, g, s};
    }
    *out = e->s;
    return 0;
}

void remote_be_ptds_close(void)
{
    pthread_mutex_lock(&lock);
    gvs_u64map_clear(&generations);
    pthread_mutex_unlock(&lock);
}
