/*
 * The bulk rate of a communicator by itself: the ceiling a cudaMemcpy
 * through gvs can approach on it (bench/run.py's socket_bulk_256MiB row).
 * The process forks; the child connects to the parent over URI through
 * the same gvs_conn code gvs uses, and SIZE MiB go from the memory of one
 * to the memory of the other in CHUNK MiB gvs_conn_sendv calls, first
 * child to parent (the direction of a host-to-device copy), then parent
 * to child (device-to-host).  The memory is that of a copy through gvs:
 * the child, the program, has a buffer of the full size; the parent,
 * gvsd, one of a chunk that every chunk goes through (a frame buffer or
 * the backend's staging).  Both are touched beforehand.  Each direction
 * runs once to warm up, then ROUNDS times; the median round counts, the
 * statistic of every copy it is compared with (bench/run.py: one timing
 * a round, the median of the rounds).  The best round, printed too, is
 * the ceiling a lucky moment of this machine reached.
 *
 *   sockbulk URI [SIZE_MiB [CHUNK_MiB [ROUNDS]]]    (256, 8, 5)
 *
 * tls://: the parent shows the certificate $GVS_TLS_CERT (key
 * $GVS_TLS_KEY) and the child verifies it against $GVS_TLS_CA.  No
 * client certificate: it changes the handshake, not the rate.
 *
 * Prints "metric value unit" lines as the other benchmarks do:
 * socket_bulk_<SIZE>MiB_c2s, ..._s2c and socket_bulk_<SIZE>MiB, the mean
 * of the two, and socket_bulk_<SIZE>MiB_c2s_best and ..._s2c_best, in
 * GB/s (10^9 bytes per second).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/tls.h"

/* The handshake of a tls:// connection that the parent accepts. */
#define START_TIMEOUT_MS 10000
#define MAX_ROUNDS 1000

struct plan {
    size_t size, chunk;
    int rounds;
};

/* Where chunk `off` goes in a side's buffer: the full-size buffer holds
 * the whole transfer, the chunk-size one each chunk in turn. */
