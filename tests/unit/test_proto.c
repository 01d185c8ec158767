#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_core.h"

TEST_IMPL(proto_hdr)
{
    struct gvs_frame_hdr h = {.len = 0x01020304, .plugin = 7, .op = 0x0102,
                              .flags = GVS_F_REPLY, .lane = 0x0a0b0c0d,
                              .id = 0x1122334455667788ull};
    uint8_t raw[GVS_FRAME_HDR_LEN];
    gvs_frame_hdr_encode(&h, raw);
    static const uint8_t want[GVS_FRAME_HDR_LEN] = {
        'G', 'V', 'S', '1', 4, 3, 2, 1, 7, 0, 2, 1,
        1, 0, 0, 0, 0x0d, 0x0c, 0x0b, 0x0a,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
    ASSERT_EQ(GVS_FRAME_HDR_LEN, 28);
    ASSERT_MEM_EQ(raw, want, sizeof(want));
    struct gvs_frame_hdr d;
    ASSERT_EQ(gvs_frame_hdr_decode(raw, 0x01020304, &d), 0);
    ASSERT_EQ(d.len, h.len);
    ASSERT_EQ(d.plugin, 7);
    ASSERT_EQ(d.op, 0x0102);
    ASSERT_EQ(d.flags, GVS_F_REPLY);
    ASSERT_EQ(d.lane, 0x0a0b0c0d);
    ASSERT_U64_EQ(d.id, h.id);

    ASSERT_EQ(gvs_frame_hdr_decode(raw, 0x01020303, &d), GVS_E_TOOBIG);
    ASSERT_EQ(d.len, 0);
    ASSERT_EQ(d.lane, 0);
    ASSERT_U64_EQ(d.id, 0);

    uint8_t bad[GVS_FRAME_HDR_LEN];
    memcpy(bad, raw, sizeof(bad));
    bad[3] = '2';
    ASSERT_EQ(gvs_frame_hdr_decode(bad, SIZE_MAX, &d), GVS_E_PROTO);
    ASSERT_EQ(d.plugin, 0);
    memcpy(bad, raw, sizeof(bad));
    /* Bit 3 was protocol 4's LATER, gone since 5. */
    for (unsigned bit = 3; bit <= 4; bit++) {
        bad[12] = (uint8_t)(1u << bit);
        ASSERT_EQ(gvs_frame_hdr_decode(bad, SIZE_MAX, &d), GVS_E_PROTO);
    }
    bad[12] = GVS_F_NOTIFY;
    ASSERT_EQ(gvs_frame_hdr_decode(bad, SIZE_MAX, &d), 0);
    ASSERT_EQ(d.flags, GVS_F_NOTIFY);
    bad[12] = 0;
    bad[15] = 0x80;
    ASSERT_EQ(gvs_frame_hdr_decode(bad, SIZE_MAX, &d), GVS_E_PROTO);
    bad[15] = 0;
    bad[12] = GVS_F_REPLY | GVS_F_NOREPLY;
    ASSERT_EQ(gvs_frame_hdr_decode(bad, SIZE_MAX, &d), 0);
    return 0;
}

TEST_IMPL(proto_hash)
{
    ASSERT_U64_EQ(gvs_hash64(GVS_HASH_SEED, "", 0), 0xcbf29ce484222325ull);
    ASSERT_U64_EQ(gvs_hash64(GVS_HASH_SEED, "a", 1), 0xaf63dc4c8601ec8cull);
    ASSERT_U64_EQ(gvs_hash64(GVS_HASH_SEED, "foobar", 6),
                  0x85944171f73967e8ull);
    uint64_t h = gvs_hash64(GVS_HASH_SEED, "foo", 3);
    ASSERT_U64_EQ(gvs_hash64(h, "bar", 3), 0x85944171f73967e8ull);
    return 0;
}

static void sample_hello(struct gvs_hello *h, uint32_t nplugins)
{
    memset(h, 0, sizeof(*h));
    h->version = GVS_PROTO_VERSION;
    h->pid = 4242;
    strcpy(h->program, "/usr/bin/nbody");
    h->nplugins = nplugins;
    for (uint32_t i = 0; i < nplugins && i < GVS_MAX_PLUGINS; i++) {
        h->plugins[i].id = (uint16_t)(i + 1);
        snprintf(h->plugins[i].name, sizeof(h->plugins[i].name), "plugin%u", i);
        h->plugins[i].table_hash = 0x1000 + i;
    }
}

static int is_zero(const void *p, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i] != 0)
            return 0;
    return 1;
}

