/*
 * fuzz_hello: the handshake, first thing a peer sends before any check
 * of who it is: the HELLO and HELLO reply codecs (core/proto.c) and
 * gvsd's handshake (server/handshake.c) on a connection whose bytes are
 * the input (memconn.h).
 *
 * Input: byte 0 picks what the rest is:
 *   0  a HELLO body for gvs_hello_decode;
 *   1  a HELLO reply body for gvs_hello_reply_decode;
 *   2  a HELLO body that gvsd_handshake receives in a well-formed frame;
 *   3  the raw stream gvsd_handshake reads (header included).
 * gvsd knows two plugins: "alpha" (id 1), whose sessions open, and "beta"
 * (id 2), whose session_open fails, so a HELLO may pass every check and
 * still be refused after opening some plugin.
 *
 * Checked: a decoded HELLO or reply encodes back to exactly the bytes it
 * came from (the decoders are strict: no slack, no trailing bytes); a
 * failed decode leaves the output zeroed; the handshake answers every
 * frame it received with one well-formed HELLO reply whose status is its
 * result, and leaves plugins open only when it succeeded.
 */
#include <stdlib.h>
#include <string.h>

#include "gvs/config.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/proto.h"
#include "memconn.h"
#include "session.h"

#define ALPHA_HASH 0x0123456789abcdefull
#define BETA_HASH 0xfedcba9876543210ull

static int noop(struct gvs_call *call)
{
    (void)call;
    return 0;
}

static const struct gvs_op ops[] = {{1, 0, "noop", noop}, GVS_OP_END};

static int opened;

static int alpha_open(const struct gvs_host_api *host,
                      struct gvs_session *session, void **state)
{
    (void)host;
    (void)session;
    opened++;
    *state = &opened;
    return 0;
}

static int beta_open(const struct gvs_host_api *host,
                     struct gvs_session *session, void **state)
{
    (void)host;
    (void)session;
    (void)state;
    return GVS_E_INVAL;
}

static void plugin_close(void *state)
{
    if (state != &opened)
        abort();
    opened--;
}

/* Neither offers anything to other plugins (peer_api NULL) nor says
 * when a blocking request will not wait (may_wait NULL). */
static const struct gvs_plugin alpha = {GVS_PLUGIN_ABI, 1, "alpha",
                                        ALPHA_HASH, ops, alpha_open,
                                        plugin_close, NULL, NULL};
static const struct gvs_plugin beta = {GVS_PLUGIN_ABI, 2, "beta", BETA_HASH,
                                       ops, beta_open, plugin_close, NULL,
                                       NULL};

static struct gvsd_plugins plugins;
static struct gvs_config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Every refused HELLO is logged as a warning. */
    gvs_log_setup("fuzz_hello", GVS_LOG_ERROR);
    gvs_config_init(&cfg);
    if (gvsd_plugins_add(&plugins, &alpha, NULL) != 0 ||
        gvsd_plugins_add(&plugins, &beta, NULL) != 0)
        abort();
    return 0;
}

static int zero(const void *p, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i] != 0)
            return 0;
    return 1;
}

/* Decodes with the HELLO or the reply decoder; a success must encode
 * back to the same bytes. */
static void codec(const uint8_t *data, size_t size, int reply)
{
    static struct gvs_hello h;
    static struct gvs_hello_reply rp;
    struct gvs_buf *in = gvs_buf_view(data, size);
    struct gvs_buf *out = gvs_buf_new(size + 64);
    if (in == NULL || out == NULL)
        abort();
    int r = reply ? gvs_hello_reply_decode(in, &rp) : gvs_hello_decode(in, &h);
    if (r < 0 && !(reply ? zero(&rp, sizeof(rp)) : zero(&h, sizeof(h))))
        abort();
    if (r == 0) {
        r = reply ? gvs_hello_reply_encode(&rp, out)
                  : gvs_hello_encode(&h, out);
        if (r != 0 || gvs_buf_len(out) != size ||
            (size > 0 && memcmp(gvs_buf_ptr(out), data, size) != 0))
            abort();
    }
    gvs_buf_free(out);
    gvs_buf_free(in);
}

/* gvsd's handshake reading stream, then the reply it sent. */
static void handshake(const uint8_t *stream, size_t len)
{
    struct gvsd_session_opts o = {.id = 7,
                                  .max_frame = GVS_FRAME_MAX_DEFAULT,
                                  .handshake_timeout_ms = 1000,
                                  .cfg = &cfg};
    struct memconn m = {.data = stream, .len = len};
    struct gvs_session s;
    memset(&s, 0, sizeof(s));
    m.sent = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    s.opts = &o;
    s.plugins = &plugins;
    s.conn = memconn_new(&m);
    s.in = gvs_buf_new(o.max_frame);
    if (m.sent == NULL || s.conn == NULL || s.in == NULL)
        abort();
    int rc = gvsd_handshake(&s);
    if (rc < 0 && strcmp(gvs_errname(rc), "UNKNOWN") == 0)
        abort();
    /* Refused: nothing left open.  Accepted: answered, and what is open
     * is the session's. */
    if (rc < 0 ? s.nopen != 0 || opened != 0
               : s.nopen != opened || gvs_buf_len(m.sent) == 0)
        abort();
    if (gvs_buf_len(m.sent) > 0) {
        struct gvs_frame_hdr h;
        struct gvs_hello_reply rp;
        if (gvs_buf_len(m.sent) < GVS_FRAME_HDR_LEN ||
            gvs_frame_hdr_decode(gvs_buf_ptr(m.sent), GVS_FRAME_MAX_DEFAULT,
                                 &h) != 0 ||
            h.op != GVS_CTL_HELLO || h.flags != GVS_F_REPLY ||
            gvs_buf_consume(m.sent, GVS_FRAME_HDR_LEN) != 0 ||
            gvs_buf_len(m.sent) != h.len ||
            gvs_hello_reply_decode(m.sent, &rp) != 0 || rp.status != rc)
            abort();
    }
    gvsd_session_close_plugins(&s);
    if (opened != 0)
        abort();
    gvs_buf_free(s.in);
    gvs_conn_close(s.conn);
    gvs_buf_free(m.sent);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *rest = data + 1;
    size_t len = size - 1;
    switch (data[0] & 3) {
    case 0:
    case 1:
        codec(rest, len, data[0] & 1);
        break;
    case 2: {
        /* 16 KiB is gvsd's bound on a HELLO: a longer body is refused
         * from its header, which case 3 reaches as well. */
        uint8_t *frame = malloc(GVS_FRAME_HDR_LEN + len);
        struct gvs_frame_hdr h = {.len = (uint32_t)len, .op = GVS_CTL_HELLO,
                                  .id = 1};
        if (frame == NULL)
            abort();
        gvs_frame_hdr_encode(&h, frame);
        if (len > 0)
            memcpy(frame + GVS_FRAME_HDR_LEN, rest, len);
        handshake(frame, GVS_FRAME_HDR_LEN + len);
        free(frame);
        break;
    }
    default:
        handshake(rest, len);
    }
    return 0;
}
