/*
 * Ordered map from 64-bit keys to pointers, for the tables a plugin keeps
 * beside its handle table (include/gvs/handles.h): objects looked up by a
 * value it does not choose (a CUDA pointer, a texture object, an address
 * range's base).  A sorted array: lookups are O(log n), inserts and
 * removals O(n), which suits tables that are read far more often than
 * they change.
 *
 * Not thread-safe: the owner guards it.  A zeroed struct is an empty map.
 */
#ifndef GVS_U64MAP_H
#define GVS_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct gvs_u64map_entry {
    uint64_t key;
    void *val;
};

struct gvs_u64map {
    struct gvs_u64map_entry *e;
    size_t n, cap;
};

/* Adds key -> val (val not NULL).  0, GVS_E_INVAL if key is already
 * present (nothing changes) or val is NULL, or GVS_E_NOMEM. */
int gvs_u64map_put(struct gvs_u64map *m, uint64_t key, void *val);

/* The value of key, or NULL. */
void *gvs_u64map_get(const struct gvs_u64map *m, uint64_t key);

/* The value of the greatest key <= key (its key in *found, which may be
 * NULL), or NULL if there is none: for maps of address ranges by base. */
void *gvs_u64map_floor(const struct gvs_u64map *m, uint64_t key,
                       uint64_t *found);

/* Removes key and returns its value, or NULL if absent. */
void *gvs_u64map_remove(struct gvs_u64map *m, uint64_t key);

/* Frees the storage; the map is empty again.  Values are the caller's. */
void gvs_u64map_clear(struct gvs_u64map *m);

#endif
