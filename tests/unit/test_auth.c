/* core/auth.c: token proofs, peer allow-lists, exposed listeners, and
 * the HELLO fields that carry a proof, against hostile input. */
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gvs/auth.h"
#include "gvs/config.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"

#define SECRET "0123456789abcdef"

static void fill(uint8_t *p, size_t len, uint8_t v)
{
    memset(p, v, len);
}

/* The construction of docs/protocol.md, checked against an independent
 * implementation (Python's hmac module gives the same bytes). */
TEST_IMPL(auth_mac_vector)
{
    static const uint8_t want[GVS_AUTH_MAC_LEN] = {
        0xad, 0xcc, 0x9d, 0xee, 0x63, 0xa4, 0x00, 0x16, 0x91, 0x0f, 0xcf,
        0xd1, 0xc5, 0xd0, 0x6c, 0x7f, 0x69, 0xaf, 0xe0, 0x9e, 0x2d, 0x7f,
        0xe4, 0x58, 0xc2, 0x73, 0x1c, 0x47, 0xbf, 0x06, 0x15, 0xe8};
    uint8_t sn[GVS_AUTH_NONCE_LEN], cn[GVS_AUTH_NONCE_LEN];
    uint8_t mac[GVS_AUTH_MAC_LEN], other[GVS_AUTH_MAC_LEN];
    fill(sn, sizeof(sn), 1);
    fill(cn, sizeof(cn), 2);
    ASSERT_EQ(gvs_auth_mac(SECRET, sn, cn, "abc", 3, mac), 0);
    ASSERT_MEM_EQ(mac, want, sizeof(want));

    /* Every input counts. */
    ASSERT_EQ(gvs_auth_mac(SECRET "x", sn, cn, "abc", 3, other), 0);
    ASSERT(memcmp(mac, other, sizeof(mac)) != 0);
    ASSERT_EQ(gvs_auth_mac(SECRET, cn, sn, "abc", 3, other), 0);
    ASSERT(memcmp(mac, other, sizeof(mac)) != 0);
    ASSERT_EQ(gvs_auth_mac(SECRET, sn, cn, "abd", 3, other), 0);
    ASSERT(memcmp(mac, other, sizeof(mac)) != 0);
    ASSERT_EQ(gvs_auth_mac(SECRET, sn, cn, "", 0, other), 0);
    ASSERT(memcmp(mac, other, sizeof(mac)) != 0);
    ASSERT_EQ(gvs_auth_mac("", sn, cn, "abc", 3, other), GVS_E_INVAL);

    /* Nonces are fresh. */
    ASSERT_EQ(gvs_auth_nonce(sn), 0);
    ASSERT_EQ(gvs_auth_nonce(cn), 0);
    ASSERT(memcmp(sn, cn, sizeof(sn)) != 0);
    return 0;
}

TEST_IMPL(auth_find_token)
{
    struct gvs_config cfg;
    char err[128];
    gvs_config_init(&cfg);
    static const char text[] = "token = aaaaaaaaaaaaaaaa name=alice\n"
                               "token = bbbbbbbbbbbbbbbb quota=1M\n"
                               "token = cccccccccccccccc name=carol\n";
    ASSERT_EQ(gvs_config_parse(&cfg, text, strlen(text), err, sizeof(err)),
              0);
    uint8_t sn[GVS_AUTH_NONCE_LEN], cn[GVS_AUTH_NONCE_LEN];
    uint8_t mac[GVS_AUTH_MAC_LEN];
    fill(sn, sizeof(sn), 7);
    fill(cn, sizeof(cn), 9);
    ASSERT_EQ(gvs_auth_mac("bbbbbbbbbbbbbbbb", sn, cn, "t", 1, mac), 0);
    ASSERT_EQ(gvs_auth_find_token(&cfg, sn, cn, "t", 1, mac), 1);
    ASSERT_EQ(gvs_auth_mac("cccccccccccccccc", sn, cn, "t", 1, mac), 0);
    ASSERT_EQ(gvs_auth_find_token(&cfg, sn, cn, "t", 1, mac), 2);
    /* Another transcript, another nonce, a flipped bit: no token. */
    ASSERT_EQ(gvs_auth_find_token(&cfg, sn, cn, "u", 1, mac), GVS_E_DENIED);
    ASSERT_EQ(gvs_auth_find_token(&cfg, cn, sn, "t", 1, mac), GVS_E_DENIED);
    mac[31] ^= 1;
    ASSERT_EQ(gvs_auth_find_token(&cfg, sn, cn, "t", 1, mac), GVS_E_DENIED);
    ASSERT_EQ(gvs_auth_mac("dddddddddddddddd", sn, cn, "t", 1, mac), 0);
    ASSERT_EQ(gvs_auth_find_token(&cfg, sn, cn, "t", 1, mac), GVS_E_DENIED);

    char id[128];
    gvs_auth_token_identity(&cfg, 0, id, sizeof(id));
    ASSERT_STR_EQ(id, "token alice");
    gvs_auth_token_identity(&cfg, 1, id, sizeof(id));
    ASSERT_STR_EQ(id, "token #2");
    gvs_config_free(&cfg);
    return 0;
}

