/*
 * Bounded wire buffer.  All encoding and decoding in gvs goes through it.
 *
 * A buffer holds the bytes between a read offset and a write offset and
 * never grows past the maximum given at creation.  Integers are encoded
 * little-endian, fixed width.  Variable-length fields ("blob", "str") are a
 * u32 length followed by that many bytes.
 *
 * Contracts shared by every function below:
 *  - returns 0 or a negative GVS_E_* code;
 *  - a getter zeroes its outputs first and consumes nothing on failure;
 *  - a putter appends nothing on failure;
 *  - GVS_E_SHORT: fewer bytes left than the field needs;
 *    GVS_E_TOOBIG: writing would pass the buffer's maximum;
 *    GVS_E_NOMEM: the allocation failed.
 */
#ifndef GVS_BUF_H
#define GVS_BUF_H

#include <stddef.h>
#include <stdint.h>

struct gvs_buf;

/* Hard ceiling for any buffer: a request or reply frame body. */
#define GVS_BUF_MAX_CEILING ((size_t)1 << 30)

/* New empty writable buffer of at most max bytes (max <= ceiling).
 * Memory is allocated on demand.  NULL on allocation failure or bad max.
 * Free with gvs_buf_free. */
struct gvs_buf *gvs_buf_new(size_t max);

/* Read-only buffer viewing len bytes at data, without copying: data must
 * outlive the buffer.  Putters on it fail with GVS_E_INVAL. */
struct gvs_buf *gvs_buf_view(const void *data, size_t len);

/* Frees the buffer and its storage (zeroed first).  NULL is a no-op. */
void gvs_buf_free(struct gvs_buf *b);

/* Empties the buffer (keeps storage and maximum). */
void gvs_buf_reset(struct gvs_buf *b);

size_t gvs_buf_len(const struct gvs_buf *b);   /* unread bytes */
size_t gvs_buf_max(const struct gvs_buf *b);
/* Bytes of storage held now, for owners that pool buffers and give each
 * message one that already fits. */
size_t gvs_buf_capacity(const struct gvs_buf *b);
const uint8_t *gvs_buf_ptr(const struct gvs_buf *b); /* first unread byte */

/* Makes room for len bytes at the end and returns where they go in *dst;
 * the bytes count as written.  The pointer is valid until the next call
 * that may reallocate (any put/reserve). */
int gvs_buf_reserve(struct gvs_buf *b, size_t len, uint8_t **dst);

/* Drops len unread bytes from the front (GVS_E_SHORT if fewer). */
int gvs_buf_consume(struct gvs_buf *b, size_t len);

/* Drops len bytes from the end (undoes a reserve). */
int gvs_buf_unput(struct gvs_buf *b, size_t len);

int gvs_buf_put_u8(struct gvs_buf *b, uint8_t v);
int gvs_buf_put_u16(struct gvs_buf *b, uint16_t v);
int gvs_buf_put_u32(struct gvs_buf *b, uint32_t v);
int gvs_buf_put_u64(struct gvs_buf *b, uint64_t v);
int gvs_buf_put_i32(struct gvs_buf *b, int32_t v);
int gvs_buf_put_i64(struct gvs_buf *b, int64_t v);
/* len raw bytes, no length prefix. */
int gvs_buf_put_bytes(struct gvs_buf *b, const void *p, size_t len);
/* u32 length + bytes; len must fit in u32. */
int gvs_buf_put_blob(struct gvs_buf *b, const void *p, size_t len);
/* u32 length + the string's bytes (no NUL). */
int gvs_buf_put_str(struct gvs_buf *b, const char *s);

int gvs_buf_get_u8(struct gvs_buf *b, uint8_t *v);
int gvs_buf_get_u16(struct gvs_buf *b, uint16_t *v);
int gvs_buf_get_u32(struct gvs_buf *b, uint32_t *v);
int gvs_buf_get_u64(struct gvs_buf *b, uint64_t *v);
int gvs_buf_get_i32(struct gvs_buf *b, int32_t *v);
int gvs_buf_get_i64(struct gvs_buf *b, int64_t *v);
/* Exactly len raw bytes into out. */
int gvs_buf_get_bytes(struct gvs_buf *b, void *out, size_t len);
/* A blob, returned as a pointer into the buffer (valid while b is alive
 * and unmodified) and its length. */
int gvs_buf_get_blob(struct gvs_buf *b, const uint8_t **p, size_t *len);
/* A str, copied into a new NUL-terminated string the caller frees with
 * gvs_free.  Fails with GVS_E_PROTO on an embedded NUL and GVS_E_TOOBIG
 * when longer than maxlen. */
int gvs_buf_get_str(struct gvs_buf *b, size_t maxlen, char **out);

/* GVS_E_TRAILING when unread bytes remain; a decoder ends with it. */
int gvs_buf_expect_end(const struct gvs_buf *b);

#endif
