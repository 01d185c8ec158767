#include <string.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

/* Index of the first entry whose key is > key. */
static size_t upper_bound(const struct gvs_u64map *m, uint64_t key)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int gvs_u64map_put(struct gvs_u64map *m, uint64_t key, void *val)
{
    if (val == NULL)
        return GVS_E_INVAL;
    size_t i = upper_bound(m, key);
    if (i > 0 && m->e[i - 1].key == key)
        return GVS_E_INVAL;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        struct gvs_u64map_entry *e = gvs_realloc(m->e, cap * sizeof(*e));
        if (e == NULL)
            return GVS_E_NOMEM;
        m->e = e;
        m->cap = cap;
    }
    memmove(&m->e[i + 1], &m->e[i], (m->n - i) * sizeof(*m->e));
    m->e[i] = (struct gvs_u64map_entry){key, val};
    m->n++;
    return 0;
}

void *gvs_u64map_get(const struct gvs_u64map *m, uint64_t key)
{
    size_t i = upper_bound(m, key);
    return i > 0 && m->e[i - 1].key == key ? m->e[i - 1].val : NULL;
}

void *gvs_u64map_floor(const struct gvs_u64map *m, uint64_t key,
                       uint64_t *found)
{
    size_t i = upper_bound(m, key);
    if (i == 0)
        return NULL;
    if (found != NULL)
        *found = m->e[i - 1].key;
    return m->e[i - 1].val;
}

void *gvs_u64map_remove(struct gvs_u64map *m, uint64_t key)
{
    size_t i = upper_bound(m, key);
    if (i == 0 || m->e[i - 1].key != key)
        return NULL;
    void *val = m->e[i - 1].val;
    memmove(&m->e[i - 1], &m->e[i], (m->n - i) * sizeof(*m->e));
    m->n--;
    return val;
}

void gvs_u64map_clear(struct gvs_u64map *m)
{
    gvs_free(m->e);
    *m = (struct gvs_u64map){0};
}
