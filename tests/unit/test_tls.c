/*
 * tls:// moving bytes: large frames both ways between two processes,
 * many small ones gathered into records, bytes left decrypted inside
 * OpenSSL or read ahead, corked sends out whole when they return,
 * shutdown waking blocked readers and senders, the URI.
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_tls.h"

#define BIG_LEN ((size_t)24 << 20)
#define SMALL_FRAMES 500

/* The client process: takes one big frame, answers with another cut
 * into uneven iovecs, then sends SMALL_FRAMES small ones (header and
 * body in separate iovecs: one record each).  A small send buffer makes
 * every big write stop and resume.  Returns the exit status. */
static int echo_client(const char *uri)
{
    struct gvs_conn *c;
    struct gvs_buf *body = gvs_buf_new(2 * BIG_LEN);
    uint8_t *want = malloc(BIG_LEN);
    struct gvs_frame_hdr h;
    if (body == NULL || want == NULL || gvs_connect(uri, &c) != 0)
        return 2;
    int small = 64 << 10;
    setsockopt(gvs_conn_fd(c), SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    if (gvs_frame_recv(c, 2 * BIG_LEN, &h, body) != 0)
        return 3;
    test_fill(want, BIG_LEN, 1);
    if (h.len != BIG_LEN || memcmp(gvs_buf_ptr(body), want, BIG_LEN) != 0)
        return 4;
    test_fill(want, BIG_LEN, 2);
    struct iovec iov[4] = {{want, 1},
                           {want + 1, 27},
                           {want + 28, 20000},
                           {want + 20028, BIG_LEN - 20028}};
    h.flags = GVS_F_REPLY;
    if (gvs_frame_sendv(c, &h, iov, 4) != 0)
        return 5;
    for (uint32_t i = 0; i < SMALL_FRAMES; i++) {
        struct gvs_frame_hdr s = {.plugin = 1, .op = 2, .id = i};
        test_fill(want, i % 300, i);
        struct iovec one = {want, i % 300};
        if (gvs_frame_sendv(c, &s, &one, 1) != 0)
            return 6;
    }
    gvs_conn_close(c);
    gvs_buf_free(body);
    free(want);
    return 0;
}

TEST_IMPL(tls_transfer)
{
    struct test_pki p;
    struct gvs_listener *l;
    struct gvs_conn *c;
    ASSERT_EQ(test_tls_setup(&p, &l), 0);
    ASSERT(strncmp(gvs_listener_uri(l), "tls://127.0.0.1:", 16) == 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        _exit(echo_client(gvs_listener_uri(l)));
    ASSERT_EQ(gvs_accept(l, &c), 0);
    ASSERT(strncmp(gvs_conn_peer(c), "127.0.0.1:", 10) == 0);
    ASSERT_EQ(gvs_conn_caps(c), 0);
    ASSERT_EQ(gvs_conn_start(c, 5000), 0);

    uint8_t *data = malloc(BIG_LEN);
    struct gvs_buf *body = gvs_buf_new(2 * BIG_LEN);
    ASSERT(data != NULL && body != NULL);
    struct gvs_frame_hdr h;
    ASSERT_EQ(test_big_round_trip(c, data, body, BIG_LEN, &h), 0);
    for (uint32_t i = 0; i < SMALL_FRAMES; i++) {
        ASSERT_EQ(gvs_frame_recv(c, 4096, &h, body), 0);
        ASSERT_U64_EQ(h.id, i);
        ASSERT_EQ(h.len, i % 300);
        test_fill(data, i % 300, i);
        ASSERT_MEM_EQ(gvs_buf_ptr(body), data, i % 300);
    }

    ASSERT_EQ(test_reaped_ok(pid), 0);
    ASSERT_EQ(gvs_frame_recv(c, 16, &h, body), GVS_E_CLOSED);
    gvs_conn_close(c);
    gvs_listener_close(l, 0);
    gvs_buf_free(body);
    free(data);
    test_pki_remove(&p);
    return 0;
}

/* Bytes OpenSSL has decrypted but not handed out yet are invisible on
 * the socket: readable must still say so, or a poller would sleep on
 * them. */
TEST_IMPL(tls_readable_pending)
{
    struct test_pki p;
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    ASSERT_EQ(test_tls_setup(&p, &l), 0);
    ASSERT_EQ(test_tls_pair_ok(l, NULL, &a, &b), 0);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000), 0);
    uint8_t out[100], in[100];
    test_fill(out, sizeof(out), 9);
    ASSERT_EQ(gvs_conn_send(a, out, sizeof(out)), 0);
    size_t got;
    ASSERT_EQ(gvs_conn_recv_some(b, in, 10, &got), 0);
    ASSERT_EQ(got, 10);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000), 1);
    ASSERT_EQ(gvs_conn_recv(b, in + 10, 90), 0);
    ASSERT_MEM_EQ(in, out, sizeof(out));
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000), 0);
    /* The other way too, and the receive timeout. */
    ASSERT_EQ(gvs_conn_send(b, out, 3), 0);
    ASSERT_EQ(gvs_conn_recv(a, in, 3), 0);
    ASSERT_EQ(gvs_conn_set_timeout(a, 100), 0);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_recv_some(a, in, 1, &got), GVS_E_TIMEOUT);
    ASSERT_GE(test_now_ms() - t0, 90);
    ASSERT_EQ(gvs_conn_send(b, out, 1), 0);
    ASSERT_EQ(gvs_conn_recv(a, in, 1), 0);
    gvs_conn_close(a);
    ASSERT_EQ(gvs_conn_recv(b, in, 1), GVS_E_CLOSED);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    return 0;
}