static size_t place(size_t off, int full)
{
    return full ? off : 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int send_all(struct gvs_conn *c, const uint8_t *buf,
                    const struct plan *p, int full)
{
    for (size_t off = 0; off < p->size; off += p->chunk) {
        size_t len = p->size - off < p->chunk ? p->size - off : p->chunk;
        struct iovec iov = {(void *)(buf + place(off, full)), len};
        int rc = gvs_conn_sendv(c, &iov, 1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int recv_all(struct gvs_conn *c, uint8_t *buf, const struct plan *p,
                    int full)
{
    for (size_t off = 0; off < p->size; off += p->chunk) {
        size_t len = p->size - off < p->chunk ? p->size - off : p->chunk;
        int rc = gvs_conn_recv(c, buf + place(off, full), len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* One byte each way tells the other side to start, or that all has
 * arrived; it is part of the timed span, a few microseconds. */
static int signal_peer(struct gvs_conn *c)
{
    uint8_t b = 1;
    return gvs_conn_send(c, &b, 1);
}

static int await_peer(struct gvs_conn *c)
{
    uint8_t b;
    return gvs_conn_recv(c, &b, 1);
}

/* The child: sends when told, then receives and acknowledges. */
static int child_rounds(struct gvs_conn *c, uint8_t *buf, const struct plan *p)
{
    int rc = 0;
    for (int r = 0; r <= p->rounds && rc == 0; r++) {
        rc = await_peer(c);
        if (rc == 0)
            rc = send_all(c, buf, p, 1);
    }
    for (int r = 0; r <= p->rounds && rc == 0; r++) {
        rc = recv_all(c, buf, p, 1);
        if (rc == 0)
            rc = signal_peer(c);
    }
    return rc;
}

/* Each direction's rates, one a round. */
struct rates {
    double c2s[MAX_ROUNDS], s2c[MAX_ROUNDS];
};

/* The parent times every round but the first (a warm-up). */
static int parent_rounds(struct gvs_conn *c, uint8_t *buf,
                         const struct plan *p, struct rates *out)
{
    int rc = 0;
    for (int r = 0; r <= p->rounds && rc == 0; r++) {
        double t = now_s();
        rc = signal_peer(c);
        if (rc == 0)
            rc = recv_all(c, buf, p, 0);
        if (r > 0)
            out->c2s[r - 1] = (double)p->size / (now_s() - t) / 1e9;
    }
    for (int r = 0; r <= p->rounds && rc == 0; r++) {
        double t = now_s();
        rc = send_all(c, buf, p, 0);
        if (rc == 0)
            rc = await_peer(c);
        if (r > 0)
            out->s2c[r - 1] = (double)p->size / (now_s() - t) / 1e9;
    }
    return rc;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v; its median (of an even count, the mean of the middle two). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint8_t *touched_buffer(size_t size)
{
    uint8_t *b = mmap(NULL, size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return NULL;
    memset(b, 0x5a, size);
    return b;
}

/* The files of one side (tls:// only; harmless elsewhere). */
static int use_tls_files(int server)
{
    struct gvs_tls_files f = {NULL, NULL, NULL};
    gvs_tls_files_env(&f);
    if (server)
        f.ca = NULL;
    else
        f.cert = f.key = NULL;
    return gvs_tls_configure(&f);
}

static int parse_plan(int argc, char **argv, struct plan *p)
{
    long size = argc > 2 ? atol(argv[2]) : 256;
    long chunk = argc > 3 ? atol(argv[3]) : 8;
    long rounds = argc > 4 ? atol(argv[4]) : 5;
    if (size < 1 || size > 4096 || chunk < 1 || chunk > size || rounds < 1 ||
        rounds > MAX_ROUNDS)
        return -1;
    p->size = (size_t)size << 20;
    p->chunk = (size_t)chunk << 20;
    p->rounds = (int)rounds;
    return 0;
}

int main(int argc, char **argv)
{
    struct plan p;
    if (argc < 2 || argc > 5 || parse_plan(argc, argv, &p) < 0) {
        fprintf(stderr,
                "usage: sockbulk URI [SIZE_MiB [CHUNK_MiB [ROUNDS]]]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct gvs_listener *l;
    int rc = use_tls_files(1);
    if (rc == 0)
        rc = gvs_listen(argv[1], &l);
    if (rc < 0) {
        fprintf(stderr, "sockbulk: cannot listen on %s: %s\n", argv[1],
                gvs_strerror(rc));
        return 1;
    }
    /* tcp port 0 becomes the port bound. */
    char uri[512];
    snprintf(uri, sizeof(uri), "%s", gvs_listener_uri(l));
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sockbulk: fork failed\n");
        return 1;
    }
    struct gvs_conn *c;
    uint8_t *buf = touched_buffer(pid == 0 ? p.size : p.chunk);
    if (buf == NULL) {
        fprintf(stderr, "sockbulk: out of memory\n");
        if (pid == 0)
            _exit(1);
        return 1;
    }
    if (pid == 0) {
        gvs_listener_close(l, 1);
        rc = use_tls_files(0);
        if (rc == 0)
            rc = gvs_connect(uri, &c);
        if (rc == 0) {
            rc = child_rounds(c, buf, &p);
            gvs_conn_close(c);
        }
        _exit(rc == 0 ? 0 : 1);
    }
    static struct rates rates;
    rc = gvs_accept(l, &c);
    if (rc == 0) {
        /* The parent speaks first. */
        rc = gvs_conn_start(c, START_TIMEOUT_MS);
        if (rc == 0)
            rc = parent_rounds(c, buf, &p, &rates);
        gvs_conn_close(c);
    }
    int status;
    waitpid(pid, &status, 0);
    gvs_listener_close(l, 0);
    if (rc < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "sockbulk: transfer over %s failed: %s\n", uri,
                gvs_strerror(rc < 0 ? rc : GVS_E_IO));
        return 1;
    }
    unsigned mib = (unsigned)(p.size >> 20);
    double c2s = median(rates.c2s, p.rounds), s2c = median(rates.s2c, p.rounds);
    printf("socket_bulk_%uMiB_c2s %.6g GB/s\n", mib, c2s);
    printf("socket_bulk_%uMiB_s2c %.6g GB/s\n", mib, s2c);
    printf("socket_bulk_%uMiB %.6g GB/s\n", mib, (c2s + s2c) / 2);
    printf("socket_bulk_%uMiB_c2s_best %.6g GB/s\n", mib,
           rates.c2s[p.rounds - 1]);
    printf("socket_bulk_%uMiB_s2c_best %.6g GB/s\n", mib,
           rates.s2c[p.rounds - 1]);
    return 0;
}
