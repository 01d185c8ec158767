/*
 * Helpers for the tests that run a real bin/gvsd (server, client and
 * cli tests): start/stop it on a private unix socket, a free tcp port
 * and a private shm socket, read its log, and speak raw frames to the echo test plugin.
 */
#ifndef GVS_TEST_SERVER_HARNESS_H
#define GVS_TEST_SERVER_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gvs/buf.h"
#include "gvs/comm.h"
#include "test_core.h"

struct test_gvsd {
    pid_t pid;
    char dir[64];         /* private mkdtemp directory */
    char unix_uri[128];   /* unix://DIR/gvsd.sock */
    char sock_path[108];
    char tcp_uri[64];     /* tcp://127.0.0.1:PORT */
    char shm_uri[128];    /* shm://DIR/gvsd-shm.sock */
    char log_path[128];   /* gvsd's stderr */
    int no_default_listen; /* set before start: only the extra args */
};

/* Creates the private directory and fills the paths (no process yet). */
int test_gvsd_init(struct test_gvsd *g);

/* Runs bin/gvsd --plugin-dir <build>/tests/plugins --log-level info,
 * listening on unix_uri, tcp_uri and shm_uri (unless no_default_listen), then
 * extra (NULL-terminated, may be NULL; later flags win).  Waits for
 * --ready-fd.  Calls test_gvsd_init first if the dir is not made yet.
 * 0, or -1 after printing why. */
int test_gvsd_start(struct test_gvsd *g, const char *const *extra);

/* Runs gvsd to completion with argv extra (no defaults) and returns its
 * wait status; its stderr goes to the log.  For option errors. */
int test_gvsd_run_once(struct test_gvsd *g, const char *const *extra);

/* SIGTERMs gvsd and returns its wait status (-1 if it took over 10 s,
 * then it is SIGKILLed).  Removes the directory. */
int test_gvsd_stop(struct test_gvsd *g);

/* Waits up to timeout_ms for the log to contain needle; 1 if it does. */
int test_gvsd_log_has(const struct test_gvsd *g, const char *needle,
                      int timeout_ms);

/* Writes text into DIR/name; the full path into path. 0 or -1. */
int test_write_file(const struct test_gvsd *g, const char *name,
                    const char *text, char *path, size_t pathlen);

/* Connects and sends a HELLO naming one plugin; returns the reply status
 * (0, or the server's negative code; msg gets its message), or a
 * transport error.  *out is the open connection (also on refusal). */
int test_hello(const char *uri, uint32_t version, uint16_t id,
               const char *name, uint64_t hash, struct gvs_conn **out,
               char *msg, size_t msglen);

/* A handshaken session naming the echo plugin, NULL on failure. */
struct gvs_conn *test_session(const char *uri);

/* One request, one reply: checks the reply's flags, id, plugin and op. */
int test_call(struct gvs_conn *c, uint16_t plugin, uint16_t op, uint64_t id,
              const void *body, size_t len, struct gvs_buf *reply);

/* ECHO of len pattern bytes (seeded by id); 0 if the reply matches. */
int test_echo(struct gvs_conn *c, uint64_t id, size_t len);

/* Sends raw bytes. */
int test_send_raw(struct gvs_conn *c, const void *p, size_t len);

/* 1 if the peer closes c within timeout_ms (any reply in between is
 * read and dropped), else 0. */
int test_wait_closed(struct gvs_conn *c, unsigned timeout_ms);

/* Asserts that gvsd still serves: an ECHO on the open session `other`
 * and on a brand-new session over each transport.  0 or 1. */
int test_still_serving(const struct test_gvsd *g, struct gvs_conn *other);

/* A tcp port on 127.0.0.1 that was free a moment ago. */
int test_free_port(void);

/* One request of the echo plugin's op with body, its reply dropped.  0
 * or the call's error. */
int test_echo_op(struct gvs_conn *c, uint16_t op, uint64_t id,
                 const void *body, size_t len);

/* REPORT_MEMORY: bytes become the session's GPU memory (what gvs status
 * and the metrics show).  0 or the call's error. */
int test_report_memory(struct gvs_conn *c, uint64_t id, uint64_t bytes);

/* test_gvsd_start with metrics_listen on a free port (*port), a memory
 * quota of 2M, the config lines conf (NULL: none) and the flags extra
 * (NULL-terminated, at most 8; NULL: none). */
int test_gvsd_start_metrics(struct test_gvsd *g, int *port, const char *conf,
                            const char *const *extra);

/* HTTP to a metrics endpoint on 127.0.0.1:port: a connected socket (-1
 * on failure); everything until the peer closes, NUL-terminated, as the
 * number of bytes read (-1 when timeout_ms passes first or out fills);
 * one request sent and its whole response read (5 s at most). */
int test_http_connect(int port);
int test_read_all(int fd, char *out, size_t len, int timeout_ms);
int test_http(int port, const char *request, char *out, size_t len);

#endif
