#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "le.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* Body bytes asked of the connection at first; later reads ask for as
 * much as has already arrived, so memory follows the data, never the
 * declared length. */
#define RECV_PIECE_MIN ((size_t)64 << 10)
/* iovecs gvs_frame_sendv builds on the stack before allocating. */
#define SENDV_STACK 16

void gvs_frame_hdr_encode(const struct gvs_frame_hdr *h,
                          uint8_t out[GVS_FRAME_HDR_LEN])
{
    gvs_le_store(out, GVS_FRAME_MAGIC, 4);
    gvs_le_store(out + 4, h->len, 4);
    gvs_le_store(out + 8, h->plugin, 2);
    gvs_le_store(out + 10, h->op, 2);
    gvs_le_store(out + 12, h->flags, 4);
    gvs_le_store(out + 16, h->lane, 4);
    gvs_le_store(out + 20, h->id, 8);
}

int gvs_frame_hdr_decode(const uint8_t in[GVS_FRAME_HDR_LEN], size_t max,
                         struct gvs_frame_hdr *h)
{
    memset(h, 0, sizeof(*h));
    if (gvs_le_load(in, 4) != GVS_FRAME_MAGIC)
        return GVS_E_PROTO;
    uint32_t flags = (uint32_t)gvs_le_load(in + 12, 4);
    if ((flags & ~(uint32_t)GVS_F_KNOWN) != 0)
        return GVS_E_PROTO;
    uint32_t len = (uint32_t)gvs_le_load(in + 4, 4);
    if (len > max)
        return GVS_E_TOOBIG;
    h->len = len;
    h->plugin = (uint16_t)gvs_le_load(in + 8, 2);
    h->op = (uint16_t)gvs_le_load(in + 10, 2);
    h->flags = flags;
    h->lane = (uint32_t)gvs_le_load(in + 16, 4);
    h->id = gvs_le_load(in + 20, 8);
    return 0;
}

int gvs_frame_sendv(struct gvs_conn *c, struct gvs_frame_hdr *h,
                    const struct iovec *iov, int n)
{
    struct iovec stack[SENDV_STACK], *v = stack;
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    size_t total = 0;
    if (n < 0 || n == INT_MAX || (n > 0 && iov == NULL))
        return GVS_E_INVAL;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len > UINT32_MAX - total)
            return GVS_E_TOOBIG;
        total += iov[i].iov_len;
    }
    if (n + 1 > SENDV_STACK) {
        v = gvs_calloc((size_t)n + 1, sizeof(*v));
        if (v == NULL)
            return GVS_E_NOMEM;
    }
    h->len = (uint32_t)total;
    gvs_frame_hdr_encode(h, hdr);
    v[0].iov_base = hdr;
    v[0].iov_len = sizeof(hdr);
    for (int i = 0; i < n; i++)
        v[i + 1] = iov[i];
    int r = gvs_conn_sendv(c, v, n + 1);
    if (v != stack)
        gvs_free(v);
    return r;
}

int gvs_frames_sendv(struct gvs_conn *c, struct gvs_frame_hdr *hs,
                     const struct iovec *bodies, int n)
{
    uint8_t hdr[GVS_FRAMES_MAX][GVS_FRAME_HDR_LEN];
    struct iovec v[2 * GVS_FRAMES_MAX];
    if (n < 1 || n > GVS_FRAMES_MAX || hs == NULL || bodies == NULL)
        return GVS_E_INVAL;
    for (int i = 0; i < n; i++)
        if (bodies[i].iov_len > UINT32_MAX)
            return GVS_E_TOOBIG;
    for (int i = 0; i < n; i++) {
        hs[i].len = (uint32_t)bodies[i].iov_len;
        gvs_frame_hdr_encode(&hs[i], hdr[i]);
        v[2 * i] = (struct iovec){hdr[i], GVS_FRAME_HDR_LEN};
        v[2 * i + 1] = bodies[i];
    }
    return gvs_conn_sendv(c, v, 2 * n);
}

