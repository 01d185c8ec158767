/*
 * Helpers shared by the core communicator and protocol tests.
 */
#ifndef GVS_TEST_CORE_H
#define GVS_TEST_CORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gvs/buf.h"
#include "gvs/comm.h"
#include "gvs/proto.h"

/* "unix:///tmp/gvs-test-<pid>-<tag>.sock" into out; the path alone
 * into path (may be NULL). */
void test_unix_uri(char *out, size_t outlen, char *path, size_t pathlen,
                   const char *tag);

/* Listens on uri, connects to it and accepts: a connected pair in one
 * process.  Returns 0 or a GVS_E_* code. */
int test_conn_pair(const char *uri, struct gvs_listener **l,
                   struct gvs_conn **client, struct gvs_conn **server);

/* A gvs_connect to uri on a thread of its own: start, then join for its
 * result (rc) and connection (conn). */
struct test_connector {
    const char *uri;
    struct gvs_conn *conn;
    int rc;
    pthread_t thread;
};

/* 0, or -1 if no thread could be made. */
int test_connector_start(struct test_connector *k, const char *uri);
void test_connector_join(struct test_connector *k);

/* A gvs_conn_recv of one byte on a thread of its own: start, then join
 * for its result (rc) and when it returned (at_ns, gvs_now_ns). */
struct test_receiver {
    struct gvs_conn *conn;
    int rc;
    long long at_ns;
    pthread_t thread;
};

/* 0, or -1 if no thread could be made. */
int test_receiver_start(struct test_receiver *k, struct gvs_conn *c);
void test_receiver_join(struct test_receiver *k);

/* len pseudo-random bytes of the pattern seed names. */
void test_fill(uint8_t *p, size_t len, uint32_t seed);

/* Milliseconds on a monotonic clock. */
long long test_now_ms(void);

/* Waits for the child pid: 0 if it exited with status 0, else 1 after
 * printing why. */
int test_reaped_ok(pid_t pid);

/* Sends c a frame (plugin 3, op 4, id 5) of len test_fill bytes of seed
 * 1 from data (len bytes) and receives into body (up to 2 * len) the
 * peer's reply: a REPLY with id 5 and the len bytes of seed 2.  0 or 1. */
int test_big_round_trip(struct gvs_conn *c, uint8_t *data,
                        struct gvs_buf *body, size_t len,
                        struct gvs_frame_hdr *h);

/* test_big_round_trip between this process, accepting on l, and a
 * forked child connecting to uri, which answers with a REPLY of the len
 * bytes of seed 2 sent in two pieces and closes; the end of the stream
 * must follow.  The accepted connection's peer into peer.  0 or 1. */
int test_transfer(struct gvs_listener *l, const char *uri, size_t len,
                  char *peer, size_t peerlen);

/* count round trips of 16-byte frames over a pair made on uri, each
 * answered by an echoing thread; each side spins spin_ns before it
 * waits, as gvsd's reader does.  *ns gets the time taken.  0 or 1. */
int test_ping_pong(const char *uri, int count, long long spin_ns,
                   long long *ns);

/* Peak virtual memory of this process in KiB (VmPeak), 0 if unknown. */
long test_vm_peak_kib(void);

#endif
