#include <stdint.h>
#include <string.h>

#include "le.h"
#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* Unread bytes are d[off..size); storage is d[0..alloc). */
struct gvs_buf {
    uint8_t *d;
    size_t off;
    size_t size;
    size_t alloc;
    size_t dirty; /* d[0..dirty) has been written at some time */
    size_t max;
    int readonly; /* a view: d belongs to the caller */
};

#define BUF_MIN_ALLOC 256

/* Returned by gvs_buf_ptr before any storage exists, so callers may pass
 * it to memcpy with a zero length. */
static const uint8_t empty_storage[1];

struct gvs_buf *gvs_buf_new(size_t max)
{
    if (max > GVS_BUF_MAX_CEILING)
        return NULL;
    struct gvs_buf *b = gvs_calloc(1, sizeof(*b));
    if (b != NULL)
        b->max = max;
    return b;
}

struct gvs_buf *gvs_buf_view(const void *data, size_t len)
{
    if (data == NULL && len != 0)
        return NULL;
    struct gvs_buf *b = gvs_calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    /* The cast is safe: readonly makes every writer refuse this buffer. */
    b->d = (uint8_t *)(uintptr_t)data;
    b->size = b->alloc = b->max = len;
    b->readonly = 1;
    return b;
}

void gvs_buf_free(struct gvs_buf *b)
{
    if (b == NULL)
        return;
    if (!b->readonly && b->d != NULL) {
        /* Frames carry user data: do not leave it in freed heap.  Only
         * what was written: storage never touched is not faulted in. */
        explicit_bzero(b->d, b->dirty);
        gvs_free(b->d);
    }
    gvs_free(b);
}

void gvs_buf_reset(struct gvs_buf *b)
{
    if (b->readonly)
        b->off = b->size;
    else
        b->off = b->size = 0;
}

size_t gvs_buf_capacity(const struct gvs_buf *b)
{
    return b->alloc;
}

size_t gvs_buf_len(const struct gvs_buf *b)
{
    return b->size - b->off;
}

size_t gvs_buf_max(const struct gvs_buf *b)
{
    return b->max;
}

const uint8_t *gvs_buf_ptr(const struct gvs_buf *b)
{
    return b->d != NULL ? b->d + b->off : empty_storage;
}

static void compact(struct gvs_buf *b)
{
    if (b->off == 0)
        return;
    memmove(b->d, b->d + b->off, b->size - b->off);
    b->size -= b->off;
    b->off = 0;
}

/* Ensures len more bytes fit after the unread ones, moving them to the
 * front before growing the storage, and growing it geometrically. */
static int make_room(struct gvs_buf *b, size_t len)
{
    size_t used = b->size - b->off;
    if (b->readonly)
        return GVS_E_INVAL;
    if (len > b->max || used > b->max - len)
        return GVS_E_TOOBIG;
    if (b->alloc - b->size >= len)
        return 0;
    if (b->alloc - used >= len) {
        compact(b);
        return 0;
    }
    size_t need = used + len;
    size_t cap = b->alloc < BUF_MIN_ALLOC ? BUF_MIN_ALLOC : b->alloc;
    while (cap < need)
        cap = cap > b->max / 2 ? b->max : cap * 2;
    if (cap > b->max)
        cap = b->max;
    uint8_t *d = gvs_realloc(b->d, cap);
    if (d == NULL)
        return GVS_E_NOMEM;
    b->d = d;
    b->alloc = cap;
    compact(b);
    return 0;
}

int gvs_buf_reserve(struct gvs_buf *b, size_t len, uint8_t **dst)
{
    *dst = NULL;
    int r = make_room(b, len);
    if (r < 0)
        return r;
    *dst = b->d != NULL ? b->d + b->size : (uint8_t *)(uintptr_t)empty_storage;
    b->size += len;
    if (b->size > b->dirty)
        b->dirty = b->size;
    return 0;
}

/* Once everything is read, writing restarts at the front for free. */
static void advance(struct gvs_buf *b, size_t len)
{
    b->off += len;
    if (b->off == b->size && !b->readonly)
        b->off = b->size = 0;
}

int gvs_buf_consume(struct gvs_buf *b, size_t len)
{
    if (len > b->size - b->off)
        return GVS_E_SHORT;
    advance(b, len);
    return 0;
}

int gvs_buf_unput(struct gvs_buf *b, size_t len)
{
    if (b->readonly)
        return GVS_E_INVAL;
    if (len > b->size - b->off)
        return GVS_E_SHORT;
    b->size -= len;
    return 0;
}

static int put_le(struct gvs_buf *b, uint64_t v, size_t n)
{
    uint8_t *p;
    /* Room after the bytes already there: what gvs_buf_reserve finds
     * first (storage never exceeds max; a view has none to spare). */
    if (b->d != NULL && !b->readonly && b->alloc - b->size >= n) {
        p = b->d + b->size;
        b->size += n;
        if (b->size > b->dirty)
            b->dirty = b->size;
    } else {
        int r = gvs_buf_reserve(b, n, &p);
        if (r < 0)
            return r;
    }
    gvs_le_store(p, v, n);
    return 0;
}

int gvs_buf_put_u8(struct gvs_buf *b, uint8_t v) { return put_le(b, v, 1); }
int gvs_buf_put_u16(struct gvs_buf *b, uint16_t v) { return put_le(b, v, 2); }
int gvs_buf_put_u32(struct gvs_buf *b, uint32_t v) { return put_le(b, v, 4); }
int gvs_buf_put_u64(struct gvs_buf *b, uint64_t v) { return put_le(b, v, 8); }

