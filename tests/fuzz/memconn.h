/*
 * A connection over memory for the harnesses that read frames: what a
 * peer would have sent is the fuzzer's input, handed out in pieces of
 * the sizes a pattern gives (a socket's short reads, and a receive
 * timeout where the pattern says so), then end of stream.  What the code
 * under test sends is kept in `sent`, for the harness to check.
 */
#ifndef GVS_FUZZ_MEMCONN_H
#define GVS_FUZZ_MEMCONN_H

#include <stddef.h>
#include <stdint.h>

#include "gvs/buf.h"
#include "gvs/comm.h"

/* A pattern byte that makes that read fail with GVS_E_TIMEOUT; any other
 * value v makes it return at most v + 1 bytes. */
#define MEMCONN_TIMEOUT 0xffu

struct memconn {
    const uint8_t *data;
    size_t len, off;        /* off: bytes already received */
    const uint8_t *pattern; /* piece sizes, cycled; none: all at once */
    size_t npattern, next;
    struct gvs_buf *sent;   /* NULL: what is sent is dropped */
};

/* A connection reading m (which must outlive it); NULL when out of
 * memory.  gvs_conn_close frees it and leaves m alone. */
struct gvs_conn *memconn_new(struct memconn *m);

#endif
