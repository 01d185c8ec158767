/*
 * fuzz_buf: the bounded buffer (core/buf.c, include/gvs/buf.h) every
 * encoder and decoder goes through, driven by sequences of operations
 * the input spells, against a model of what it must hold.
 *
 * Input: byte 0 picks the buffer: a writable one of a maximum from a
 * small table, or a read-only view of the input's next bytes.  Then
 * each operation is one byte (which) and its arguments (values,
 * lengths, bytes) taken from the input that follows.
 *
 * Checked after every operation, against the model (the unread bytes it
 * must hold): the unread length and bytes, the maximum never passed
 * (storage included); a putter appends all or nothing and fails only as
 * the contract says (GVS_E_TOOBIG past the maximum, GVS_E_INVAL on a
 * view); a getter returns the model's bytes, or fails consuming nothing
 * with its outputs zeroed; strings and blobs are decoded as the model
 * decodes them; expect_end holds exactly when nothing is left.
 */
#include <stdlib.h>
#include <string.h>

#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/mem.h"

#define MODEL_MAX 65536u

static const size_t maxima[8] = {0, 1, 3, 8, 255, 256, 4096, MODEL_MAX};

static uint8_t model[MODEL_MAX];
static size_t mlen;

/* The input still to be consumed by the operations. */
struct in {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct in *in, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && in->n > 0; i++, in->p++, in->n--)
        v |= (uint64_t)in->p[0] << (8 * i);
    return v;
}

/* Up to len bytes of the input, the rest zeros, into out. */
static void take_bytes(struct in *in, uint8_t *out, size_t len)
{
    size_t n = len < in->n ? len : in->n;
    memcpy(out, in->p, n);
    memset(out + n, 0, len - n);
    in->p += n;
    in->n -= n;
}

static void check(const struct gvs_buf *b, int view)
{
    if (gvs_buf_len(b) != mlen ||
        (mlen > 0 && memcmp(gvs_buf_ptr(b), model, mlen) != 0))
        abort();
    if (!view && (mlen > gvs_buf_max(b) || gvs_buf_capacity(b) > gvs_buf_max(b)))
        abort();
}

static void model_put(const uint8_t *p, size_t len)
{
    memcpy(model + mlen, p, len);
    mlen += len;
}

static void model_drop_front(size_t len)
{
    memmove(model, model + len, mlen - len);
    mlen -= len;
}

static uint64_t model_le(size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)model[i] << (8 * i);
    return v;
}

/* The result a put of len bytes must have. */
static int put_expect(const struct gvs_buf *b, int view, size_t len)
{
    if (view)
        return GVS_E_INVAL;
    return len > gvs_buf_max(b) - mlen ? GVS_E_TOOBIG : 0;
}

static void put_le(struct gvs_buf *b, int view, struct in *in, int which)
{
    static const size_t width[6] = {1, 2, 4, 8, 4, 8};
    size_t n = width[which];
    uint64_t v = take(in, n);
    int want = put_expect(b, view, n), r = 0;
    switch (which) {
    case 0: r = gvs_buf_put_u8(b, (uint8_t)v); break;
    case 1: r = gvs_buf_put_u16(b, (uint16_t)v); break;
    case 2: r = gvs_buf_put_u32(b, (uint32_t)v); break;
    case 3: r = gvs_buf_put_u64(b, v); break;
    case 4: r = gvs_buf_put_i32(b, (int32_t)(uint32_t)v); break;
    case 5: r = gvs_buf_put_i64(b, (int64_t)v); break;
    }
    if (r != want)
        abort();
    if (r == 0) {
        uint8_t le[8];
        for (size_t i = 0; i < n; i++)
            le[i] = (uint8_t)(v >> (8 * i));
        model_put(le, n);
    }
}

static void get_le(struct gvs_buf *b, int which)
{
    static const size_t width[6] = {1, 2, 4, 8, 4, 8};
    size_t n = width[which];
    uint64_t v = 0;
    int r = 0;
    switch (which) {
    case 0: { uint8_t x; r = gvs_buf_get_u8(b, &x); v = x; break; }
    case 1: { uint16_t x; r = gvs_buf_get_u16(b, &x); v = x; break; }
    case 2: { uint32_t x; r = gvs_buf_get_u32(b, &x); v = x; break; }
    case 3: r = gvs_buf_get_u64(b, &v); break;
    case 4: { int32_t x; r = gvs_buf_get_i32(b, &x); v = (uint32_t)x; break; }
    case 5: { int64_t x; r = gvs_buf_get_i64(b, &x); v = (uint64_t)x; break; }
    }
    if (mlen < n) {
        if (r != GVS_E_SHORT || v != 0)
            abort();
        return;
    }
    if (r != 0 || v != model_le(n))
        abort();
    model_drop_front(n);
}