TEST_IMPL(proto_hello_roundtrip)
{
    struct gvs_hello h, d;
    struct gvs_buf *b = gvs_buf_new(4096);
    sample_hello(&h, 3);
    memset(h.plugins[2].name, 'n', GVS_NAME_MAX);
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), 0);
    ASSERT(memcmp(&h, &d, sizeof(h)) == 0);
    ASSERT_EQ(gvs_buf_len(b), 0);

    sample_hello(&h, 0);
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), 0);
    ASSERT_EQ(d.nplugins, 0);
    ASSERT_STR_EQ(d.program, "/usr/bin/nbody");

    struct gvs_hello_reply r = {.status = GVS_E_MISMATCH, .version = 1,
                                .session = 99};
    strcpy(r.message, "table hash mismatch for cudart");
    struct gvs_hello_reply rd;
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    ASSERT_EQ(gvs_hello_reply_decode(b, &rd), 0);
    ASSERT(memcmp(&r, &rd, sizeof(r)) == 0);

    /* Trailing bytes are a protocol error, and nothing is kept. */
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    ASSERT_EQ(gvs_buf_put_u8(b, 0), 0);
    ASSERT_EQ(gvs_hello_reply_decode(b, &rd), GVS_E_TRAILING);
    ASSERT(is_zero(&rd, sizeof(rd)));
    gvs_buf_reset(b);
    sample_hello(&h, 2);
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    ASSERT_EQ(gvs_buf_put_u8(b, 0), 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), GVS_E_TRAILING);
    ASSERT(is_zero(&d, sizeof(d)));

    /* A positive status other than a challenge is not a gvs code. */
    gvs_buf_reset(b);
    r.status = GVS_HELLO_CHALLENGE + 1;
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    ASSERT_EQ(gvs_hello_reply_decode(b, &rd), GVS_E_PROTO);
    gvs_buf_free(b);
    return 0;
}

TEST_IMPL(proto_hello_truncation)
{
    struct gvs_hello h, d;
    struct gvs_hello_reply r = {.status = 0, .version = 1, .session = 5}, rd;
    strcpy(r.message, "welcome");
    struct gvs_buf *b = gvs_buf_new(4096), *br = gvs_buf_new(4096);
    sample_hello(&h, 4);
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    ASSERT_EQ(gvs_hello_reply_encode(&r, br), 0);
    for (size_t k = 0; k < gvs_buf_len(b); k++) {
        struct gvs_buf *v = gvs_buf_view(gvs_buf_ptr(b), k);
        memset(&d, 0x5a, sizeof(d));
        ASSERT_EQ(gvs_hello_decode(v, &d), GVS_E_SHORT);
        ASSERT(is_zero(&d, sizeof(d)));
        gvs_buf_free(v);
    }
    for (size_t k = 0; k < gvs_buf_len(br); k++) {
        struct gvs_buf *v = gvs_buf_view(gvs_buf_ptr(br), k);
        memset(&rd, 0x5a, sizeof(rd));
        ASSERT_EQ(gvs_hello_reply_decode(v, &rd), GVS_E_SHORT);
        ASSERT(is_zero(&rd, sizeof(rd)));
        gvs_buf_free(v);
    }
    gvs_buf_free(b);
    gvs_buf_free(br);
    return 0;
}

