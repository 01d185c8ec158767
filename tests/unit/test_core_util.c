#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/proto.h"
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