static void put_bytes(struct gvs_buf *b, int view, struct in *in, int blob)
{
    static uint8_t tmp[MODEL_MAX];
    size_t len = (size_t)take(in, 2) % (MODEL_MAX + 1);
    take_bytes(in, tmp, len);
    int want = put_expect(b, view, len + (blob ? 4 : 0));
    int r = blob ? gvs_buf_put_blob(b, tmp, len) : gvs_buf_put_bytes(b, tmp, len);
    if (r != want)
        abort();
    if (r == 0 && blob) {
        uint8_t le[4] = {(uint8_t)len, (uint8_t)(len >> 8), 0, 0};
        model_put(le, 4);
    }
    if (r == 0)
        model_put(tmp, len);
}

static void get_bytes(struct gvs_buf *b, struct in *in)
{
    static uint8_t tmp[MODEL_MAX + 1];
    size_t len = (size_t)take(in, 2) % (MODEL_MAX + 1);
    memset(tmp, 0xa5, len);
    int r = gvs_buf_get_bytes(b, tmp, len);
    if (mlen < len) {
        for (size_t i = 0; i < len; i++)
            if (tmp[i] != 0)
                abort();
        if (r != GVS_E_SHORT)
            abort();
        return;
    }
    if (r != 0 || (len > 0 && memcmp(tmp, model, len) != 0))
        abort();
    model_drop_front(len);
}

static void get_blob(struct gvs_buf *b)
{
    const uint8_t *p;
    size_t len;
    int r = gvs_buf_get_blob(b, &p, &len);
    size_t n = mlen >= 4 ? (size_t)model_le(4) : 0;
    if (mlen < 4 || mlen - 4 < n) {
        if (r != GVS_E_SHORT || p != NULL || len != 0)
            abort();
        return;
    }
    if (r != 0 || len != n || (n > 0 && memcmp(p, model + 4, n) != 0))
        abort();
    model_drop_front(4 + n);
}

static void get_str(struct gvs_buf *b, struct in *in)
{
    size_t maxlen = (size_t)take(in, 2);
    char *s;
    int r = gvs_buf_get_str(b, maxlen, &s);
    size_t n = mlen >= 4 ? (size_t)model_le(4) : 0;
    int want = mlen >= 4 && n > maxlen    ? GVS_E_TOOBIG
               : mlen < 4 || mlen - 4 < n ? GVS_E_SHORT
               : n > 0 && memchr(model + 4, 0, n) != NULL ? GVS_E_PROTO
                                                         : 0;
    if (r != want || (r == 0) != (s != NULL))
        abort();
    if (r == 0) {
        if (strlen(s) != n || memcmp(s, model + 4, n) != 0)
            abort();
        gvs_free(s);
        model_drop_front(4 + n);
    }
}

static void reserve(struct gvs_buf *b, int view, struct in *in)
{
    size_t len = (size_t)take(in, 2) % (MODEL_MAX + 1);
    uint8_t *dst;
    int want = put_expect(b, view, len);
    int r = gvs_buf_reserve(b, len, &dst);
    if (r != want || (r == 0) != (dst != NULL))
        abort();
    if (r == 0) {
        take_bytes(in, dst, len);
        model_put(dst, len);
    }
}

static void consume_or_unput(struct gvs_buf *b, int view, struct in *in,
                             int unput)
{
    size_t len = (size_t)take(in, 2) % (MODEL_MAX + 1);
    int r = unput ? gvs_buf_unput(b, len) : gvs_buf_consume(b, len);
    int want = unput && view ? GVS_E_INVAL : len > mlen ? GVS_E_SHORT : 0;
    if (r != want)
        abort();
    if (r == 0 && unput)
        mlen -= len;
    else if (r == 0)
        model_drop_front(len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct in in = {data + 1, size - 1};
    int view = data[0] & 1;
    struct gvs_buf *b;
    mlen = 0;
    if (view) {
        size_t len = (size_t)take(&in, 2) % (MODEL_MAX + 1);
        if (len > in.n)
            len = in.n;
        b = gvs_buf_view(in.p, len);
        model_put(in.p, len);
        in.p += len;
        in.n -= len;
    } else {
        b = gvs_buf_new(maxima[(data[0] >> 1) & 7]);
    }
    if (b == NULL)
        abort();
    check(b, view);
    while (in.n > 0) {
        uint8_t op = (uint8_t)take(&in, 1) % 23;
        if (op < 6)
            put_le(b, view, &in, op);
        else if (op < 12)
            get_le(b, op - 6);
        else if (op == 12 || op == 13)
            put_bytes(b, view, &in, op == 13);
        else if (op == 14)
            get_bytes(b, &in);
        else if (op == 15)
            get_blob(b);
        else if (op == 16)
            get_str(b, &in);
        else if (op == 17)
            reserve(b, view, &in);
        else if (op == 18 || op == 19)
            consume_or_unput(b, view, &in, op == 19);
        else if (op == 20) {
            gvs_buf_reset(b);
            mlen = 0;
        } else if (op == 21) {
            if (gvs_buf_expect_end(b) != (mlen > 0 ? GVS_E_TRAILING : 0))
                abort();
        } else {
            int want = put_expect(b, view, 7);
            if (gvs_buf_put_str(b, "gvs") != want)
                abort();
            if (want == 0)
                model_put((const uint8_t *)"\3\0\0\0gvs", 7);
        }
        check(b, view);
    }
    gvs_buf_free(b);
    return 0;
}