TEST_IMPL(proto_hello_limits)
{
    struct gvs_hello h, d;
    struct gvs_buf *b = gvs_buf_new(8192);
    sample_hello(&h, GVS_MAX_PLUGINS);
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), 0);
    ASSERT_EQ(d.nplugins, GVS_MAX_PLUGINS);

    h.nplugins = GVS_MAX_PLUGINS + 1;
    ASSERT_EQ(gvs_hello_encode(&h, b), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_len(b), 0);

    /* Hand-built: a count past the maximum, with the entries present. */
    ASSERT_EQ(gvs_buf_put_u32(b, 1), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 1), 0);
    ASSERT_EQ(gvs_buf_put_str(b, "p"), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, GVS_MAX_PLUGINS + 1), 0);
    for (int i = 0; i < GVS_MAX_PLUGINS + 1; i++) {
        ASSERT_EQ(gvs_buf_put_u16(b, (uint16_t)(i + 1)), 0);
        ASSERT_EQ(gvs_buf_put_str(b, "x"), 0);
        ASSERT_EQ(gvs_buf_put_u64(b, 0), 0);
    }
    ASSERT_EQ(gvs_hello_decode(b, &d), GVS_E_TOOBIG);
    ASSERT(is_zero(&d, sizeof(d)));

    /* Names: at most GVS_NAME_MAX bytes, no NUL inside. */
    char name[GVS_NAME_MAX + 2];
    memset(name, 'a', sizeof(name));
    gvs_buf_reset(b);
    ASSERT_EQ(gvs_buf_put_u32(b, 1), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 1), 0);
    ASSERT_EQ(gvs_buf_put_blob(b, name, GVS_NAME_MAX + 1), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 0), 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), GVS_E_TOOBIG);
    gvs_buf_reset(b);
    ASSERT_EQ(gvs_buf_put_u32(b, 1), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 1), 0);
    ASSERT_EQ(gvs_buf_put_blob(b, "a\0b", 3), 0);
    ASSERT_EQ(gvs_buf_put_u32(b, 0), 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), GVS_E_PROTO);

    /* An unterminated program name cannot be encoded; nothing appended. */
    gvs_buf_reset(b);
    sample_hello(&h, 1);
    memset(h.program, 'p', sizeof(h.program));
    ASSERT_EQ(gvs_hello_encode(&h, b), GVS_E_INVAL);
    ASSERT_EQ(gvs_buf_len(b), 0);

    /* A full buffer: the encoder takes back what it had appended. */
    struct gvs_buf *small = gvs_buf_new(20);
    sample_hello(&h, 1);
    ASSERT_EQ(gvs_buf_put_u8(small, 9), 0);
    ASSERT_EQ(gvs_hello_encode(&h, small), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_len(small), 1);
    gvs_buf_free(small);
    gvs_buf_free(b);
    return 0;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

