/*
 * cuda.md2: MD2 on RFC 1319's test suite (appendix A.5) and HMAC-MD2 on
 * the reference values of the driver probe's self-test (pycryptodome's
 * HMAC over its MD2, plugins/cuda/probe/results/.../selftest.txt), each
 * in one piece and fed in uneven pieces.
 */
#include "md2.h"

#include <stdio.h>
#include <string.h>

static int failed;

static void check(const char *what, const uint8_t *got, const char *want_hex)
{
    char hex[2 * GVS_MD2_DIGEST_SIZE + 1];
    for (int i = 0; i < GVS_MD2_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", got[i]);
    if (strcmp(hex, want_hex) != 0) {
        printf("FAIL %s: %s, want %s\n", what, hex, want_hex);
        failed++;
    }
}

/* The message in pieces of 1, 2, ... 37, 1, ... bytes. */
static void md2_pieces(const uint8_t *msg, size_t len, uint8_t out[16])
{
    struct gvs_md2_ctx ctx;
    gvs_md2_init(&ctx);
    for (size_t off = 0, step = 1; off < len; step = step % 37 + 1) {
        size_t n = step < len - off ? step : len - off;
        gvs_md2_update(&ctx, msg + off, n);
        off += n;
    }
    gvs_md2_final(&ctx, out);
}

static void hmac_pieces(const void *key, size_t keylen, const uint8_t *msg,
                        size_t len, uint8_t out[16])
{
    struct gvs_hmac_md2_ctx ctx;
    gvs_hmac_md2_init(&ctx, key, keylen);
    for (size_t off = 0, step = 1; off < len; step = step % 37 + 1) {
        size_t n = step < len - off ? step : len - off;
        gvs_hmac_md2_update(&ctx, msg + off, n);
        off += n;
    }
    gvs_hmac_md2_final(&ctx, out);
}

int main(void)
{
    static const struct {
        const char *msg, *digest;
    } rfc[] = {
        {"", "8350e5a3e24c153df2275c9f80692773"},
        {"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
        {"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
        {"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
        {"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "da33def2a42df13975352846c30338cd"},
        {"1234567890123456789012345678901234567890123456789012345678901234567"
         "8901234567890",
         "d5976f79d83d3a0dc9806c3c66f3efd8"},
    };
    uint8_t d[GVS_MD2_DIGEST_SIZE];
    int checks = 0;
    for (size_t i = 0; i < sizeof rfc / sizeof rfc[0]; i++) {
        const uint8_t *m = (const uint8_t *)rfc[i].msg;
        gvs_md2(m, strlen(rfc[i].msg), d);
        check(rfc[i].msg, d, rfc[i].digest);
        md2_pieces(m, strlen(rfc[i].msg), d);
        check(rfc[i].msg, d, rfc[i].digest);
        checks += 2;
    }

    /* 768 bytes, 0..255 three times: many blocks. */
    static uint8_t big[768];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)i;
    gvs_md2(big, sizeof big, d);
    check("0..255 x3", d, "16f22b92f085399d669f7dd794a9dd6b");
    md2_pieces(big, sizeof big, d);
    check("0..255 x3 in pieces", d, "16f22b92f085399d669f7dd794a9dd6b");
    checks += 2;

    /* The integrity check's key; a 76-byte record, the size of the
     * check's message for one device. */
    static const uint8_t key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9,
                                    0xa7, 0x52, 0xaa, 0x08, 0x41, 0x36,
                                    0x0b, 0xf5, 0x5a, 0x9f};
    static uint8_t rec[76], aa[20], dd[50];
    for (size_t i = 0; i < sizeof rec; i++)
        rec[i] = (uint8_t)i;
    memset(aa, 0xaa, sizeof aa);
    memset(dd, 0xdd, sizeof dd);
    static const char jefe_msg[] = "what do ya want for nothing?";
    static const struct {
        const char *what;
        const void *key;
        size_t keylen;
        const uint8_t *msg;
        size_t len;
        const char *mac;
    } hmac[] = {
        {"integrity key, empty", key, sizeof key, NULL, 0,
         "f66b07aba4a875ea140c2cc013a41c6a"},
        {"integrity key, 0..75", key, sizeof key, rec, sizeof rec,
         "70179cf997c1374ec2d4e2c0c4fd2e23"},
        {"\"Jefe\" (a short key)", "Jefe", 4, (const uint8_t *)jefe_msg,
         sizeof jefe_msg - 1, "292f9d34f9e311846de86c495d7adfa2"},
        {"20 x aa, 50 x dd (a long key)", aa, sizeof aa, dd, sizeof dd,
         "590cad9645dfdd80a10db004f1b0ae0a"},
    };
    for (size_t i = 0; i < sizeof hmac / sizeof hmac[0]; i++) {
        gvs_hmac_md2(hmac[i].key, hmac[i].keylen, hmac[i].msg, hmac[i].len, d);
        check(hmac[i].what, d, hmac[i].mac);
        hmac_pieces(hmac[i].key, hmac[i].keylen, hmac[i].msg, hmac[i].len, d);
        check(hmac[i].what, d, hmac[i].mac);
        checks += 2;
    }

    if (failed)
        return 1;
    printf("md2: %d digests as RFC 1319's and the probe's reference\n", checks);
    return 0;
}