int gvs_buf_put_i32(struct gvs_buf *b, int32_t v)
{
    return put_le(b, (uint32_t)v, 4);
}

int gvs_buf_put_i64(struct gvs_buf *b, int64_t v)
{
    return put_le(b, (uint64_t)v, 8);
}

int gvs_buf_put_bytes(struct gvs_buf *b, const void *p, size_t len)
{
    uint8_t *dst;
    int r = gvs_buf_reserve(b, len, &dst);
    if (r < 0)
        return r;
    if (len != 0)
        memcpy(dst, p, len);
    return 0;
}

int gvs_buf_put_blob(struct gvs_buf *b, const void *p, size_t len)
{
    uint8_t *dst;
    if (len > UINT32_MAX || len > SIZE_MAX - 4)
        return GVS_E_TOOBIG;
    int r = gvs_buf_reserve(b, 4 + len, &dst);
    if (r < 0)
        return r;
    gvs_le_store(dst, len, 4);
    if (len != 0)
        memcpy(dst + 4, p, len);
    return 0;
}

int gvs_buf_put_str(struct gvs_buf *b, const char *s)
{
    return gvs_buf_put_blob(b, s, strlen(s));
}

/* The fields, not gvs_buf_len and gvs_buf_ptr: a library's call of
 * its own exported function is not inlined (it could be interposed). */
static int get_le(struct gvs_buf *b, size_t n, uint64_t *v)
{
    *v = 0;
    if (b->size - b->off < n)
        return GVS_E_SHORT;
    *v = gvs_le_load(b->d + b->off, n);
    advance(b, n);
    return 0;
}

int gvs_buf_get_u8(struct gvs_buf *b, uint8_t *v)
{
    uint64_t x;
    int r = get_le(b, 1, &x);
    *v = (uint8_t)x;
    return r;
}

int gvs_buf_get_u16(struct gvs_buf *b, uint16_t *v)
{
    uint64_t x;
    int r = get_le(b, 2, &x);
    *v = (uint16_t)x;
    return r;
}

int gvs_buf_get_u32(struct gvs_buf *b, uint32_t *v)
{
    uint64_t x;
    int r = get_le(b, 4, &x);
    *v = (uint32_t)x;
    return r;
}

int gvs_buf_get_u64(struct gvs_buf *b, uint64_t *v)
{
    return get_le(b, 8, v);
}

/* Two's complement conversions spelled out: unsigned-to-signed casts of
 * out-of-range values are implementation-defined. */
int gvs_buf_get_i32(struct gvs_buf *b, int32_t *v)
{
    uint64_t x;
    int r = get_le(b, 4, &x);
    *v = x <= INT32_MAX ? (int32_t)x : -(int32_t)(UINT32_MAX - x) - 1;
    return r;
}

int gvs_buf_get_i64(struct gvs_buf *b, int64_t *v)
{
    uint64_t x;
    int r = get_le(b, 8, &x);
    *v = x <= INT64_MAX ? (int64_t)x : -(int64_t)(UINT64_MAX - x) - 1;
    return r;
}

int gvs_buf_get_bytes(struct gvs_buf *b, void *out, size_t len)
{
    if (len != 0)
        memset(out, 0, len);
    if (gvs_buf_len(b) < len)
        return GVS_E_SHORT;
    if (len != 0)
        memcpy(out, gvs_buf_ptr(b), len);
    return gvs_buf_consume(b, len);
}

/* Reads a blob's length and checks the bytes are present, consuming
 * nothing. */
static int peek_blob(const struct gvs_buf *b, const uint8_t **p, size_t *len)
{
    size_t avail = gvs_buf_len(b);
    *p = NULL;
    *len = 0;
    if (avail < 4)
        return GVS_E_SHORT;
    size_t n = (size_t)gvs_le_load(gvs_buf_ptr(b), 4);
    if (avail - 4 < n)
        return GVS_E_SHORT;
    *p = gvs_buf_ptr(b) + 4;
    *len = n;
    return 0;
}

int gvs_buf_get_blob(struct gvs_buf *b, const uint8_t **p, size_t *len)
{
    int r = peek_blob(b, p, len);
    if (r < 0)
        return r;
    advance(b, 4 + *len);
    return 0;
}

int gvs_buf_get_str(struct gvs_buf *b, size_t maxlen, char **out)
{
    const uint8_t *p;
    size_t len;
    *out = NULL;
    if (gvs_buf_len(b) >= 4 && gvs_le_load(gvs_buf_ptr(b), 4) > maxlen)
        return GVS_E_TOOBIG;
    int r = peek_blob(b, &p, &len);
    if (r < 0)
        return r;
    if (len != 0 && memchr(p, '\0', len) != NULL)
        return GVS_E_PROTO;
    char *s = gvs_malloc(len + 1);
    if (s == NULL)
        return GVS_E_NOMEM;
    if (len != 0)
        memcpy(s, p, len);
    s[len] = '\0';
    *out = s;
    advance(b, 4 + len);
    return 0;
}

int gvs_buf_expect_end(const struct gvs_buf *b)
{
    return gvs_buf_len(b) == 0 ? 0 : GVS_E_TRAILING;
}