TEST_IMPL(proto_hello_bitflips)
{
    struct gvs_hello h, d;
    struct gvs_buf *b = gvs_buf_new(4096);
    sample_hello(&h, 5);
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    size_t len = gvs_buf_len(b);
    uint8_t *copy = malloc(len);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int decoded = 0, failed = 0;
    for (int iter = 0; iter < 5000; iter++) {
        memcpy(copy, gvs_buf_ptr(b), len);
        int flips = 1 + (int)(xorshift(&seed) % 3);
        for (int i = 0; i < flips; i++) {
            uint64_t bit = xorshift(&seed) % (len * 8);
            copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        struct gvs_buf *v = gvs_buf_view(copy, len);
        int r = gvs_hello_decode(v, &d);
        gvs_buf_free(v);
        if (r == 0) {
            ASSERT_LE(d.nplugins, GVS_MAX_PLUGINS);
            ASSERT_EQ(d.program[GVS_NAME_MAX], 0);
            for (uint32_t i = 0; i < d.nplugins; i++)
                ASSERT_EQ(d.plugins[i].name[GVS_NAME_MAX], 0);
            decoded++;
        } else {
            ASSERT_LT(r, 0);
            ASSERT(is_zero(&d, sizeof(d)));
            failed++;
        }
    }
    ASSERT_GT(decoded, 0);
    ASSERT_GT(failed, 0);
    free(copy);
    gvs_buf_free(b);
    return 0;
}

/* A connected unix pair for the frame tests. */
struct pair {
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
};

static int open_pair(struct pair *p, const char *tag)
{
    char uri[160];
    test_unix_uri(uri, sizeof(uri), NULL, 0, tag);
    return test_conn_pair(uri, &p->l, &p->a, &p->b);
}

static void close_pair(struct pair *p)
{
    gvs_conn_close(p->a);
    gvs_conn_close(p->b);
    gvs_listener_close(p->l, 0);
}

TEST_IMPL(proto_frame_roundtrip)
{
    struct pair p;
    ASSERT_EQ(open_pair(&p, "frame"), 0);
    struct gvs_buf *body = gvs_buf_new(1 << 20);
    struct gvs_frame_hdr h = {
        .plugin = 1, .op = 2, .lane = 9, .id = 77, .len = 12345};
    struct iovec iov[3] = {{(void *)"abc", 3}, {NULL, 0}, {(void *)"de", 2}};
    ASSERT_EQ(gvs_frame_sendv(p.a, &h, iov, 3), 0);
    ASSERT_EQ(h.len, 5);
    h = (struct gvs_frame_hdr){.plugin = 0, .op = GVS_CTL_PING, .id = 78,
                               .flags = GVS_F_NOREPLY};
    ASSERT_EQ(gvs_frame_send(p.a, &h, NULL), 0);

    struct gvs_frame_hdr r;
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &r, body), 0);
    ASSERT_EQ(r.len, 5);
    ASSERT_EQ(r.plugin, 1);
    ASSERT_EQ(r.op, 2);
    ASSERT_EQ(r.lane, 9);
    ASSERT_U64_EQ(r.id, 77);
    ASSERT_EQ(gvs_buf_len(body), 5);
    ASSERT_MEM_EQ(gvs_buf_ptr(body), "abcde", 5);
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &r, body), 0);
    ASSERT_EQ(r.len, 0);
    ASSERT_EQ(r.flags, GVS_F_NOREPLY);
    ASSERT_EQ(gvs_buf_len(body), 0);

    /* Many iovecs: more than one sendmsg batch. */
    struct iovec many[300];
    uint8_t bytes[300];
    for (int i = 0; i < 300; i++) {
        bytes[i] = (uint8_t)i;
        many[i].iov_base = &bytes[i];
        many[i].iov_len = 1;
    }
    ASSERT_EQ(gvs_frame_sendv(p.a, &h, many, 300), 0);
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &r, body), 0);
    ASSERT_EQ(gvs_buf_len(body), 300);
    ASSERT_MEM_EQ(gvs_buf_ptr(body), bytes, 300);

    /* A reply to a body, echoing its unread bytes. */
    ASSERT_EQ(gvs_frame_send(p.b, &r, body), 0);
    ASSERT_EQ(gvs_frame_recv(p.a, 300, &h, body), 0);
    ASSERT_MEM_EQ(gvs_buf_ptr(body), bytes, 300);

    ASSERT_EQ(gvs_frame_sendv(p.a, &h, NULL, -1), GVS_E_INVAL);
    gvs_buf_free(body);
    close_pair(&p);
    return 0;
}

/* Several frames in one write: each as if sent alone, in order; counts
 * and lengths out of range refused before anything is sent. */
