/*
 * MD2 and HMAC-MD2: see md2.h.  Written from the description in RFC 1319
 * section 3, with the checksum step as in the RFC's reference code and its
 * erratum (C[j] is xored with S[c ^ L], not set to it).
 */
#include "md2.h"

#include <string.h>

/* RFC 1319's permutation of 0..255 "constructed from the digits of pi":
 * a Durstenfeld shuffle driven by pi's decimal digits. */
static const uint8_t pi_subst[256] = {
    41, 46, 67, 201, 162, 216, 124, 1, 61, 54, 84, 161, 236, 240, 6, 19,
    98, 167, 5, 243, 192, 199, 115, 140, 152, 147, 43, 217, 188, 76, 130, 202,
    30, 155, 87, 60, 253, 212, 224, 22, 103, 66, 111, 24, 138, 23, 229, 18,
    190, 78, 196, 214, 218, 158, 222, 73, 160, 251, 245, 142, 187, 47, 238, 122,
    169, 104, 121, 145, 21, 178, 7, 63, 148, 194, 16, 137, 11, 34, 95, 33,
    128, 127, 93, 154, 90, 144, 50, 39, 53, 62, 204, 231, 191, 247, 151, 3,
    255, 25, 48, 179, 72, 165, 181, 209, 215, 94, 146, 42, 172, 86, 170, 198,
    79, 184, 56, 210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4, 241,
    69, 157, 112, 89, 100, 113, 135, 32, 134, 91, 207, 101, 230, 45, 168, 2,
    27, 96, 37, 173, 174, 176, 185, 246, 28, 70, 97, 105, 52, 64, 126, 15,
    85, 71, 163, 35, 221, 81, 175, 58, 195, 92, 249, 206, 186, 197, 234, 38,
    44, 83, 13, 110, 133, 40, 132, 9, 211, 223, 205, 244, 65, 129, 77, 82,
    106, 220, 55, 200, 108, 193, 171, 250, 36, 225, 123, 8, 12, 189, 177, 74,
    120, 136, 149, 139, 227, 99, 232, 109, 233, 203, 213, 254, 59, 0, 29, 57,
    242, 239, 183, 14, 102, 88, 208, 228, 166, 119, 114, 248, 235, 117, 75, 10,
    49, 68, 80, 180, 143, 237, 31, 26, 219, 153, 141, 51, 159, 17, 131, 20,
};

/* One 16-byte block through the checksum (RFC 1319 step 2) and the
 * 18-round compression (step 4). */
static void md2_block(struct gvs_md2_ctx *ctx, const uint8_t *m,
                      int update_checksum)
{
    if (update_checksum) {
        uint8_t l = ctx->checksum[15];
        for (int j = 0; j < 16; j++) {
            ctx->checksum[j] ^= pi_subst[m[j] ^ l];
            l = ctx->checksum[j];
        }
    }
    for (int j = 0; j < 16; j++) {
        ctx->x[16 + j] = m[j];
        ctx->x[32 + j] = (uint8_t)(m[j] ^ ctx->x[j]);
    }
    uint8_t t = 0;
    for (int round = 0; round < 18; round++) {
        for (int k = 0; k < 48; k++)
            t = ctx->x[k] ^= pi_subst[t];
        t = (uint8_t)(t + round);
    }
}

void gvs_md2_init(struct gvs_md2_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
}

void gvs_md2_update(struct gvs_md2_ctx *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;
    if (len == 0)
        return;
    if (ctx->buflen > 0) {
        size_t take = GVS_MD2_BLOCK_SIZE - ctx->buflen;
        if (take > len)
            take = len;
        memcpy(ctx->buf + ctx->buflen, p, take);
        ctx->buflen += take;
        p += take;
        len -= take;
        if (ctx->buflen < GVS_MD2_BLOCK_SIZE)
            return;
        md2_block(ctx, ctx->buf, 1);
        ctx->buflen = 0;
    }
    for (; len >= GVS_MD2_BLOCK_SIZE; p += GVS_MD2_BLOCK_SIZE,
                                      len -= GVS_MD2_BLOCK_SIZE)
        md2_block(ctx, p, 1);
    if (len > 0) {
        memcpy(ctx->buf, p, len);
        ctx->buflen = len;
    }
}

void gvs_md2_final(struct gvs_md2_ctx *ctx, uint8_t out[GVS_MD2_DIGEST_SIZE])
{
    /* Step 1: i bytes of value i, 1 <= i <= 16, even on a full block. */
    uint8_t pad = (uint8_t)(GVS_MD2_BLOCK_SIZE - ctx->buflen);
    memset(ctx->buf + ctx->buflen, pad, pad);
    md2_block(ctx, ctx->buf, 1);
    /* Step 3: the checksum is the last block; it does not checksum itself. */
    memcpy(ctx->buf, ctx->checksum, sizeof ctx->buf);
    md2_block(ctx, ctx->buf, 0);
    memcpy(out, ctx->x, GVS_MD2_DIGEST_SIZE);
    memset(ctx, 0, sizeof *ctx);
}

void gvs_md2(const void *data, size_t len, uint8_t out[GVS_MD2_DIGEST_SIZE])
{
    struct gvs_md2_ctx ctx;
    gvs_md2_init(&ctx);
    gvs_md2_update(&ctx, data, len);
    gvs_md2_final(&ctx, out);
}

void gvs_hmac_md2_init(struct gvs_hmac_md2_ctx *ctx, const void *key,
                       size_t keylen)
{
    memset(ctx->key, 0, sizeof ctx->key);
    if (keylen > GVS_MD2_BLOCK_SIZE)
        gvs_md2(key, keylen, ctx->key); /* digest size == block size */
    else if (keylen > 0)
        memcpy(ctx->key, key, keylen);

    uint8_t pad[GVS_MD2_BLOCK_SIZE];
    for (int i = 0; i < GVS_MD2_BLOCK_SIZE; i++)
        pad[i] = ctx->key[i] ^ 0x36;
    gvs_md2_init(&ctx->md2);
    gvs_md2_update(&ctx->md2, pad, sizeof pad);
}

void gvs_hmac_md2_update(struct gvs_hmac_md2_ctx *ctx, const void *data,
                         size_t len)
{
    gvs_md2_update(&ctx->md2, data, len);
}

void gvs_hmac_md2_final(struct gvs_hmac_md2_ctx *ctx,
                        uint8_t out[GVS_MD2_DIGEST_SIZE])
{
    uint8_t pad[GVS_MD2_BLOCK_SIZE], inner[GVS_MD2_DIGEST_SIZE];
    gvs_md2_final(&ctx->md2, inner);
    for (int i = 0; i < GVS_MD2_BLOCK_SIZE; i++)
        pad[i] = ctx->key[i] ^ 0x5c;
    gvs_md2_init(&ctx->md2);
    gvs_md2_update(&ctx->md2, pad, sizeof pad);
    gvs_md2_update(&ctx->md2, inner, sizeof inner);
    gvs_md2_final(&ctx->md2, out);
    memset(ctx->key, 0, sizeof ctx->key);
}

void gvs_hmac_md2(const void *key, size_t keylen, const void *msg,
                  size_t msglen, uint8_t out[GVS_MD2_DIGEST_SIZE])
{
    struct gvs_hmac_md2_ctx ctx;
    gvs_hmac_md2_init(&ctx, key, keylen);
    gvs_hmac_md2_update(&ctx, msg, msglen);
    gvs_hmac_md2_final(&ctx, out);
}
