/*
 * 2D/3D copies on the wire, as both API plugins send them: a copy's
 * sides and its box (plugins/cudart/api/50-arrays.api, cuda.api).
 * Decoding and the arithmetic of a linear side's rows, for the backends;
 * no CUDA here.
 */
#ifndef GVS_REMOTE_BOX_H
#define GVS_REMOTE_BOX_H

#include <stdint.h>

#include "apigen_rt.h"
#include "gvs/err.h"

enum gvs_remote_side_kind {
    GVS_RSIDE_DEVICE = 0, /* wire values */
    GVS_RSIDE_ARRAY = 1,
    GVS_RSIDE_HOST = 2, /* the worker's own buffer: never from the wire */
    GVS_RSIDE_SHARED = 3, /* client host memory shared with the worker,
                           * linear like a device side: graph copy nodes
                           * only (gvs_remote_get_node_side) */
};

/* One side on the wire: u8 kind, u64 address or array id, u64 pitch,
 * u64 rows per slice, u64 x (bytes, also for arrays), u64 y, u64 z.
 * Row r of slice s starts at addr + ((z + s) * ysize + y + r) * pitch +
 * x. */
struct gvs_remote_side {
    uint8_t kind;
    uint64_t addr; /* device address, array id, or worker buffer */
    uint64_t pitch;
    uint64_t ysize;
    uint64_t x, y, z;
};

/* A box: u64 width in bytes, u64 height in rows, u64 depth in slices. */
struct gvs_remote_box {
    uint64_t w, h, d;
};

/* Decodes a side: kind 0 or 1, and 3 where shared is set; anything else
 * fails c with GVS_E_PROTO. */
static inline void gvs_remote_get_side_of(struct apigen_call *c,
                                          struct gvs_remote_side *s, int shared)
{
    apigen_get_u8(c, &s->kind);
    apigen_get_u64(c, &s->addr);
    apigen_get_u64(c, &s->pitch);
    apigen_get_u64(c, &s->ysize);
    apigen_get_u64(c, &s->x);
    apigen_get_u64(c, &s->y);
    apigen_get_u64(c, &s->z);
    if (c->rc == 0 && s->kind > GVS_RSIDE_ARRAY &&
        !(shared && s->kind == GVS_RSIDE_SHARED))
        c->rc = GVS_E_PROTO;
}

static inline void gvs_remote_get_side(struct apigen_call *c,
                                       struct gvs_remote_side *s)
{
    gvs_remote_get_side_of(c, s, 0);
}

/* A graph's copy node may also name shared host memory. */
static inline void gvs_remote_get_node_side(struct apigen_call *c,
                                            struct gvs_remote_side *s)
{
    gvs_remote_get_side_of(c, s, 1);
}

static inline void gvs_remote_get_box(struct apigen_call *c,
                                      struct gvs_remote_box *b)
{
    apigen_get_u64(c, &b->w);
    apigen_get_u64(c, &b->h);
    apigen_get_u64(c, &b->d);
}

/* Bytes of a box, or 0 when it overflows (callers refuse that). */
static inline uint64_t gvs_remote_box_bytes(const struct gvs_remote_box *b)
{
    uint64_t n;
    if (__builtin_mul_overflow(b->w, b->h, &n) ||
        __builtin_mul_overflow(n, b->d, &n))
        return 0;
    return n;
}

/* The first byte of a non-empty box's rows on a linear side, and the
 * length from there to the last row's end: 0, 1 when the pitch cannot
 * hold a row, -1 when the addresses overflow. */
static inline int gvs_remote_linear_span(const struct gvs_remote_side *s,
                                         const struct gvs_remote_box *b,
                                         uint64_t *first, uint64_t *len)
{
    uint64_t a, z;
    if ((b->h > 1 || b->d > 1) && s->pitch < b->w)
        return 1;
    if (__builtin_mul_overflow(s->z, s->ysize, &a) ||
        __builtin_add_overflow(a, s->y, &a) ||
        __builtin_mul_overflow(a, s->pitch, &a) ||
        __builtin_add_overflow(a, s->x, &a) ||
        __builtin_add_overflow(a, s->addr, first))
        return -1;
    if (__builtin_mul_overflow(b->d - 1, s->ysize, &z) ||
        __builtin_add_overflow(z, b->h - 1, &z) ||
        __builtin_mul_overflow(z, s->pitch, &z) ||
        __builtin_add_overflow(z, b->w, len) || *first + *len < *first)
        return -1;
    return 0;
}

/* The bytes an array of elem-byte elements (0: no whole-byte elements,
 * counted 1) over width x height x depth (a missing dimension counts 1)
 * holds at most, twice that for a mipmapped array of several levels
 * (they halve, so together they stay under twice the first):
 * what the quota takes before CUDA makes it; UINT64_MAX on overflow. */
static inline uint64_t gvs_remote_array_bound(uint64_t elem, uint64_t width,
                                              uint64_t height, uint64_t depth,
                                              unsigned levels)
{
    uint64_t n = elem ? elem : 1;
    uint64_t dims[] = {width, height, depth, levels > 1 ? 2 : 1};
    for (unsigned i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
        if (__builtin_mul_overflow(n, dims[i] ? dims[i] : 1, &n))
            return UINT64_MAX;
    return n;
}

#endif
