#include <pthread.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/handles.h"
#include "gvs/mem.h"

struct entry {
    uint64_t id;
    uint16_t type;
    void *obj;
    struct entry *next;
};

struct gvs_handles {
    pthread_mutex_t lock;
    struct entry **buckets;
    uint64_t nbuckets; /* a power of two */
    uint64_t count;
    uint64_t counter;
    uint64_t key;
};

#define INITIAL_BUCKETS 64

/* A keyed bijection of 64-bit values (xor, then an invertible mixer), so
 * distinct counters give distinct ids that are hard to guess. */
static uint64_t mix(uint64_t x, uint64_t key)
{
    x ^= key;
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
}

static uint64_t random_key(void)
{
    uint64_t k;
    if (getrandom(&k, sizeof(k), 0) == (ssize_t)sizeof(k))
        return k;
    /* No entropy source: ids stay unique, only less unpredictable. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return mix((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32),
               (uint64_t)ts.tv_sec);
}

struct gvs_handles *gvs_handles_new(void)
{
    struct gvs_handles *t = gvs_calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->buckets = gvs_calloc(INITIAL_BUCKETS, sizeof(*t->buckets));
    if (t->buckets == NULL) {
        gvs_free(t);
        return NULL;
    }
    t->nbuckets = INITIAL_BUCKETS;
    t->key = random_key();
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void gvs_handles_free(struct gvs_handles *t,
                      void (*release)(uint16_t type, void *obj, void *arg),
                      void *arg)
{
    if (t == NULL)
        return;
    for (uint64_t b = 0; b < t->nbuckets; b++) {
        struct entry *e = t->buckets[b];
        while (e != NULL) {
            struct entry *next = e->next;
            if (release != NULL)
                release(e->type, e->obj, arg);
            gvs_free(e);
            e = next;
        }
    }
    gvs_free(t->buckets);
    pthread_mutex_destroy(&t->lock);
    gvs_free(t);
}

static uint64_t bucket_of(const struct gvs_handles *t, uint64_t id)
{
    /* Ids are already well mixed: their low bits are a fine hash. */
    return id & (t->nbuckets - 1);
}

/* Doubles the bucket array; on allocation failure the table just stays
 * more loaded. */
static void grow(struct gvs_handles *t)
{
    uint64_t n = t->nbuckets * 2;
    struct entry **nb = gvs_calloc(n, sizeof(*nb));
    if (nb == NULL)
        return;
    for (uint64_t b = 0; b < t->nbuckets; b++) {
        struct entry *e = t->buckets[b];
        while (e != NULL) {
            struct entry *next = e->next;
            e->next = nb[e->id & (n - 1)];
            nb[e->id & (n - 1)] = e;
            e = next;
        }
    }
    gvs_free(t->buckets);
    t->buckets = nb;
    t->nbuckets = n;
}

int gvs_handles_add(struct gvs_handles *t, uint16_t type, void *obj,
                    uint64_t *id)
{
    *id = 0;
    if (obj == NULL)
        return GVS_E_INVAL;
    struct entry *e = gvs_malloc(sizeof(*e));
    if (e == NULL)
        return GVS_E_NOMEM;
    pthread_mutex_lock(&t->lock);
    do
        e->id = mix(++t->counter, t->key);
    while (e->id < GVS_HANDLE_MIN);
    e->type = type;
    e->obj = obj;
    if (t->count >= t->nbuckets)
        grow(t);
    uint64_t b = bucket_of(t, e->id);
    e->next = t->buckets[b];
    t->buckets[b] = e;
    t->count++;
    *id = e->id;
    pthread_mutex_unlock(&t->lock);
    return 0;
}

/* Caller holds the lock.  The link that points at id's entry, or NULL. */
static struct entry **find(struct gvs_handles *t, uint16_t type, uint64_t id)
{
    for (struct entry **p = &t->buckets[bucket_of(t, id)]; *p != NULL;
         p = &(*p)->next)
        if ((*p)->id == id)
            return (*p)->type == type ? p : NULL;
    return NULL;
}

void *gvs_handles_get(struct gvs_handles *t, uint16_t type, uint64_t id)
{
    pthread_mutex_lock(&t->lock);
    struct entry **p = find(t, type, id);
    void *obj = p != NULL ? (*p)->obj : NULL;
    pthread_mutex_unlock(&t->lock);
    return obj;
}

void *gvs_handles_remove(struct gvs_handles *t, uint16_t type, uint64_t id)
{
    void *obj = NULL;
    pthread_mutex_lock(&t->lock);
    struct entry **p = find(t, type, id);
    if (p != NULL) {
        struct entry *e = *p;
        *p = e->next;
        obj = e->obj;
        gvs_free(e);
        t->count--;
    }
    pthread_mutex_unlock(&t->lock);
    return obj;
}

uint64_t gvs_handles_count(struct gvs_handles *t)
{
    pthread_mutex_lock(&t->lock);
    uint64_t n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}