int gvs_frame_send(struct gvs_conn *c, struct gvs_frame_hdr *h,
                   const struct gvs_buf *body)
{
    struct iovec iov = {0};
    if (body != NULL) {
        iov.iov_base = (void *)(uintptr_t)gvs_buf_ptr(body);
        iov.iov_len = gvs_buf_len(body);
    }
    return gvs_frame_sendv(c, h, &iov, body != NULL ? 1 : 0);
}

/* *got: header bytes that came, also on failure. */
static int recv_header(struct gvs_conn *c, uint8_t hdr[GVS_FRAME_HDR_LEN],
                       size_t *got)
{
    *got = 0;
    while (*got < GVS_FRAME_HDR_LEN) {
        size_t n;
        int r = gvs_conn_recv_some(c, hdr + *got, GVS_FRAME_HDR_LEN - *got,
                                   &n);
        if (r < 0)
            return r == GVS_E_CLOSED && *got > 0 ? GVS_E_PROTO : r;
        *got += n;
    }
    return 0;
}

static int recv_body(struct gvs_conn *c, size_t len, struct gvs_buf *body)
{
    size_t done = 0;
    while (done < len) {
        size_t piece = done > RECV_PIECE_MIN ? done : RECV_PIECE_MIN;
        if (piece > len - done)
            piece = len - done;
        uint8_t *dst;
        size_t got;
        int r = gvs_buf_reserve(body, piece, &dst);
        if (r < 0)
            return r;
        r = gvs_conn_recv_some(c, dst, piece, &got);
        gvs_buf_unput(body, piece - got);
        if (r < 0)
            return r == GVS_E_CLOSED ? GVS_E_PROTO : r;
        done += got;
    }
    return 0;
}

int gvs_frame_recv_hdr_why(struct gvs_conn *c, size_t max,
                           struct gvs_frame_hdr *h, char *why, size_t len)
{
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    size_t got;
    memset(h, 0, sizeof(*h));
    if (len > 0)
        why[0] = '\0';
    int r = recv_header(c, hdr, &got);
    if (r == 0)
        r = gvs_frame_hdr_decode(hdr, max, h);
    if (r == 0 || len == 0)
        return r;
    if (got < GVS_FRAME_HDR_LEN) {
        if (r == GVS_E_PROTO)
            snprintf(why, len, "stream ended %zu bytes into a %d-byte header",
                     got, GVS_FRAME_HDR_LEN);
    } else if (gvs_le_load(hdr, 4) != GVS_FRAME_MAGIC) {
        snprintf(why, len, "bad magic 0x%08llx",
                 (unsigned long long)gvs_le_load(hdr, 4));
    } else if (r == GVS_E_TOOBIG) {
        snprintf(why, len, "length %llu exceeds the maximum %zu",
                 (unsigned long long)gvs_le_load(hdr + 4, 4), max);
    } else {
        snprintf(why, len, "unknown flags 0x%llx",
                 (unsigned long long)(gvs_le_load(hdr + 12, 4) &
                                      ~(uint64_t)GVS_F_KNOWN));
    }
    return r;
}

int gvs_frame_recv_hdr(struct gvs_conn *c, size_t max,
                       struct gvs_frame_hdr *h)
{
    return gvs_frame_recv_hdr_why(c, max, h, NULL, 0);
}

/* Reads and drops len bytes. */
static int skip_body(struct gvs_conn *c, size_t len)
{
    uint8_t sink[4096];
    while (len > 0) {
        size_t got;
        int r = gvs_conn_recv_some(c, sink, len < sizeof(sink) ? len
                                                               : sizeof(sink),
                                   &got);
        if (r < 0)
            return r == GVS_E_CLOSED ? GVS_E_PROTO : r;
        len -= got;
    }
    return 0;
}

