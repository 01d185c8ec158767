/*
 * MD2 (RFC 1319) and HMAC-MD2 (RFC 2104 with MD2's 16-byte block).
 *
 * Why MD2 at all: the private INTEGRITY_CHECK export table of NVIDIA's
 * driver answers the CUDA runtime with an HMAC-MD2 over the caller's
 * process and devices, and a frontend that replaces libcuda.so.1 must
 * compute the same digest (integrity.c; shared/driver-api-facts.md,
 * "The integrity check").  Not for anything that needs a secure hash.
 *
 * A self-contained unit: C11 and libc only, no global state, safe to use
 * from any number of threads on separate contexts.
 */
#ifndef GVS_MD2_H
#define GVS_MD2_H

#include <stddef.h>
#include <stdint.h>

#define GVS_MD2_DIGEST_SIZE 16
#define GVS_MD2_BLOCK_SIZE 16

/* Running state of one digest; opaque to callers, copyable by value. */
struct gvs_md2_ctx {
    uint8_t x[48];        /* the RFC's X: digest state */
    uint8_t checksum[16]; /* the RFC's C */
    uint8_t buf[GVS_MD2_BLOCK_SIZE];
    size_t buflen;        /* bytes in buf, < GVS_MD2_BLOCK_SIZE */
};

/* Starts a digest. */
void gvs_md2_init(struct gvs_md2_ctx *ctx);

/* Adds len bytes at data (data may be NULL when len is 0).  Any split of a
 * message into updates gives the same digest. */
void gvs_md2_update(struct gvs_md2_ctx *ctx, const void *data, size_t len);

/* Writes the 16-byte digest to out and leaves ctx wiped (init it again to
 * reuse it). */
void gvs_md2_final(struct gvs_md2_ctx *ctx, uint8_t out[GVS_MD2_DIGEST_SIZE]);

/* MD2 of one buffer. */
void gvs_md2(const void *data, size_t len, uint8_t out[GVS_MD2_DIGEST_SIZE]);

/* Running state of one HMAC-MD2; opaque to callers, copyable by value. */
struct gvs_hmac_md2_ctx {
    struct gvs_md2_ctx md2;          /* the inner digest */
    uint8_t key[GVS_MD2_BLOCK_SIZE]; /* the key, hashed or padded */
};

/* Starts an HMAC-MD2 (RFC 2104, B = 16): a key longer than 16 bytes is
 * first hashed, a shorter one padded with zeros.  key may be NULL when
 * keylen is 0. */
void gvs_hmac_md2_init(struct gvs_hmac_md2_ctx *ctx, const void *key,
                       size_t keylen);

/* Adds len bytes of the message, as gvs_md2_update. */
void gvs_hmac_md2_update(struct gvs_hmac_md2_ctx *ctx, const void *data,
                         size_t len);

/* Writes the 16-byte HMAC to out and leaves ctx wiped. */
void gvs_hmac_md2_final(struct gvs_hmac_md2_ctx *ctx,
                        uint8_t out[GVS_MD2_DIGEST_SIZE]);

/* HMAC-MD2 of one message.  key or msg may be NULL when its length is 0. */
void gvs_hmac_md2(const void *key, size_t keylen, const void *msg,
                  size_t msglen, uint8_t out[GVS_MD2_DIGEST_SIZE]);

#endif
