#include <stdint.h>
#include <stdlib.h>

#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "test.h"

TEST_IMPL(buf_roundtrip)
{
    struct gvs_buf *b = gvs_buf_new(1024);
    ASSERT(b != NULL);
    ASSERT_EQ(gvs_buf_put_u8(b, 0xab), 0);
    ASSERT_EQ(gvs_buf_put_u16(b, 0xbeef), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 0xdeadbeefu), 0);
    ASSERT_EQ(gvs_buf_put_u64(b, 0x0123456789abcdefull), 0);
    ASSERT_EQ(gvs_buf_put_i32(b, INT32_MIN), 0);
    ASSERT_EQ(gvs_buf_put_i32(b, -1), 0);
    ASSERT_EQ(gvs_buf_put_i64(b, INT64_MIN), 0);
    ASSERT_EQ(gvs_buf_put_i64(b, -42), 0);
    ASSERT_EQ(gvs_buf_put_bytes(b, "xyz", 3), 0);
    ASSERT_EQ(gvs_buf_put_blob(b, "hello", 5), 0);
    ASSERT_EQ(gvs_buf_put_blob(b, NULL, 0), 0);
    ASSERT_EQ(gvs_buf_put_str(b, "gvs"), 0);
    ASSERT_EQ(gvs_buf_put_str(b, ""), 0);
    ASSERT_EQ(gvs_buf_len(b), 1 + 2 + 4 + 8 + 4 + 4 + 8 + 8 + 3 + 9 + 4 + 7 + 4);

    /* Little-endian on the wire whatever the host. */
    static const uint8_t head[] = {0xab, 0xef, 0xbe, 0xef, 0xbe, 0xad, 0xde};
    ASSERT_MEM_EQ(gvs_buf_ptr(b), head, sizeof(head));

    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    int64_t i64;
    char raw[3], *s;
    const uint8_t *p;
    size_t len;
    ASSERT_EQ(gvs_buf_get_u8(b, &u8), 0);
    ASSERT_EQ(u8, 0xab);
    ASSERT_EQ(gvs_buf_get_u16(b, &u16), 0);
    ASSERT_EQ(u16, 0xbeef);
    ASSERT_EQ(gvs_buf_get_u32(b, &u32), 0);
    ASSERT_EQ(u32, 0xdeadbeefu);
    ASSERT_EQ(gvs_buf_get_u64(b, &u64), 0);
    ASSERT_U64_EQ(u64, 0x0123456789abcdefull);
    ASSERT_EQ(gvs_buf_get_i32(b, &i32), 0);
    ASSERT_EQ(i32, INT32_MIN);
    ASSERT_EQ(gvs_buf_get_i32(b, &i32), 0);
    ASSERT_EQ(i32, -1);
    ASSERT_EQ(gvs_buf_get_i64(b, &i64), 0);
    ASSERT(i64 == INT64_MIN);
    ASSERT_EQ(gvs_buf_get_i64(b, &i64), 0);
    ASSERT_EQ(i64, -42);
    ASSERT_EQ(gvs_buf_get_bytes(b, raw, 3), 0);
    ASSERT_MEM_EQ(raw, "xyz", 3);
    ASSERT_EQ(gvs_buf_get_blob(b, &p, &len), 0);
    ASSERT_EQ(len, 5);
    ASSERT_MEM_EQ(p, "hello", 5);
    ASSERT_EQ(gvs_buf_get_blob(b, &p, &len), 0);
    ASSERT_EQ(len, 0);
    ASSERT_EQ(gvs_buf_get_str(b, 16, &s), 0);
    ASSERT_STR_EQ(s, "gvs");
    gvs_free(s);
    ASSERT_EQ(gvs_buf_get_str(b, 0, &s), 0);
    ASSERT_STR_EQ(s, "");
    gvs_free(s);
    ASSERT_EQ(gvs_buf_expect_end(b), 0);
    gvs_buf_free(b);
    gvs_buf_free(NULL);
    return 0;
}