int gvs_frame_recv_body(struct gvs_conn *c, size_t len, struct gvs_buf *body)
{
    if (body != NULL)
        gvs_buf_reset(body);
    if (body == NULL || len > gvs_buf_max(body)) {
        int r = skip_body(c, len);
        return r < 0 ? r : body == NULL ? 0 : GVS_E_TOOBIG;
    }
    int r = recv_body(c, len, body);
    if (r < 0)
        gvs_buf_reset(body);
    return r;
}

int gvs_frame_recv(struct gvs_conn *c, size_t max, struct gvs_frame_hdr *h,
                   struct gvs_buf *body)
{
    struct gvs_frame_hdr tmp;
    memset(h, 0, sizeof(*h));
    gvs_buf_reset(body);
    if (max > gvs_buf_max(body))
        max = gvs_buf_max(body);
    int r = gvs_frame_recv_hdr(c, max, &tmp);
    if (r == 0)
        r = recv_body(c, tmp.len, body);
    if (r < 0) {
        gvs_buf_reset(body);
        return r;
    }
    *h = tmp;
    return 0;
}

/* Copies a length-prefixed name of at most GVS_NAME_MAX bytes without a
 * NUL into out, NUL-terminated. */
static int get_name(struct gvs_buf *in, char out[GVS_NAME_MAX + 1])
{
    const uint8_t *p;
    size_t len;
    memset(out, 0, GVS_NAME_MAX + 1);
    int r = gvs_buf_get_blob(in, &p, &len);
    if (r < 0)
        return r;
    if (len > GVS_NAME_MAX)
        return GVS_E_TOOBIG;
    if (len != 0 && memchr(p, '\0', len) != NULL)
        return GVS_E_PROTO;
    if (len != 0)
        memcpy(out, p, len);
    return 0;
}

static int put_name(struct gvs_buf *out, const char name[GVS_NAME_MAX + 1])
{
    size_t len = strnlen(name, GVS_NAME_MAX + 1);
    if (len > GVS_NAME_MAX)
        return GVS_E_INVAL;
    return gvs_buf_put_blob(out, name, len);
}

/* An encoder appends all or nothing: on failure it takes back what it
 * had appended. */
static int encode_end(struct gvs_buf *out, size_t before, int r)
{
    if (r < 0)
        gvs_buf_unput(out, gvs_buf_len(out) - before);
    return r;
}

/* The auth field, last so that the transcript a proof covers is the
 * body before it. */
static int put_auth(struct gvs_buf *out, const struct gvs_hello *h)
{
    if (h->auth != GVS_HELLO_AUTH_NONE && h->auth != GVS_HELLO_AUTH_HMAC)
        return GVS_E_INVAL;
    int r = gvs_buf_put_u8(out, h->auth);
    if (r == 0 && h->auth == GVS_HELLO_AUTH_HMAC)
        r = gvs_buf_put_bytes(out, h->client_nonce, GVS_AUTH_NONCE_LEN);
    if (r == 0 && h->auth == GVS_HELLO_AUTH_HMAC)
        r = gvs_buf_put_bytes(out, h->mac, GVS_AUTH_MAC_LEN);
    return r;
}

static int get_auth(struct gvs_buf *in, struct gvs_hello *h)
{
    int r = gvs_buf_get_u8(in, &h->auth);
    if (r == 0 && h->auth != GVS_HELLO_AUTH_NONE &&
        h->auth != GVS_HELLO_AUTH_HMAC)
        r = GVS_E_PROTO;
    if (r == 0 && h->auth == GVS_HELLO_AUTH_HMAC)
        r = gvs_buf_get_bytes(in, h->client_nonce, GVS_AUTH_NONCE_LEN);
    if (r == 0 && h->auth == GVS_HELLO_AUTH_HMAC)
        r = gvs_buf_get_bytes(in, h->mac, GVS_AUTH_MAC_LEN);
    return r;
}