TEST_IMPL(proto_frames_sendv)
{
    struct pair p;
    ASSERT_EQ(open_pair(&p, "frames"), 0);
    struct gvs_buf *body = gvs_buf_new(1 << 20);
    struct gvs_frame_hdr h[3] = {
        {.plugin = 3, .op = 78, .flags = GVS_F_NOTIFY, .id = 1},
        {.plugin = 3, .op = 78, .flags = GVS_F_NOTIFY, .id = 2, .len = 99},
        {.plugin = 3, .op = 79, .flags = GVS_F_NOTIFY, .id = 3}};
    struct iovec v[3] = {{(void *)"first", 5}, {NULL, 0}, {(void *)"3rd", 3}};
    ASSERT_EQ(gvs_frames_sendv(p.a, h, v, 3), 0);
    ASSERT_EQ(h[0].len, 5);
    ASSERT_EQ(h[1].len, 0);
    const char *want[3] = {"first", "", "3rd"};
    for (int i = 0; i < 3; i++) {
        struct gvs_frame_hdr r;
        ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &r, body), 0);
        ASSERT_U64_EQ(r.id, (uint64_t)i + 1);
        ASSERT_EQ(r.op, i == 2 ? 79 : 78);
        ASSERT_EQ(r.flags, GVS_F_NOTIFY);
        ASSERT_EQ(gvs_buf_len(body), strlen(want[i]));
        ASSERT_MEM_EQ(gvs_buf_ptr(body), want[i], strlen(want[i]));
        ASSERT_EQ(gvs_buf_consume(body, gvs_buf_len(body)), 0);
    }
    struct iovec many[GVS_FRAMES_MAX + 1];
    struct gvs_frame_hdr hs[GVS_FRAMES_MAX + 1];
    memset(many, 0, sizeof(many));
    memset(hs, 0, sizeof(hs));
    ASSERT_EQ(gvs_frames_sendv(p.a, hs, many, 0), GVS_E_INVAL);
    ASSERT_EQ(gvs_frames_sendv(p.a, hs, many, GVS_FRAMES_MAX + 1),
              GVS_E_INVAL);
    ASSERT_EQ(gvs_frames_sendv(p.a, hs, NULL, 1), GVS_E_INVAL);
    many[1] = (struct iovec){(void *)"x", (size_t)UINT32_MAX + 1};
    ASSERT_EQ(gvs_frames_sendv(p.a, hs, many, 2), GVS_E_TOOBIG);
    /* Nothing of the refused calls went out: the next frame is next. */
    ASSERT_EQ(gvs_frames_sendv(p.a, hs, many, 1), 0);
    struct gvs_frame_hdr r;
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &r, body), 0);
    ASSERT_EQ(r.len, 0);
    gvs_buf_free(body);
    close_pair(&p);
    return 0;
}

/* Header and body read apart: a body too big for its buffer, or not
 * wanted, is skipped and the stream stays in step. */
TEST_IMPL(proto_frame_split)
{
    struct pair p;
    struct gvs_frame_hdr h = {.plugin = 3, .op = 4, .lane = 5, .id = 6};
    struct gvs_buf *small = gvs_buf_new(4);
    struct gvs_buf *body = gvs_buf_new(64);
    struct iovec iov = {(void *)"0123456789", 10};
    ASSERT_EQ(open_pair(&p, "split"), 0);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(gvs_frame_sendv(p.a, &h, &iov, 1), 0);

    ASSERT_EQ(gvs_frame_recv_hdr(p.b, 64, &h), 0);
    ASSERT_EQ(h.len, 10);
    ASSERT_EQ(h.lane, 5);
    ASSERT_EQ(gvs_buf_put_u8(small, 1), 0);
    ASSERT_EQ(gvs_frame_recv_body(p.b, h.len, small), GVS_E_TOOBIG);
    ASSERT_EQ(gvs_buf_len(small), 0);
    ASSERT_EQ(gvs_frame_recv_hdr(p.b, 64, &h), 0);
    ASSERT_EQ(gvs_frame_recv_body(p.b, h.len, NULL), 0);
    ASSERT_EQ(gvs_frame_recv_hdr(p.b, 64, &h), 0);
    ASSERT_EQ(gvs_frame_recv_body(p.b, h.len, body), 0);
    ASSERT_MEM_EQ(gvs_buf_ptr(body), "0123456789", 10);

    ASSERT_EQ(gvs_frame_recv_hdr(p.b, 9, &h), GVS_E_TOOBIG);
    ASSERT_EQ(h.len, 0);
    gvs_buf_free(small);
    gvs_buf_free(body);
    close_pair(&p);
    return 0;
}

static int send_raw_header(struct gvs_conn *c, uint32_t magic, uint32_t len)
{
    struct gvs_frame_hdr h = {.len = len, .id = 1};
    uint8_t raw[GVS_FRAME_HDR_LEN];
    gvs_frame_hdr_encode(&h, raw);
    for (int i = 0; i < 4; i++)
        raw[i] = (uint8_t)(magic >> (8 * i));
    return gvs_conn_send(c, raw, sizeof(raw));
}

