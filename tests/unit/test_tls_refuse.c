/*
 * tls:// refusing: a server not signed by the client's CA or not named
 * as the client asked, a client without a CA, a client without an
 * accepted certificate where gvsd asks for one, the wrong protocol on
 * either side, and handshakes that never finish.  Each ends in an
 * error, promptly.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_tls.h"

/* A client whose handshake succeeded may still be refused by the server
 * (TLS 1.3 checks the client's certificate after the client is done):
 * then its first receive fails, without waiting. */
static int refused_later(struct gvs_conn *c)
{
    uint8_t b;
    ASSERT_EQ(gvs_conn_set_timeout(c, 5000), 0);
    int r = gvs_conn_recv(c, &b, 1);
    ASSERT(r == GVS_E_TLS || r == GVS_E_CLOSED);
    return 0;
}

/* Connects to uri (NULL: l's) and expects the client refused with
 * client_rc, the server's handshake failing. */
static int expect_refused(struct gvs_listener *l, const char *uri,
                          int client_rc)
{
    struct gvs_conn *a, *b;
    int ra, rb;
    test_tls_pair(l, uri, &a, &ra, &b, &rb);
    ASSERT_EQ(ra, client_rc);
    ASSERT(a == NULL && b == NULL);
    ASSERT(rb == GVS_E_TLS || rb == GVS_E_CLOSED);
    return 0;
}

static int expect_admitted(struct gvs_listener *l, const char *uri)
{
    struct gvs_conn *a, *b;
    ASSERT_EQ(test_tls_pair_ok(l, uri, &a, &b), 0);
    char in[5];
    ASSERT_EQ(gvs_conn_send(a, "hello", 5), 0);
    ASSERT_EQ(gvs_conn_recv(b, in, 5), 0);
    ASSERT_MEM_EQ(in, "hello", 5);
    ASSERT_EQ(gvs_conn_send(b, "back", 4), 0);
    ASSERT_EQ(gvs_conn_recv(a, in, 4), 0);
    ASSERT_MEM_EQ(in, "back", 4);
    gvs_conn_close(a);
    gvs_conn_close(b);
    return 0;
}

static void localhost_uri(const struct gvs_listener *l, char *out,
                          size_t len)
{
    const char *bound = gvs_listener_uri(l);
    snprintf(out, len, "tls://localhost:%s", strrchr(bound, ':') + 1);
}

TEST_IMPL(tls_untrusted_server)
{
    struct test_pki p;
    struct gvs_listener *l;
    ASSERT_EQ(test_pki_make(&p), 0);
    /* The client trusts only the rogue CA. */
    ASSERT_EQ(test_tls_listen(&p, NULL, p.rogue_ca, NULL, NULL, &l), 0);
    ASSERT_EQ(expect_refused(l, NULL, GVS_E_TLS), 0);
    ASSERT_EQ(test_tls_use(p.ca, NULL, NULL), 0);
    ASSERT_EQ(expect_admitted(l, NULL), 0);
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    return 0;
}

TEST_IMPL(tls_host_name)
{
    struct test_pki p;
    struct gvs_listener *l;
    char uri[64];
    ASSERT_EQ(test_pki_make(&p), 0);
    /* The server's certificate names 127.0.0.1 and localhost. */
    ASSERT_EQ(test_tls_listen(&p, NULL, p.ca, NULL, NULL, &l), 0);
    localhost_uri(l, uri, sizeof(uri));
    ASSERT_EQ(expect_admitted(l, uri), 0);
    gvs_listener_close(l, 0);
    /* One signed by the same CA for other.example only: by address or
     * by name, it is not the server asked for. */
    ASSERT_EQ(test_tls_use(NULL, p.other_cert, p.other_key), 0);
    ASSERT_EQ(gvs_listen("tls://127.0.0.1:0", &l), 0);
    ASSERT_EQ(test_tls_use(p.ca, NULL, NULL), 0);
    ASSERT_EQ(expect_refused(l, NULL, GVS_E_TLS), 0);
    localhost_uri(l, uri, sizeof(uri));
    ASSERT_EQ(expect_refused(l, uri, GVS_E_TLS), 0);
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    return 0;
}