/* A receive reads ahead what the socket holds: a second record that
 * came with the first is then in OpenSSL, not yet decrypted, and not on
 * the socket.  Readable must still say so. */
TEST_IMPL(tls_readable_read_ahead)
{
    struct test_pki p;
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    ASSERT_EQ(test_tls_setup(&p, &l), 0);
    ASSERT_EQ(test_tls_pair_ok(l, NULL, &a, &b), 0);
    uint8_t out[200], in[200];
    test_fill(out, sizeof(out), 4);
    ASSERT_EQ(gvs_conn_send(a, out, 100), 0);
    ASSERT_EQ(gvs_conn_send(a, out + 100, 100), 0);
    /* Both records on b's socket before b reads. */
    for (int i = 0; i < 200; i++) {
        int queued = 0;
        ASSERT_EQ(ioctl(gvs_conn_fd(b), FIONREAD, &queued), 0);
        if (queued >= 200)
            break;
        usleep(1000);
    }
    ASSERT_EQ(gvs_conn_recv(b, in, 100), 0);
    struct pollfd pf = {.fd = gvs_conn_fd(b), .events = POLLIN};
    ASSERT_EQ(poll(&pf, 1, 0), 0);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000), 1);
    ASSERT_EQ(gvs_conn_recv(b, in + 100, 100), 0);
    ASSERT_MEM_EQ(in, out, sizeof(out));
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000), 0);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    return 0;
}

/* A send long enough to go corked is out whole when it returns: its
 * last, partial segment does not wait for the kernel's 200 ms cork
 * timer.  Twenty exchanges of 64 KiB + 1 and one byte back take
 * milliseconds, seconds if each waited. */
TEST_IMPL(tls_corked_send_pushed)
{
    struct test_pki p;
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    ASSERT_EQ(test_tls_setup(&p, &l), 0);
    ASSERT_EQ(test_tls_pair_ok(l, NULL, &a, &b), 0);
    const size_t len = ((size_t)64 << 10) + 1;
    uint8_t *out = malloc(len), *in = malloc(len);
    ASSERT(out != NULL && in != NULL);
    test_fill(out, len, 6);
    long long t0 = test_now_ms();
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(gvs_conn_send(a, out, len), 0);
        ASSERT_EQ(gvs_conn_recv(b, in, len), 0);
        ASSERT_EQ(gvs_conn_send(b, in, 1), 0);
        ASSERT_EQ(gvs_conn_recv(a, in, 1), 0);
    }
    ASSERT_LT(test_now_ms() - t0, 2000);
    ASSERT_MEM_EQ(in, out, len);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    free(out);
    free(in);
    return 0;
}