/* One field type: how to encode a sample and how to decode it into a
 * poisoned output, checking the output is zeroed after a failure. */
enum field { F_U8, F_U16, F_U32, F_U64, F_I32, F_I64, F_BYTES, F_BLOB, F_STR,
             F_COUNT };

static int encode_field(struct gvs_buf *b, enum field f)
{
    switch (f) {
    case F_U8: return gvs_buf_put_u8(b, 0x5a);
    case F_U16: return gvs_buf_put_u16(b, 0x5a5a);
    case F_U32: return gvs_buf_put_u32(b, 0x5a5a5a5a);
    case F_U64: return gvs_buf_put_u64(b, 0x5a5a5a5a5a5a5a5aull);
    case F_I32: return gvs_buf_put_i32(b, -5);
    case F_I64: return gvs_buf_put_i64(b, -5);
    case F_BYTES: return gvs_buf_put_bytes(b, "abcdefgh", 8);
    case F_BLOB: return gvs_buf_put_blob(b, "abcdefgh", 8);
    case F_STR: return gvs_buf_put_str(b, "abcdefgh");
    default: return GVS_E_INVAL;
    }
}

/* Decodes field f; *zeroed tells whether the output was left zero. */
static int decode_field(struct gvs_buf *b, enum field f, int *zeroed)
{
    union {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        int32_t i32;
        int64_t i64;
        uint8_t raw[8];
    } v;
    const uint8_t *p = (const uint8_t *)"x";
    size_t len = 99;
    char *s = (char *)"x";
    int r;
    memset(&v, 0xa5, sizeof(v));
    switch (f) {
    case F_U8: r = gvs_buf_get_u8(b, &v.u8); *zeroed = v.u8 == 0; break;
    case F_U16: r = gvs_buf_get_u16(b, &v.u16); *zeroed = v.u16 == 0; break;
    case F_U32: r = gvs_buf_get_u32(b, &v.u32); *zeroed = v.u32 == 0; break;
    case F_U64: r = gvs_buf_get_u64(b, &v.u64); *zeroed = v.u64 == 0; break;
    case F_I32: r = gvs_buf_get_i32(b, &v.i32); *zeroed = v.i32 == 0; break;
    case F_I64: r = gvs_buf_get_i64(b, &v.i64); *zeroed = v.i64 == 0; break;
    case F_BYTES:
        r = gvs_buf_get_bytes(b, v.raw, 8);
        *zeroed = v.u64 == 0;
        break;
    case F_BLOB:
        r = gvs_buf_get_blob(b, &p, &len);
        *zeroed = p == NULL && len == 0;
        break;
    case F_STR:
        r = gvs_buf_get_str(b, 64, &s);
        *zeroed = s == NULL;
        if (r == 0)
            gvs_free(s);
        break;
    default:
        r = GVS_E_INVAL;
    }
    return r;
}

TEST_IMPL(buf_truncation)
{
    for (int f = 0; f < F_COUNT; f++) {
        struct gvs_buf *enc = gvs_buf_new(64);
        ASSERT(enc != NULL);
        ASSERT_EQ(encode_field(enc, (enum field)f), 0);
        size_t full = gvs_buf_len(enc);
        for (size_t k = 0; k <= full; k++) {
            struct gvs_buf *v = gvs_buf_view(gvs_buf_ptr(enc), k);
            ASSERT(v != NULL);
            int zeroed;
            int r = decode_field(v, (enum field)f, &zeroed);
            if (k < full) {
                ASSERT_EQ(r, GVS_E_SHORT);
                ASSERT(zeroed);
                ASSERT_EQ(gvs_buf_len(v), k);
            } else {
                ASSERT_EQ(r, 0);
                ASSERT_EQ(gvs_buf_len(v), 0);
            }
            gvs_buf_free(v);
        }
        gvs_buf_free(enc);
    }
    return 0;
}

