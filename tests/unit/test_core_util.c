#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_core.h"

void test_unix_uri(char *out, size_t outlen, char *path, size_t pathlen,
                   const char *tag)
{
    char p[108];
    snprintf(p, sizeof(p), "/tmp/gvs-test-%ld-%s.sock", (long)getpid(), tag);
    snprintf(out, outlen, "unix://%s", p);
    if (path != NULL)
        snprintf(path, pathlen, "%s", p);
}

static void *connector_main(void *arg)
{
    struct test_connector *k = arg;
    k->rc = gvs_connect(k->uri, &k->conn);
    return NULL;
}

int test_connector_start(struct test_connector *k, const char *uri)
{
    k->uri = uri;
    k->conn = NULL;
    k->rc = 0;
    return pthread_create(&k->thread, NULL, connector_main, k) == 0 ? 0 : -1;
}

void test_connector_join(struct test_connector *k)
{
    pthread_join(k->thread, NULL);
}

static void *receive(void *arg)
{
    struct test_receiver *k = arg;
    char b;
    k->rc = gvs_conn_recv(k->conn, &b, 1);
    k->at_ns = gvs_now_ns();
    return NULL;
}

int test_receiver_start(struct test_receiver *k, struct gvs_conn *c)
{
    *k = (struct test_receiver){.conn = c, .rc = 1};
    return pthread_create(&k->thread, NULL, receive, k) == 0 ? 0 : -1;
}

void test_receiver_join(struct test_receiver *k)
{
    pthread_join(k->thread, NULL);
}

void test_fill(uint8_t *p, size_t len, uint32_t seed)
{
    uint32_t x = seed;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
}

long long test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int test_reaped_ok(pid_t pid)
{
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    return 0;
}

int test_big_round_trip(struct gvs_conn *c, uint8_t *data,
                        struct gvs_buf *body, size_t len,
                        struct gvs_frame_hdr *h)
{
    test_fill(data, len, 1);
    *h = (struct gvs_frame_hdr){.plugin = 3, .op = 4, .id = 5};
    struct iovec iov = {data, len};
    ASSERT_EQ(gvs_frame_sendv(c, h, &iov, 1), 0);
    ASSERT_EQ(gvs_frame_recv(c, 2 * len, h, body), 0);
    ASSERT_EQ(h->flags, GVS_F_REPLY);
    ASSERT_U64_EQ(h->id, 5);
    ASSERT_EQ(h->len, len);
    test_fill(data, len, 2);
    ASSERT(memcmp(gvs_buf_ptr(body), data, len) == 0);
    return 0;
}

__attribute__((noreturn)) static void echo_child(const char *uri,
                                                 size_t len)
{
    struct gvs_conn *c;
    struct gvs_buf *b = gvs_buf_new(len + 1);
    uint8_t *want = malloc(len);
    struct gvs_frame_hdr h;
    if (b == NULL || want == NULL || gvs_connect(uri, &c) != 0)
        _exit(2);
    test_fill(want, len, 1);
    if (gvs_frame_recv(c, len + 1, &h, b) != 0 || h.len != len ||
        memcmp(gvs_buf_ptr(b), want, len) != 0)
        _exit(3);
    test_fill(want, len, 2);
    struct iovec iov[2] = {{want, 7}, {want + 7, len - 7}};
    h.flags = GVS_F_REPLY;
    if (gvs_frame_sendv(c, &h, iov, 2) != 0)
        _exit(4);
    gvs_conn_close(c);
    _exit(0);
}

int test_transfer(struct gvs_listener *l, const char *uri, size_t len,
                  char *peer, size_t peerlen)
{
    struct gvs_conn *c;
    struct gvs_frame_hdr h;
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        echo_child(uri, len);
    ASSERT_EQ(gvs_accept(l, &c), 0);
    snprintf(peer, peerlen, "%s", gvs_conn_peer(c));
    uint8_t *data = malloc(len);
    struct gvs_buf *body = gvs_buf_new(2 * len);
    ASSERT(data != NULL && body != NULL);
    ASSERT_EQ(test_big_round_trip(c, data, body, len, &h), 0);
    ASSERT_EQ(test_reaped_ok(pid), 0);
    ASSERT_EQ(gvs_frame_recv(c, 16, &h, body), GVS_E_CLOSED);
    gvs_conn_close(c);
    gvs_buf_free(body);
    free(data);
    return 0;
}

/* The connect runs on a thread of its own: an shm connect completes
 * only once the accept has sent the region. */
int test_conn_pair(const char *uri, struct gvs_listener **l,
                   struct gvs_conn **client, struct gvs_conn **server)
{
    *client = *server = NULL;
    int r = gvs_listen(uri, l);
    if (r < 0)
        return r;
    struct test_connector k;
    if (test_connector_start(&k, gvs_listener_uri(*l)) < 0) {
        gvs_listener_close(*l, 0);
        *l = NULL;
        return GVS_E_NOMEM;
    }
    r = gvs_accept(*l, server);
    test_connector_join(&k);
    if (r == 0 && k.rc < 0) {
        gvs_conn_close(*server);
        *server = NULL;
        r = k.rc;
    }
    *client = k.conn;
    if (r < 0) {
        gvs_conn_close(*client);
        gvs_listener_close(*l, 0);
        *client = NULL;
        *l = NULL;
    }
    return r;
}

long test_vm_peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmPeak: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* Echoes `count` frames back, polling `spin_ns` first as gvsd's reader
 * does. */
struct echoer {
    struct gvs_conn *c;
    int count;
    long long spin_ns;
    int rc;
};

static void *echo_main(void *arg)
{
    struct echoer *e = arg;
    struct gvs_buf *b = gvs_buf_new(64);
    struct gvs_frame_hdr h;
    for (int i = 0; i < e->count && e->rc == 0; i++) {
        gvs_conn_spin_readable(e->c, e->spin_ns);
        e->rc = gvs_frame_recv(e->c, 64, &h, b);
        h.flags = GVS_F_REPLY;
        if (e->rc == 0)
            e->rc = gvs_frame_send(e->c, &h, b);
    }
    gvs_buf_free(b);
    return NULL;
}

int test_ping_pong(const char *uri, int count, long long spin_ns,
                   long long *ns)
{
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT_EQ(test_conn_pair(uri, &l, &a, &b), 0);
    struct echoer e = {b, count, spin_ns, 0};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, echo_main, &e), 0);
    uint8_t msg[16];
    long long t0 = gvs_now_ns();
    for (int i = 0; i < count; i++) {
        struct gvs_frame_hdr h = {.plugin = 1, .op = 2, .id = (uint64_t)i};
        test_fill(msg, sizeof(msg), (uint32_t)i);
        struct iovec iov = {msg, sizeof(msg)};
        ASSERT_EQ(gvs_frame_sendv(a, &h, &iov, 1), 0);
        gvs_conn_spin_readable(a, spin_ns);
        ASSERT_EQ(gvs_frame_recv(a, 64, &h, body), 0);
        ASSERT_U64_EQ(h.id, (uint64_t)i);
        ASSERT_EQ(gvs_buf_len(body), sizeof(msg));
        ASSERT_MEM_EQ(gvs_buf_ptr(body), msg, sizeof(msg));
    }
    *ns = gvs_now_ns() - t0;
    pthread_join(t, NULL);
    ASSERT_EQ(e.rc, 0);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    gvs_buf_free(body);
    return 0;
}