struct blocked {
    struct gvs_conn *c;
    int send; /* else receive */
    int rc;
};

static void *blocked_main(void *arg)
{
    struct blocked *b = arg;
    if (b->send) {
        size_t len = (size_t)64 << 20;
        uint8_t *p = calloc(1, len);
        b->rc = p != NULL ? gvs_conn_send(b->c, p, len) : GVS_E_NOMEM;
        free(p);
    } else {
        uint8_t byte;
        b->rc = gvs_conn_recv(b->c, &byte, 1);
    }
    return NULL;
}

/* gvs_conn_shutdown from another thread ends what c's readers and
 * senders are blocked in, with GVS_E_CLOSED. */
static int shutdown_wakes(struct gvs_conn *c, int send)
{
    struct blocked b = {.c = c, .send = send};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, blocked_main, &b), 0);
    usleep(200 * 1000);
    long long t0 = test_now_ms();
    gvs_conn_shutdown(c);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_LT(test_now_ms() - t0, 2000);
    ASSERT_EQ(b.rc, GVS_E_CLOSED);
    return 0;
}

TEST_IMPL(tls_shutdown_unblocks)
{
    struct test_pki p;
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    ASSERT_EQ(test_tls_setup(&p, &l), 0);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(test_tls_pair_ok(l, NULL, &a, &b), 0);
        /* A client reader, a server reader, a sender nobody reads. */
        ASSERT_EQ(shutdown_wakes(i == 1 ? b : a, i == 2), 0);
        gvs_conn_close(a);
        gvs_conn_close(b);
    }
    gvs_listener_close(l, 0);
    test_pki_remove(&p);
    return 0;
}

TEST_IMPL(tls_uri)
{
    struct gvs_uri u;
    char text[64];
    ASSERT_EQ(gvs_uri_parse("tls://gpu-host.example:7300", &u), 0);
    ASSERT_STR_EQ(u.scheme, "tls");
    ASSERT_STR_EQ(u.host, "gpu-host.example");
    ASSERT_EQ(u.port, 7300);
    ASSERT_EQ(gvs_uri_format(&u, text, sizeof(text)), 0);
    ASSERT_STR_EQ(text, "tls://gpu-host.example:7300");
    ASSERT_EQ(gvs_uri_parse("tls://[::1]:9", &u), 0);
    ASSERT_EQ(gvs_uri_format(&u, text, sizeof(text)), 0);
    ASSERT_STR_EQ(text, "tls://[::1]:9");
    ASSERT_EQ(gvs_uri_parse("tls://host", &u), GVS_E_URI);
    ASSERT_EQ(gvs_uri_parse("tls:///path", &u), GVS_E_URI);
    ASSERT_EQ(gvs_uri_parse("tlsx://h:1", &u), GVS_E_URI);
    ASSERT(gvs_transport_find("tls") != NULL);
    /* gvs_conn_start is nothing to do elsewhere. */
    struct gvs_listener *l;
    struct gvs_conn *c, *s;
    ASSERT_EQ(gvs_listen("tcp://127.0.0.1:0", &l), 0);
    ASSERT_EQ(gvs_connect(gvs_listener_uri(l), &c), 0);
    ASSERT_EQ(gvs_accept(l, &s), 0);
    ASSERT_EQ(gvs_conn_start(s, 1), 0);
    gvs_conn_close(c);
    gvs_conn_close(s);
    gvs_listener_close(l, 0);
    return 0;
}