TEST_IMPL(tls_no_ca)
{
    struct test_pki p;
    struct gvs_listener *l = NULL;
    struct gvs_conn *c = NULL;
    ASSERT_EQ(test_pki_make(&p), 0);
    /* No CA: refused before anything is sent (port 1: nobody there). */
    ASSERT_EQ(test_tls_use(NULL, p.client_cert, p.client_key), 0);
    ASSERT_EQ(gvs_connect("tls://127.0.0.1:1", &c), GVS_E_CONFIG);
    ASSERT(c == NULL);
    /* A certificate without its key, an unreadable CA. */
    ASSERT_EQ(test_tls_use(p.ca, p.client_cert, NULL), 0);
    ASSERT_EQ(gvs_connect("tls://127.0.0.1:1", &c), GVS_E_CONFIG);
    ASSERT_EQ(test_tls_use("/nonexistent/ca.pem", NULL, NULL), 0);
    ASSERT_EQ(gvs_connect("tls://127.0.0.1:1", &c), GVS_E_CONFIG);
    /* With a CA, the same connect goes as far as the network. */
    ASSERT_EQ(test_tls_use(p.ca, NULL, NULL), 0);
    ASSERT_EQ(gvs_connect("tls://127.0.0.1:1", &c), GVS_E_CONNECT);
    /* A server needs its certificate and key, matching. */
    ASSERT_EQ(gvs_listen("tls://127.0.0.1:0", &l), GVS_E_CONFIG);
    ASSERT_EQ(test_tls_use(NULL, p.server_cert, p.client_key), 0);
    ASSERT_EQ(gvs_listen("tls://127.0.0.1:0", &l), GVS_E_CONFIG);
    ASSERT(l == NULL);
    ASSERT_EQ(test_tls_use(NULL, NULL, NULL), 0);
    test_pki_remove(&p);
    return 0;
}

/* gvsd with tls_ca asks for a client certificate signed by it. */
TEST_IMPL(tls_mutual)
{
    struct test_pki p;
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    int ra, rb;
    ASSERT_EQ(test_pki_make(&p), 0);
    ASSERT_EQ(test_tls_listen(&p, p.ca, p.ca, NULL, NULL, &l), 0);
    /* Without a certificate, then with one of another CA. */
    for (int i = 0; i < 2; i++) {
        if (i == 1)
            ASSERT_EQ(test_tls_use(p.ca, p.rogue_cert, p.rogue_key), 0);
        test_tls_pair(l, NULL, &a, &ra, &b, &rb);
        ASSERT_EQ(rb, GVS_E_TLS);
        ASSERT(b == NULL);
        ASSERT(ra == 0 || ra == GVS_E_TLS);
        if (ra == 0) {
            ASSERT_EQ(refused_later(a), 0);
            gvs_conn_close(a);
        }
    }
    ASSERT_EQ(test_tls_use(p.ca, p.client_cert, p.client_key), 0);
    ASSERT_EQ(expect_admitted(l, NULL), 0);
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    return 0;
}

struct plain_server {
    struct gvs_listener *l;
    int answer; /* else close once the client has written */
    int rc;
};

/* A tcp server where a tls one was expected: it reads what the client
 * sends first (a TLS ClientHello: not a frame) and closes, or answers
 * with a frame header. */
static void *plain_server_main(void *arg)
{
    struct plain_server *s = arg;
    struct gvs_conn *c;
    s->rc = gvs_accept(s->l, &c);
    if (s->rc < 0)
        return NULL;
    uint8_t hdr[GVS_FRAME_HDR_LEN];
    s->rc = gvs_conn_recv(c, hdr, 5);
    if (s->rc == 0 && s->answer) {
        struct gvs_frame_hdr h = {.flags = GVS_F_REPLY};
        s->rc = gvs_frame_sendv(c, &h, NULL, 0);
        gvs_conn_set_timeout(c, 5000);
        while (gvs_conn_recv(c, hdr, 1) == 0)
            ;
    }
    gvs_conn_close(c);
    return NULL;
}

static int tls_client_on_plain(int answer)
{
    struct plain_server s = {.answer = answer};
    struct gvs_conn *c = NULL;
    char uri[64];
    pthread_t t;
    ASSERT_EQ(gvs_listen("tcp://127.0.0.1:0", &s.l), 0);
    snprintf(uri, sizeof(uri), "tls://%s", gvs_listener_uri(s.l) + 6);
    ASSERT_EQ(pthread_create(&t, NULL, plain_server_main, &s), 0);
    long long t0 = test_now_ms();
    int r = gvs_connect(uri, &c);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_LT(test_now_ms() - t0, 3000);
    ASSERT_EQ(r, answer ? GVS_E_TLS : GVS_E_CONNECT);
    ASSERT(c == NULL);
    ASSERT_EQ(s.rc, 0);
    gvs_listener_close(s.l, 0);
    return 0;
}