TEST_IMPL(auth_peer_allowed)
{
    struct gvs_config cfg;
    char err[128];
    gvs_config_init(&cfg);
    ASSERT_EQ(gvs_auth_peer_allowed(&cfg, 1000, 1000), 1);
    static const char uids[] = "allow_uid = 5,7\n";
    ASSERT_EQ(gvs_config_parse(&cfg, uids, strlen(uids), err, sizeof(err)), 0);
    ASSERT_EQ(gvs_auth_peer_allowed(&cfg, 7, 1000), 1);
    ASSERT_EQ(gvs_auth_peer_allowed(&cfg, 6, 1000), 0);
    ASSERT_EQ(gvs_auth_peer_allowed(&cfg, 0, 5), 0);
    static const char gids[] = "allow_gid = 44\n";
    ASSERT_EQ(gvs_config_parse(&cfg, gids, strlen(gids), err, sizeof(err)), 0);
    ASSERT_EQ(gvs_auth_peer_allowed(&cfg, 6, 44), 1);
    ASSERT_EQ(gvs_auth_peer_allowed(&cfg, 5, 0), 1);
    ASSERT_EQ(gvs_auth_peer_allowed(&cfg, 6, 45), 0);
    gvs_config_free(&cfg);
    return 0;
}

TEST_IMPL(auth_uri_exposed)
{
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://127.0.0.1:7300"), 0);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://127.9.8.7:7300"), 0);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://[::1]:7300"), 0);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://localhost:7300"), 0);
    ASSERT_EQ(gvs_auth_uri_exposed("unix:///tmp/x.sock"), 0);
    ASSERT_EQ(gvs_auth_uri_exposed("shm:///tmp/x.sock"), 0);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://0.0.0.0:7300"), 1);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://10.1.2.3:7300"), 1);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://[::]:7300"), 1);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://[::ffff:127.0.0.1]:7300"), 0);
    ASSERT_EQ(gvs_auth_uri_exposed("tcp://[::ffff:10.0.0.1]:7300"), 1);
    ASSERT_EQ(gvs_auth_uri_exposed("bogus://x"), GVS_E_URI);
    /* tls:// is held to the same rule where the scheme exists. */
    struct gvs_uri u;
    if (gvs_uri_parse("tls://0.0.0.0:1", &u) == 0) {
        ASSERT_EQ(gvs_auth_uri_exposed("tls://0.0.0.0:7300"), 1);
        ASSERT_EQ(gvs_auth_uri_exposed("tls://127.0.0.1:7300"), 0);
    }
    return 0;
}

TEST_IMPL(auth_group_id)
{
    uint32_t gid = 99;
    ASSERT_EQ(gvs_auth_group_id("0", &gid), 0);
    ASSERT_EQ(gid, 0);
    ASSERT_EQ(gvs_auth_group_id("12345", &gid), 0);
    ASSERT_EQ(gid, 12345);
    struct group *gr = getgrgid(getgid());
    ASSERT(gr != NULL);
    char name[256];
    snprintf(name, sizeof(name), "%s", gr->gr_name);
    ASSERT_EQ(gvs_auth_group_id(name, &gid), 0);
    ASSERT_EQ(gid, getgid());
    ASSERT_EQ(gvs_auth_group_id("no-such-group-gvs-test", &gid),
              GVS_E_CONFIG);
    ASSERT_EQ(gvs_auth_group_id("12x", &gid), GVS_E_CONFIG);
    return 0;
}

static void sample(struct gvs_hello *h)
{
    memset(h, 0, sizeof(*h));
    h->version = GVS_PROTO_VERSION;
    h->pid = 77;
    strcpy(h->program, "prog");
    h->nplugins = 1;
    h->plugins[0].id = 200;
    strcpy(h->plugins[0].name, "echo");
    h->plugins[0].table_hash = 42;
    h->auth = GVS_HELLO_AUTH_HMAC;
    fill(h->client_nonce, sizeof(h->client_nonce), 0xc1);
    fill(h->mac, sizeof(h->mac), 0x3a);
}

/* Every cut of buf must fail short, and the decoded struct stay zero. */
static int cuts_fail(const struct gvs_buf *b, int reply)
{
    for (size_t k = 0; k < gvs_buf_len(b); k++) {
        struct gvs_buf *v = gvs_buf_view(gvs_buf_ptr(b), k);
        struct gvs_hello h;
        struct gvs_hello_reply r;
        int rc = reply ? gvs_hello_reply_decode(v, &r)
                       : gvs_hello_decode(v, &h);
        gvs_buf_free(v);
        ASSERT_EQ(rc, GVS_E_SHORT);
    }
    return 0;
}