TEST_IMPL(buf_max)
{
    ASSERT(gvs_buf_new(GVS_BUF_MAX_CEILING + 1) == NULL);
    struct gvs_buf *b = gvs_buf_new(10);
    ASSERT(b != NULL);
    ASSERT_EQ(gvs_buf_max(b), 10);
    ASSERT_EQ(gvs_buf_put_u64(b, 1), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 2), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_len(b), 8);
    ASSERT_EQ(gvs_buf_put_blob(b, "a", 1), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_put_str(b, ""), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_put_bytes(b, "abc", 3), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_len(b), 8);
    ASSERT_EQ(gvs_buf_put_u16(b, 3), 0);
    ASSERT_EQ(gvs_buf_put_u8(b, 4), GVS_E_TOOBIG);
    uint8_t *dst;
    ASSERT_EQ(gvs_buf_reserve(b, SIZE_MAX, &dst), GVS_E_TOOBIG);
    ASSERT(dst == NULL);
    ASSERT_EQ(gvs_buf_len(b), 10);
    /* Reading makes room again: the maximum bounds unread bytes. */
    ASSERT_EQ(gvs_buf_consume(b, 4), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 5), 0);
    ASSERT_EQ(gvs_buf_len(b), 10);
    ASSERT_EQ(gvs_buf_put_blob(b, "x", (size_t)UINT32_MAX + 1), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_len(b), 10);
    gvs_buf_free(b);
    return 0;
}

static int decode_blob_with_len(uint32_t declared, size_t present)
{
    uint8_t enc[4 + 16] = {0};
    for (int i = 0; i < 4; i++)
        enc[i] = (uint8_t)(declared >> (8 * i));
    struct gvs_buf *v = gvs_buf_view(enc, 4 + present);
    const uint8_t *p;
    size_t len;
    int r = v == NULL ? GVS_E_NOMEM : gvs_buf_get_blob(v, &p, &len);
    if (r < 0 && (p != NULL || len != 0 || gvs_buf_len(v) != 4 + present))
        r = 1;
    gvs_buf_free(v);
    return r;
}