TEST_IMPL(tls_plaintext_mismatch)
{
    struct test_pki p;
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    ASSERT_EQ(test_pki_make(&p), 0);
    /* A tcp client on a tls server: its HELLO is no ClientHello; the
     * server's handshake fails and the client sees the end. */
    ASSERT_EQ(test_tls_listen(&p, NULL, p.ca, NULL, NULL, &l), 0);
    char uri[64];
    snprintf(uri, sizeof(uri), "tcp://%s", gvs_listener_uri(l) + 6);
    ASSERT_EQ(gvs_connect(uri, &a), 0);
    struct gvs_frame_hdr h = {.plugin = 0, .op = 1};
    struct iovec iov = {"0123456789abcdef", 16};
    ASSERT_EQ(gvs_frame_sendv(a, &h, &iov, 1), 0);
    ASSERT_EQ(gvs_accept(l, &b), 0);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_start(b, 5000), GVS_E_TLS);
    ASSERT_LT(test_now_ms() - t0, 2000);
    ASSERT_EQ(gvs_conn_send(b, "x", 1), GVS_E_TLS);
    gvs_conn_close(b);
    ASSERT_EQ(gvs_conn_set_timeout(a, 5000), 0);
    int r = gvs_frame_recv_hdr(a, 1 << 20, &h);
    ASSERT(r == GVS_E_CLOSED || r == GVS_E_PROTO);
    gvs_conn_close(a);
    gvs_listener_close(l, 0);
    /* A tls client on a tcp server. */
    ASSERT_EQ(tls_client_on_plain(0), 0);
    ASSERT_EQ(tls_client_on_plain(1), 0);
    test_pki_remove(&p);
    return 0;
}

struct trickle {
    struct gvs_conn *c;
    int stop;
};

/* A client that sends its handshake a byte at a time, slower than any
 * handshake: each byte arrives within the timeout, the whole never. */
static void *trickle_main(void *arg)
{
    struct trickle *k = arg;
    static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
    for (size_t i = 0; !__atomic_load_n(&k->stop, __ATOMIC_RELAXED) &&
                       i < sizeof(hello);
         i++) {
        if (gvs_conn_send(k->c, &hello[i], 1) < 0)
            break;
        usleep(100 * 1000);
    }
    return NULL;
}

TEST_IMPL(tls_handshake_timeout)
{
    struct test_pki p;
    struct gvs_listener *l, *plain;
    struct gvs_conn *a, *b, *c = NULL;
    char uri[64];
    ASSERT_EQ(test_pki_make(&p), 0);
    /* Client: a server that takes the connection and never answers. */
    ASSERT_EQ(setenv("GVS_CONNECT_TIMEOUT_MS", "300", 1), 0);
    ASSERT_EQ(test_tls_use(p.ca, NULL, NULL), 0);
    ASSERT_EQ(gvs_listen("tcp://127.0.0.1:0", &plain), 0);
    snprintf(uri, sizeof(uri), "tls://%s", gvs_listener_uri(plain) + 6);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_connect(uri, &c), GVS_E_CONNECT);
    long long took = test_now_ms() - t0;
    ASSERT_GE(took, 250);
    ASSERT_LT(took, 2000);
    ASSERT(c == NULL);
    gvs_listener_close(plain, 0);
    ASSERT_EQ(unsetenv("GVS_CONNECT_TIMEOUT_MS"), 0);

    /* Server: a client that connects and says nothing.  Nothing may be
     * sent before the handshake; a receive runs it, within the receive
     * timeout. */
    ASSERT_EQ(test_tls_listen(&p, NULL, p.ca, NULL, NULL, &l), 0);
    snprintf(uri, sizeof(uri), "tcp://%s", gvs_listener_uri(l) + 6);
    ASSERT_EQ(gvs_connect(uri, &a), 0);
    ASSERT_EQ(gvs_accept(l, &b), 0);
    ASSERT_EQ(gvs_conn_send(b, "x", 1), GVS_E_INVAL);
    ASSERT_EQ(gvs_conn_set_timeout(b, 300), 0);
    uint8_t byte;
    t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_recv(b, &byte, 1), GVS_E_TIMEOUT);
    took = test_now_ms() - t0;
    ASSERT_GE(took, 250);
    ASSERT_LT(took, 2000);
    ASSERT_EQ(gvs_conn_start(b, 5000), GVS_E_TIMEOUT);
    gvs_conn_close(b);
    gvs_conn_close(a);

    /* The limit holds for the handshake as a whole. */
    struct trickle k;
    pthread_t t;
    ASSERT_EQ(gvs_connect(uri, &k.c), 0);
    k.stop = 0;
    ASSERT_EQ(pthread_create(&t, NULL, trickle_main, &k), 0);
    ASSERT_EQ(gvs_accept(l, &b), 0);
    t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_start(b, 350), GVS_E_TIMEOUT);
    took = test_now_ms() - t0;
    ASSERT_GE(took, 300);
    ASSERT_LT(took, 2000);
    __atomic_store_n(&k.stop, 1, __ATOMIC_RELAXED);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    gvs_conn_close(b);
    gvs_conn_close(k.c);
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    return 0;
}
