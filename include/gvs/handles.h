/*
 * Per-session handle table: maps the opaque 64-bit ids a client sees to
 * the backend objects they stand for (streams, events, graphs, pools,
 * arrays, textures, ...).  A plugin keeps one table per session, so an id
 * from another session, or a made-up one, is simply not found.
 *
 * Ids are unpredictable (a per-table random key mixed into a counter),
 * never reused within a table, and never below GVS_HANDLE_MIN, so they
 * cannot be mistaken for CUDA's special values (0, cudaStreamLegacy,
 * cudaStreamPerThread, ...).  Each entry has a type tag; looking an id up
 * under another type fails.
 *
 * Thread-safe: every function may be called from any thread.
 */
#ifndef GVS_HANDLES_H
#define GVS_HANDLES_H

#include <stdint.h>

#define GVS_HANDLE_MIN ((uint64_t)1 << 16)

struct gvs_handles;

/* New empty table; NULL on allocation failure. */
struct gvs_handles *gvs_handles_new(void);

/* Frees the table; release (may be NULL) is called for every object still
 * in it, with its type, in no particular order. */
void gvs_handles_free(struct gvs_handles *t,
                      void (*release)(uint16_t type, void *obj, void *arg),
                      void *arg);

/* Adds obj (not NULL) under type and returns its new id in *id.
 * 0 or GVS_E_NOMEM. */
int gvs_handles_add(struct gvs_handles *t, uint16_t type, void *obj,
                    uint64_t *id);

/* The object of id if it exists with this type, else NULL. */
void *gvs_handles_get(struct gvs_handles *t, uint16_t type, uint64_t id);

/* Removes id and returns its object, or NULL (nothing removed) if id does
 * not exist with this type. */
void *gvs_handles_remove(struct gvs_handles *t, uint16_t type, uint64_t id);

/* Number of live entries. */
uint64_t gvs_handles_count(struct gvs_handles *t);

#endif