TEST_IMPL(proto_hello_auth_fields)
{
    struct gvs_hello h, d;
    struct gvs_buf *b = gvs_buf_new(4096);
    sample(&h);
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    size_t len = gvs_buf_len(b);
    ASSERT_EQ(cuts_fail(b, 0), 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), 0);
    ASSERT(memcmp(&h, &d, sizeof(h)) == 0);

    /* The proof is the last GVS_HELLO_PROOF_LEN bytes; without one the
     * auth field is a single 0. */
    h.auth = GVS_HELLO_AUTH_NONE;
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    ASSERT_EQ(gvs_buf_len(b), len - GVS_HELLO_PROOF_LEN + 1);
    ASSERT_EQ(gvs_buf_ptr(b)[gvs_buf_len(b) - 1], 0);
    ASSERT_EQ(gvs_hello_decode(b, &d), 0);
    ASSERT(memcmp(d.mac, (uint8_t[GVS_AUTH_MAC_LEN]){0}, GVS_AUTH_MAC_LEN) ==
           0);

    /* Unknown kinds, a proof cut short, bytes after it. */
    for (unsigned kind = 2; kind < 256; kind += 51) {
        h.auth = (uint8_t)kind;
        ASSERT_EQ(gvs_hello_encode(&h, b), GVS_E_INVAL);
        ASSERT_EQ(gvs_buf_len(b), 0);
    }
    sample(&h);
    h.auth = GVS_HELLO_AUTH_NONE;
    ASSERT_EQ(gvs_hello_encode(&h, b), 0);
    uint8_t raw[512];
    size_t n = gvs_buf_len(b);
    memcpy(raw, gvs_buf_ptr(b), n);
    gvs_buf_reset(b);
    for (unsigned kind = 2; kind < 256; kind += 17) {
        raw[n - 1] = (uint8_t)kind;
        struct gvs_buf *v = gvs_buf_view(raw, n);
        ASSERT_EQ(gvs_hello_decode(v, &d), GVS_E_PROTO);
        gvs_buf_free(v);
    }
    raw[n - 1] = GVS_HELLO_AUTH_HMAC;
    for (size_t extra = 0; extra < GVS_HELLO_PROOF_LEN - 1; extra += 7) {
        memset(raw + n, 0xee, extra);
        struct gvs_buf *v = gvs_buf_view(raw, n + extra);
        ASSERT_EQ(gvs_hello_decode(v, &d), GVS_E_SHORT);
        gvs_buf_free(v);
    }
    memset(raw + n, 0xee, GVS_HELLO_PROOF_LEN);
    struct gvs_buf *v = gvs_buf_view(raw, n + GVS_HELLO_PROOF_LEN);
    ASSERT_EQ(gvs_hello_decode(v, &d), GVS_E_TRAILING);
    gvs_buf_free(v);
    gvs_buf_free(b);
    return 0;
}

TEST_IMPL(proto_hello_challenge_reply)
{
    struct gvs_hello_reply r = {.status = GVS_HELLO_CHALLENGE,
                                .version = GVS_PROTO_VERSION,
                                .session = 3},
                           d;
    strcpy(r.message, "token required");
    fill(r.nonce, sizeof(r.nonce), 0x5c);
    struct gvs_buf *b = gvs_buf_new(4096);
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    size_t len = gvs_buf_len(b);
    ASSERT_EQ(cuts_fail(b, 1), 0);
    ASSERT_EQ(gvs_hello_reply_decode(b, &d), 0);
    ASSERT(memcmp(&r, &d, sizeof(r)) == 0);

    /* Other statuses carry no nonce: their layout is version 2's. */
    r.status = 0;
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    ASSERT_EQ(gvs_buf_len(b), len - GVS_AUTH_NONCE_LEN);
    ASSERT_EQ(gvs_hello_reply_decode(b, &d), 0);
    ASSERT(memcmp(d.nonce, (uint8_t[GVS_AUTH_NONCE_LEN]){0},
                  GVS_AUTH_NONCE_LEN) == 0);
    r.status = GVS_E_DENIED;
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    ASSERT_EQ(gvs_buf_put_bytes(b, r.nonce, GVS_AUTH_NONCE_LEN), 0);
    ASSERT_EQ(gvs_hello_reply_decode(b, &d), GVS_E_TRAILING);
    gvs_buf_reset(b);

    /* A challenge cut inside its nonce; a status past the challenge. */
    r.status = GVS_HELLO_CHALLENGE;
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    struct gvs_buf *v = gvs_buf_view(gvs_buf_ptr(b), len - 1);
    ASSERT_EQ(gvs_hello_reply_decode(v, &d), GVS_E_SHORT);
    gvs_buf_free(v);
    gvs_buf_reset(b);
    r.status = GVS_HELLO_CHALLENGE + 1;
    ASSERT_EQ(gvs_hello_reply_encode(&r, b), 0);
    ASSERT_EQ(gvs_hello_reply_decode(b, &d), GVS_E_PROTO);
    gvs_buf_free(b);
    return 0;
}