int gvs_hello_encode(const struct gvs_hello *h, struct gvs_buf *out)
{
    size_t before = gvs_buf_len(out);
    if (h->nplugins > GVS_MAX_PLUGINS)
        return GVS_E_TOOBIG;
    int r = gvs_buf_put_u32(out, h->version);
    if (r == 0)
        r = gvs_buf_put_u32(out, h->pid);
    if (r == 0)
        r = put_name(out, h->program);
    if (r == 0)
        r = gvs_buf_put_u32(out, h->nplugins);
    for (uint32_t i = 0; r == 0 && i < h->nplugins; i++) {
        r = gvs_buf_put_u16(out, h->plugins[i].id);
        if (r == 0)
            r = put_name(out, h->plugins[i].name);
        if (r == 0)
            r = gvs_buf_put_u64(out, h->plugins[i].table_hash);
    }
    if (r == 0)
        r = put_auth(out, h);
    return encode_end(out, before, r);
}

static int hello_decode(struct gvs_buf *in, struct gvs_hello *h)
{
    int r = gvs_buf_get_u32(in, &h->version);
    if (r == 0)
        r = gvs_buf_get_u32(in, &h->pid);
    if (r == 0)
        r = get_name(in, h->program);
    if (r == 0)
        r = gvs_buf_get_u32(in, &h->nplugins);
    if (r == 0 && h->nplugins > GVS_MAX_PLUGINS)
        r = GVS_E_TOOBIG;
    for (uint32_t i = 0; r == 0 && i < h->nplugins; i++) {
        r = gvs_buf_get_u16(in, &h->plugins[i].id);
        if (r == 0)
            r = get_name(in, h->plugins[i].name);
        if (r == 0)
            r = gvs_buf_get_u64(in, &h->plugins[i].table_hash);
    }
    if (r == 0)
        r = get_auth(in, h);
    return r == 0 ? gvs_buf_expect_end(in) : r;
}

int gvs_hello_decode(struct gvs_buf *in, struct gvs_hello *h)
{
    memset(h, 0, sizeof(*h));
    int r = hello_decode(in, h);
    if (r < 0)
        memset(h, 0, sizeof(*h));
    return r;
}

int gvs_hello_reply_encode(const struct gvs_hello_reply *rp,
                           struct gvs_buf *out)
{
    size_t before = gvs_buf_len(out);
    int r = gvs_buf_put_i32(out, rp->status);
    if (r == 0)
        r = gvs_buf_put_u32(out, rp->version);
    if (r == 0)
        r = put_name(out, rp->message);
    if (r == 0)
        r = gvs_buf_put_u32(out, rp->session);
    if (r == 0 && rp->status == GVS_HELLO_CHALLENGE)
        r = gvs_buf_put_bytes(out, rp->nonce, GVS_AUTH_NONCE_LEN);
    return encode_end(out, before, r);
}

static int hello_reply_decode(struct gvs_buf *in, struct gvs_hello_reply *rp)
{
    int r = gvs_buf_get_i32(in, &rp->status);
    /* A status is 0, a challenge or a GVS_E_* code. */
    if (r == 0 && rp->status > GVS_HELLO_CHALLENGE)
        r = GVS_E_PROTO;
    if (r == 0)
        r = gvs_buf_get_u32(in, &rp->version);
    if (r == 0)
        r = get_name(in, rp->message);
    if (r == 0)
        r = gvs_buf_get_u32(in, &rp->session);
    if (r == 0 && rp->status == GVS_HELLO_CHALLENGE)
        r = gvs_buf_get_bytes(in, rp->nonce, GVS_AUTH_NONCE_LEN);
    return r == 0 ? gvs_buf_expect_end(in) : r;
}

int gvs_hello_reply_decode(struct gvs_buf *in, struct gvs_hello_reply *rp)
{
    memset(rp, 0, sizeof(*rp));
    int r = hello_reply_decode(in, rp);
    if (r < 0)
        memset(rp, 0, sizeof(*rp));
    return r;
}

uint64_t gvs_hash64(uint64_t seed, const void *p, size_t len)
{
    const uint8_t *s = p;
    uint64_t h = seed;
    for (size_t i = 0; i < len; i++) {
        h ^= s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
