#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gvs/auth.h"
#include "gvs/err.h"
#include "gvs/spin.h"
#include "internal.h"

/* Room for the largest HELLO or HELLO reply. */
#define HANDSHAKE_BUF_MAX 8192

/* Copies s into out, cut to fit: a long program name is still useful. */
static void copy_cut(char *out, size_t len, const char *s)
{
    size_t n = strnlen(s, len - 1);
    memcpy(out, s, n);
    out[n] = '\0';
}

/* argv[0]'s base name, else the kernel's (truncated) comm. */
static void program_name(char *out, size_t len)
{
    char tmp[4096];
    snprintf(out, len, "?");
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f != NULL) {
        size_t n = fread(tmp, 1, sizeof(tmp) - 1, f);
        fclose(f);
        tmp[n] = '\0';
        if (tmp[0] != '\0') {
            const char *slash = strrchr(tmp, '/');
            copy_cut(out, len, slash != NULL ? slash + 1 : tmp);
            return;
        }
    }
    f = fopen("/proc/self/comm", "r");
    if (f != NULL) {
        if (fgets(tmp, sizeof(tmp), f) != NULL) {
            tmp[strcspn(tmp, "\n")] = '\0';
            copy_cut(out, len, tmp);
        }
        fclose(f);
    }
}

/* Sends hello and reads the reply, within what is left of the
 * connection's deadline.  A server that refused us at once (a peer it
 * does not allow) may have closed before our HELLO left: its reply may
 * still wait to be read, and says more than the failed send. */
static int round_trip(struct gvs_conn *c, const struct gvs_hello *hello,
                      struct gvs_buf *b,
                      struct gvs_hello_reply *r, char *why, size_t len)
{
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO, .id = CLIENT_HELLO_ID};
    gvs_buf_reset(b);
    int sent = gvs_hello_encode(hello, b);
    if (sent == 0)
        sent = gvs_frame_send(c, &h, b);
    int rc = sent == 0 || sent == GVS_E_CLOSED || sent == GVS_E_IO ? 0 : sent;
    if (rc == 0)
        rc = gvs_frame_recv(c, HANDSHAKE_BUF_MAX, &h, b);
    if (rc < 0) {
        rc = sent < 0 ? sent : rc;
        snprintf(why, len, "%s", gvs_strerror(rc));
        return rc;
    }
    if (!(h.flags & GVS_F_REPLY) || h.plugin != 0 || h.op != GVS_CTL_HELLO ||
        h.id != CLIENT_HELLO_ID) {
        snprintf(why, len, "unexpected reply to HELLO");
        return GVS_E_PROTO;
    }
    rc = gvs_hello_reply_decode(b, r);
    if (rc < 0) {
        snprintf(why, len, "bad HELLO reply: %s", gvs_strerror(rc));
        return rc;
    }
    if (r->status < 0) {
        snprintf(why, len, "%s", r->message[0] != '\0'
                                     ? r->message
                                     : gvs_strerror(r->status));
        return r->status;
    }
    return 0;
}

/* Answers a challenge: the same HELLO again, with a proof of the token
 * over the server's nonce, ours, and the HELLO's fields (gvs/auth.h).
 * Without a token it goes without proof, for the server to refuse and
 * log, and to tell us why. */
static int prove(struct gvs_hello *hello, const char *token,
                 const uint8_t server_nonce[GVS_AUTH_NONCE_LEN],
                 struct gvs_buf *b, char *why, size_t len)
{
    hello->auth = GVS_HELLO_AUTH_NONE;
    if (token[0] == '\0')
        return 0;
    gvs_buf_reset(b);
    int rc = gvs_auth_nonce(hello->client_nonce);
    if (rc == 0)
        rc = gvs_hello_encode(hello, b);
    /* The transcript: the body before its auth field (one byte here). */
    if (rc == 0)
        rc = gvs_auth_mac(token, server_nonce, hello->client_nonce,
                          gvs_buf_ptr(b), gvs_buf_len(b) - 1, hello->mac);
    if (rc < 0) {
        snprintf(why, len, "cannot answer the token challenge: %s",
                 gvs_strerror(rc));
        return rc;
    }
    hello->auth = GVS_HELLO_AUTH_HMAC;
    return 0;
}

static int exchange(struct gvs_conn *c, const char *token, struct gvs_buf *b,
                    char *why, size_t len)
{
    struct gvs_hello hello;
    struct gvs_hello_reply r;
    memset(&hello, 0, sizeof(hello));
    hello.version = GVS_PROTO_VERSION;
    hello.pid = (uint32_t)getpid();
    program_name(hello.program, sizeof(hello.program));
    client_registry_fill(&hello);

    int rc = round_trip(c, &hello, b, &r, why, len);
    if (rc == 0 && r.status == GVS_HELLO_CHALLENGE) {
        rc = prove(&hello, token, r.nonce, b, why, len);
        if (rc == 0)
            rc = round_trip(c, &hello, b, &r, why, len);
        /* A server asks once. */
        if (rc == 0 && r.status != 0) {
            snprintf(why, len, "challenged twice");
            rc = GVS_E_PROTO;
        }
    }
    explicit_bzero(hello.mac, sizeof(hello.mac));
    return rc;
}

int client_handshake(struct gvs_conn *c, const struct client_settings *s,
                     char *why, size_t len)
{
    struct gvs_buf *b = gvs_buf_new(HANDSHAKE_BUF_MAX);
    if (b == NULL) {
        snprintf(why, len, "%s", gvs_strerror(GVS_E_NOMEM));
        return GVS_E_NOMEM;
    }
    /* The timeout bounds the whole exchange, however slowly the server
     * answers. */
    unsigned ms = s->handshake_timeout_ms;
    int rc = gvs_conn_set_deadline(
        c, ms != 0 ? gvs_now_ns() + (long long)ms * 1000000 : 0);
    if (rc == 0)
        rc = exchange(c, s->token, b, why, len);
    else
        snprintf(why, len, "%s", gvs_strerror(rc));
    if (rc == 0)
        rc = gvs_conn_set_deadline(c, 0);
    gvs_buf_free(b);
    return rc;
}