TEST_IMPL(proto_frame_recv_errors)
{
    struct pair p;
    struct gvs_frame_hdr h;
    struct gvs_buf *body = gvs_buf_new(GVS_BUF_MAX_CEILING);

    /* Closed before any byte. */
    ASSERT_EQ(open_pair(&p, "closed"), 0);
    gvs_conn_close(p.a);
    p.a = NULL;
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &h, body),
              GVS_E_CLOSED);
    close_pair(&p);

    /* Closed mid-header. */
    ASSERT_EQ(open_pair(&p, "midhdr"), 0);
    ASSERT_EQ(gvs_conn_send(p.a, "GVS1\x05", 5), 0);
    gvs_conn_close(p.a);
    p.a = NULL;
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &h, body),
              GVS_E_PROTO);
    close_pair(&p);

    /* Closed mid-body. */
    ASSERT_EQ(open_pair(&p, "midbody"), 0);
    ASSERT_EQ(send_raw_header(p.a, GVS_FRAME_MAGIC, 100), 0);
    ASSERT_EQ(gvs_conn_send(p.a, "0123456789", 10), 0);
    gvs_conn_close(p.a);
    p.a = NULL;
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &h, body),
              GVS_E_PROTO);
    ASSERT_EQ(gvs_buf_len(body), 0);
    ASSERT_EQ(h.len, 0);
    close_pair(&p);

    /* Bad magic. */
    ASSERT_EQ(open_pair(&p, "magic"), 0);
    ASSERT_EQ(send_raw_header(p.a, 0x32535647u, 0), 0);
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &h, body),
              GVS_E_PROTO);
    close_pair(&p);

    /* Oversize: refused from the header alone, the body is not read. */
    ASSERT_EQ(open_pair(&p, "toobig"), 0);
    ASSERT_EQ(gvs_conn_set_timeout(p.b, 2000), 0);
    long before = test_vm_peak_kib();
    ASSERT_EQ(send_raw_header(p.a, GVS_FRAME_MAGIC, 1u << 30), 0);
    ASSERT_EQ(gvs_conn_send(p.a, "next", 4), 0);
    ASSERT_EQ(gvs_frame_recv(p.b, 16u << 20, &h, body), GVS_E_TOOBIG);
    char next[4];
    ASSERT_EQ(gvs_conn_recv(p.b, next, 4), 0);
    ASSERT_MEM_EQ(next, "next", 4);

    /* Within max, but the peer sends little: memory follows the bytes
     * that arrive, not the declared length. */
    ASSERT_EQ(send_raw_header(p.a, GVS_FRAME_MAGIC, 1u << 30), 0);
    ASSERT_EQ(gvs_conn_send(p.a, "0123456789", 10), 0);
    gvs_conn_close(p.a);
    p.a = NULL;
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_BUF_MAX_CEILING, &h, body),
              GVS_E_PROTO);
    long after = test_vm_peak_kib();
    ASSERT_LT(after - before, 64 << 10);
    close_pair(&p);

    /* The body buffer's own maximum also bounds the frame. */
    ASSERT_EQ(open_pair(&p, "bodymax"), 0);
    struct gvs_buf *small = gvs_buf_new(64);
    ASSERT_EQ(send_raw_header(p.a, GVS_FRAME_MAGIC, 65), 0);
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &h, small),
              GVS_E_TOOBIG);
    gvs_buf_free(small);
    close_pair(&p);

    /* A receive timeout before any byte. */
    ASSERT_EQ(open_pair(&p, "timeout"), 0);
    ASSERT_EQ(gvs_conn_set_timeout(p.b, 50), 0);
    ASSERT_EQ(gvs_frame_recv(p.b, GVS_FRAME_MAX_DEFAULT, &h, body),
              GVS_E_TIMEOUT);
    close_pair(&p);
    gvs_buf_free(body);
    return 0;
}
