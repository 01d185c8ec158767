/*
 * fuzz_frame: the frame decoder (core/proto.c) on a stream of arbitrary
 * bytes, as gvsd's reader and the client's receiver take it from a peer.
 *
 * Input: byte 0 picks the reading path (bits 0-1: gvs_frame_recv;
 * gvs_frame_recv_hdr then gvs_frame_recv_body into a buffer, into none
 * (dropped), or into one too small (dropped, GVS_E_TOOBIG)) and the
 * receiver's maximum (bits 2-4); bytes 1-4 are the sizes of the pieces
 * the connection hands out (memconn.h: short reads, timeouts); the rest
 * is the stream, read frame after frame until the first error.  Every
 * header flag combination and length is the fuzzer's to choose.
 *
 * Checked: a frame accepted has known flags, a length within the
 * maximum, a header that encodes back to the bytes read and a body that
 * is the next len bytes; a refused one leaves the header zeroed (and the
 * body empty); a body dropped leaves the stream in step; memory follows
 * the bytes that arrived, never the declared length (ASan's allocation
 * limit and -rss_limit_mb see to it).
 */
#include <stdlib.h>
#include <string.h>

#include "gvs/err.h"
#include "gvs/proto.h"
#include "memconn.h"

#define PATTERN_LEN 4
#define MAX_FRAMES 64
/* The maximum of the buffer a too-small body is offered. */
#define SMALL_BODY 64

enum path { RECV, SPLIT, SPLIT_DROP, SPLIT_SMALL };

static const size_t maxima[8] = {
    0, 1, 16, SMALL_BODY, 4096, 65536, GVS_FRAME_MAX_DEFAULT, UINT32_MAX,
};

static int known_error(int r)
{
    return r < 0 && strcmp(gvs_errname(r), "UNKNOWN") != 0;
}

static int zeroed(const struct gvs_frame_hdr *h)
{
    static const struct gvs_frame_hdr zero;
    return memcmp(h, &zero, sizeof(zero)) == 0;
}

/* The header at start of the stream, as accepted, encodes back to the
 * bytes it came from. */
static void check_header(const struct memconn *m, size_t start,
                         const struct gvs_frame_hdr *h, size_t max)
{
    uint8_t enc[GVS_FRAME_HDR_LEN];
    if ((h->flags & ~(uint32_t)GVS_F_KNOWN) != 0 || h->len > max)
        abort();
    gvs_frame_hdr_encode(h, enc);
    if (start + GVS_FRAME_HDR_LEN > m->len ||
        memcmp(enc, m->data + start, sizeof(enc)) != 0)
        abort();
}

static void check_body(const struct memconn *m, size_t at,
                       const struct gvs_buf *body, size_t len)
{
    if (gvs_buf_len(body) != len || at + len != m->off ||
        (len > 0 && memcmp(gvs_buf_ptr(body), m->data + at, len) != 0))
        abort();
}

/* One frame by the path chosen: 0 to go on with the next, else stop. */
static int one_frame(struct gvs_conn *c, struct memconn *m, enum path path,
                     size_t max, struct gvs_buf *body, struct gvs_buf *small)
{
    struct gvs_frame_hdr h;
    size_t start = m->off;
    if (path == RECV) {
        size_t eff = max < gvs_buf_max(body) ? max : gvs_buf_max(body);
        int r = gvs_frame_recv(c, max, &h, body);
        if (r < 0) {
            if (!zeroed(&h) || gvs_buf_len(body) != 0 || !known_error(r))
                abort();
            return 1;
        }
        check_header(m, start, &h, eff);
        check_body(m, start + GVS_FRAME_HDR_LEN, body, h.len);
        return 0;
    }
    int r = gvs_frame_recv_hdr(c, max, &h);
    if (r < 0) {
        if (!zeroed(&h) || !known_error(r))
            abort();
        return 1;
    }
    check_header(m, start, &h, max);
    struct gvs_buf *into = path == SPLIT ? body
                         : path == SPLIT_SMALL ? small : NULL;
    r = gvs_frame_recv_body(c, h.len, into);
    if (r == GVS_E_TOOBIG && into != NULL && h.len > gvs_buf_max(into)) {
        /* Dropped whole: the next frame starts where this one ends. */
        if (m->off != start + GVS_FRAME_HDR_LEN + h.len ||
            gvs_buf_len(into) != 0)
            abort();
        return 0;
    }
    if (r < 0) {
        if (!known_error(r) || (into != NULL && gvs_buf_len(into) != 0))
            abort();
        return 1;
    }
    if (into != NULL)
        check_body(m, start + GVS_FRAME_HDR_LEN, into, h.len);
    else if (m->off != start + GVS_FRAME_HDR_LEN + h.len)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 + PATTERN_LEN)
        return 0;
    enum path path = (enum path)(data[0] & 3);
    size_t max = maxima[(data[0] >> 2) & 7];
    struct memconn m = {.data = data + 1 + PATTERN_LEN,
                        .len = size - 1 - PATTERN_LEN,
                        .pattern = data + 1,
                        .npattern = PATTERN_LEN};
    struct gvs_conn *c = memconn_new(&m);
    struct gvs_buf *body = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    struct gvs_buf *small = gvs_buf_new(SMALL_BODY);
    if (c == NULL || body == NULL || small == NULL)
        abort();
    for (int i = 0; i < MAX_FRAMES; i++)
        if (one_frame(c, &m, path, max, body, small) != 0)
            break;
    gvs_buf_free(small);
    gvs_buf_free(body);
    gvs_conn_close(c);
    return 0;
}