TEST_IMPL(buf_blob_lengths)
{
    ASSERT_EQ(decode_blob_with_len(17, 16), GVS_E_SHORT);
    ASSERT_EQ(decode_blob_with_len(16, 16), 0);
    ASSERT_EQ(decode_blob_with_len(UINT32_MAX, 16), GVS_E_SHORT);
    ASSERT_EQ(decode_blob_with_len(UINT32_MAX - 3, 16), GVS_E_SHORT);
    ASSERT_EQ(decode_blob_with_len(0x80000000u, 16), GVS_E_SHORT);

    /* get_str must not allocate from a declared length. */
    uint8_t enc[8] = {0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c', 'd'};
    struct gvs_buf *v = gvs_buf_view(enc, sizeof(enc));
    char *s;
    ASSERT_EQ(gvs_buf_get_str(v, SIZE_MAX, &s), GVS_E_SHORT);
    ASSERT(s == NULL);
    ASSERT_EQ(gvs_buf_len(v), 8);
    ASSERT_EQ(gvs_buf_get_str(v, 100, &s), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_len(v), 8);
    gvs_buf_free(v);
    return 0;
}

TEST_IMPL(buf_str)
{
    struct gvs_buf *b = gvs_buf_new(256);
    char *s = (char *)"x";
    ASSERT_EQ(gvs_buf_put_blob(b, "ab\0cd", 5), 0);
    ASSERT_EQ(gvs_buf_get_str(b, 16, &s), GVS_E_PROTO);
    ASSERT(s == NULL);
    ASSERT_EQ(gvs_buf_len(b), 9);
    gvs_buf_reset(b);
    ASSERT_EQ(gvs_buf_len(b), 0);

    ASSERT_EQ(gvs_buf_put_str(b, "abcdef"), 0);
    ASSERT_EQ(gvs_buf_get_str(b, 5, &s), GVS_E_TOOBIG);
    ASSERT(s == NULL);
    ASSERT_EQ(gvs_buf_len(b), 10);
    ASSERT_EQ(gvs_buf_get_str(b, 6, &s), 0);
    ASSERT_STR_EQ(s, "abcdef");
    gvs_free(s);
    gvs_buf_free(b);
    return 0;
}

TEST_IMPL(buf_expect_end)
{
    struct gvs_buf *b = gvs_buf_new(16);
    ASSERT_EQ(gvs_buf_expect_end(b), 0);
    ASSERT_EQ(gvs_buf_put_u16(b, 1), 0);
    ASSERT_EQ(gvs_buf_expect_end(b), GVS_E_TRAILING);
    uint8_t u8;
    ASSERT_EQ(gvs_buf_get_u8(b, &u8), 0);
    ASSERT_EQ(gvs_buf_expect_end(b), GVS_E_TRAILING);
    ASSERT_EQ(gvs_buf_get_u8(b, &u8), 0);
    ASSERT_EQ(gvs_buf_expect_end(b), 0);
    gvs_buf_free(b);
    return 0;
}

TEST_IMPL(buf_view_readonly)
{
    const uint8_t data[] = {1, 0, 0, 0, 'z', 7};
    struct gvs_buf *v = gvs_buf_view(data, sizeof(data));
    ASSERT(v != NULL);
    uint8_t *dst = (uint8_t *)data;
    ASSERT_EQ(gvs_buf_put_u8(v, 1), GVS_E_INVAL);
    ASSERT_EQ(gvs_buf_put_bytes(v, "a", 1), GVS_E_INVAL);
    ASSERT_EQ(gvs_buf_put_str(v, "a"), GVS_E_INVAL);
    ASSERT_EQ(gvs_buf_reserve(v, 0, &dst), GVS_E_INVAL);
    ASSERT(dst == NULL);
    ASSERT_EQ(gvs_buf_unput(v, 1), GVS_E_INVAL);
    ASSERT_EQ(gvs_buf_len(v), sizeof(data));
    ASSERT(gvs_buf_ptr(v) == data);
    const uint8_t *p;
    size_t len;
    ASSERT_EQ(gvs_buf_get_blob(v, &p, &len), 0);
    ASSERT(p == data + 4);
    ASSERT_EQ(len, 1);
    ASSERT_EQ(gvs_buf_expect_end(v), GVS_E_TRAILING);
    ASSERT_EQ(gvs_buf_consume(v, 2), GVS_E_SHORT);
    ASSERT_EQ(gvs_buf_consume(v, 1), 0);
    ASSERT_EQ(gvs_buf_expect_end(v), 0);
    gvs_buf_free(v);

    v = gvs_buf_view(NULL, 0);
    ASSERT(v != NULL);
    ASSERT_EQ(gvs_buf_len(v), 0);
    gvs_buf_free(v);
    return 0;
}

TEST_IMPL(buf_reserve_unput_consume)
{
    struct gvs_buf *b = gvs_buf_new(1 << 20);
    uint8_t *dst;
    ASSERT(gvs_buf_ptr(b) != NULL);
    ASSERT_EQ(gvs_buf_reserve(b, 0, &dst), 0);
    ASSERT(dst != NULL);
    ASSERT_EQ(gvs_buf_reserve(b, 100, &dst), 0);
    for (int i = 0; i < 100; i++)
        dst[i] = (uint8_t)i;
    ASSERT_EQ(gvs_buf_len(b), 100);
    ASSERT_EQ(gvs_buf_unput(b, 101), GVS_E_SHORT);
    ASSERT_EQ(gvs_buf_unput(b, 40), 0);
    ASSERT_EQ(gvs_buf_len(b), 60);
    ASSERT_EQ(gvs_buf_consume(b, 61), GVS_E_SHORT);
    ASSERT_EQ(gvs_buf_consume(b, 10), 0);
    ASSERT_EQ(gvs_buf_ptr(b)[0], 10);
    ASSERT_EQ(gvs_buf_unput(b, 51), GVS_E_SHORT);

    /* Many append/consume cycles keep content and never exceed max even
     * with a small maximum: consumed bytes are compacted away. */
    struct gvs_buf *small = gvs_buf_new(300);
    uint32_t next_put = 0, next_get = 0;
    for (int round = 0; round < 1000; round++) {
        while (gvs_buf_put_u32(small, next_put) == 0)
            next_put++;
        ASSERT_GE(gvs_buf_len(small), 297);
        for (int i = 0; i < 37; i++) {
            uint32_t v;
            ASSERT_EQ(gvs_buf_get_u32(small, &v), 0);
            ASSERT_EQ(v, next_get);
            next_get++;
        }
    }
    gvs_buf_free(small);

    /* Large growth keeps content. */
    gvs_buf_reset(b);
    for (uint32_t i = 0; i < 200000; i++)
        ASSERT_EQ(gvs_buf_put_u32(b, i), 0);
    for (uint32_t i = 0; i < 200000; i++) {
        uint32_t v;
        ASSERT_EQ(gvs_buf_get_u32(b, &v), 0);
        ASSERT_EQ(v, i);
    }
    gvs_buf_free(b);
    return 0;
}

/* Puts a fixed sequence; every failing put must be NOMEM and append
 * nothing.  Returns the number of failures seen, or -1 on a violation. */
static int put_sequence(struct gvs_buf *b, const uint8_t *big)
{
    int failures = 0;
    for (int step = 0; step < 8; step++) {
        size_t before = gvs_buf_len(b);
        int r;
        switch (step) {
        case 0: r = gvs_buf_put_u8(b, 1); break;
        case 1: r = gvs_buf_put_u32(b, 2); break;
        case 2: r = gvs_buf_put_blob(b, big, 1000); break;
        case 3: r = gvs_buf_put_str(b, "name"); break;
        case 4: r = gvs_buf_put_bytes(b, big, 5000); break;
        case 5: r = gvs_buf_put_u64(b, 3); break;
        case 6: r = gvs_buf_put_blob(b, big, 100000); break;
        default: r = gvs_buf_put_bytes(b, big, 300000); break;
        }
        if (r == 0)
            continue;
        if (r != GVS_E_NOMEM || gvs_buf_len(b) != before)
            return -1;
        failures++;
    }
    return failures;
}

TEST_IMPL(buf_alloc_failure)
{
    uint8_t *big = calloc(1, 300000);
    ASSERT(big != NULL);
    int completed_clean = 0;
    for (long n = 0; n < 64 && !completed_clean; n++) {
        gvs_mem_fail_after(n);
        struct gvs_buf *b = gvs_buf_new(1 << 20);
        if (b == NULL) {
            ASSERT_EQ(n, 0);
            continue;
        }
        int failures = put_sequence(b, big);
        ASSERT_GE(failures, 0);
        completed_clean = failures == 0;
        gvs_mem_fail_after(-1);
        gvs_buf_free(b);
    }
    gvs_mem_fail_after(-1);
    ASSERT(completed_clean);

    char *s;
    struct gvs_buf *b = gvs_buf_new(64);
    ASSERT_EQ(gvs_buf_put_str(b, "abc"), 0);
    gvs_mem_fail_after(0);
    ASSERT_EQ(gvs_buf_get_str(b, 16, &s), GVS_E_NOMEM);
    ASSERT(s == NULL);
    ASSERT_EQ(gvs_buf_len(b), 7);
    ASSERT_EQ(gvs_buf_get_str(b, 16, &s), 0);
    gvs_free(s);
    gvs_buf_free(b);
    free(big);
    return 0;
}
