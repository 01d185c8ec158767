#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gvs/auth.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "gvs/spin.h"
#include "reasons.h"
#include "session.h"
#include "stats.h"

/* The HELLO is small: a larger frame is refused before it is read. */
#define HELLO_FRAME_MAX 16384

/* nonce: the challenge's, with status GVS_HELLO_CHALLENGE. */
static int send_reply(struct gvs_conn *c, uint64_t id, int32_t status,
                      const char *message, uint32_t session,
                      const uint8_t *nonce)
{
    struct gvs_hello_reply r = {
        .status = status, .version = GVS_PROTO_VERSION, .session = session};
    snprintf(r.message, sizeof(r.message), "%s", message);
    if (nonce != NULL)
        memcpy(r.nonce, nonce, sizeof(r.nonce));
    struct gvs_buf *b = gvs_buf_new(HELLO_FRAME_MAX);
    if (b == NULL)
        return GVS_E_NOMEM;
    struct gvs_frame_hdr h = {
        .plugin = 0, .op = GVS_CTL_HELLO, .flags = GVS_F_REPLY, .id = id};
    int rc = gvs_hello_reply_encode(&r, b);
    if (rc == 0)
        rc = gvs_frame_send(c, &h, b);
    gvs_buf_free(b);
    return rc;
}

int gvsd_hello_reply(struct gvs_conn *c, uint64_t id, int32_t status,
                     const char *message, uint32_t session)
{
    return send_reply(c, id, status, message, session, NULL);
}

__attribute__((format(printf, 4, 5))) static int refuse(char *why,
                                                        size_t len, int rc,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return rc;
}

/* The version comes first in the body; it is checked before the rest is
 * decoded, whose layout another version may change. */
static int check_version(const struct gvs_buf *in, char *why, size_t len)
{
    struct gvs_buf *v = gvs_buf_view(gvs_buf_ptr(in), gvs_buf_len(in));
    uint32_t version;
    if (v == NULL)
        return GVS_E_NOMEM;
    int rc = gvs_buf_get_u32(v, &version);
    gvs_buf_free(v);
    if (rc == 0 && version != GVS_PROTO_VERSION)
        return refuse(why, len, GVS_E_VERSION,
                      "protocol version %" PRIu32
                      " not supported (server speaks %u)",
                      version, GVS_PROTO_VERSION);
    return 0;
}

static int check_plugin(const struct gvs_session *s,
                        const struct gvs_hello *hello, uint32_t i,
                        char *why, size_t len)
{
    const struct gvs_hello_plugin *hp = &hello->plugins[i];
    for (uint32_t j = 0; j < i; j++)
        if (hello->plugins[j].id == hp->id)
            return refuse(why, len, GVS_E_PROTO, "plugin id %u named twice",
                          (unsigned)hp->id);
    const struct gvsd_plugin *p = gvsd_plugins_find(s->plugins, hp->id);
    if (p == NULL)
        return refuse(why, len, GVS_E_NOENT,
                      "plugin %s (id %u) is not loaded", hp->name,
                      (unsigned)hp->id);
    if (strcmp(p->desc->name, hp->name) != 0)
        return refuse(why, len, GVS_E_MISMATCH,
                      "plugin id %u is %s here, not %s", (unsigned)hp->id,
                      p->desc->name, hp->name);
    if (p->desc->table_hash != hp->table_hash)
        return refuse(why, len, GVS_E_MISMATCH,
                      "plugin %s: operation table mismatch (server %016" PRIx64
                      ", client %016" PRIx64 ")",
                      hp->name, p->desc->table_hash, hp->table_hash);
    return 0;
}

/* Receives the next HELLO frame, within what is left of the handshake's
 * deadline (gvs_conn_set_deadline). */
static int recv_hello(struct gvs_session *s, struct gvs_frame_hdr *h)
{
    size_t max = s->opts->max_frame < HELLO_FRAME_MAX ? s->opts->max_frame
                                                      : HELLO_FRAME_MAX;
    return gvs_frame_recv(s->conn, max, h, s->in);
}

/* Checks and decodes a HELLO frame; *transcript and *tlen are the body
 * before its auth field, which a proof covers. */
static int decode_hello(const struct gvs_session *s,
                        const struct gvs_frame_hdr *h, struct gvs_hello *hello,
                        const uint8_t **transcript, size_t *tlen, char *why,
                        size_t len)
{
    if (h->plugin != 0 || h->op != GVS_CTL_HELLO || h->flags != 0)
        return refuse(why, len, GVS_E_PROTO, "first frame must be a HELLO");
    if (h->id != 0)
        return refuse(why, len, GVS_E_PROTO,
                      "a HELLO has request id 0, not %" PRIu64, h->id);
    int rc = check_version(s->in, why, len);
    if (rc < 0)
        return rc;
    *transcript = gvs_buf_ptr(s->in);
    *tlen = gvs_buf_len(s->in);
    rc = gvs_hello_decode(s->in, hello);
    if (rc < 0)
        return refuse(why, len, rc, "malformed HELLO (%s)", gvs_strerror(rc));
    *tlen -= hello->auth == GVS_HELLO_AUTH_HMAC ? GVS_HELLO_PROOF_LEN : 1;
    return 0;
}

static int check_plugins(const struct gvs_session *s,
                         const struct gvs_hello *hello, char *why, size_t len)
{
    for (uint32_t i = 0; i < hello->nplugins; i++) {
        int rc = check_plugin(s, hello, i, why, len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* With tokens configured, the first HELLO is answered with a challenge
 * (a fresh nonce) and the session is decided by the second, which must
 * carry a proof made with one of the tokens (gvs/auth.h).  Nothing the
 * first HELLO names is looked at: a client that has not proved a token
 * learns nothing of the plugins.  The client's identity and quota come
 * from the token it proved. */
static int authenticate(struct gvs_session *s, struct gvs_frame_hdr *h, struct gvs_hello *hello,
                        const uint8_t **transcript, size_t *tlen, char *why,
                        size_t len)
{
    const struct gvs_config *cfg = s->opts->cfg;
    uint8_t nonce[GVS_AUTH_NONCE_LEN];
    if (hello->auth != GVS_HELLO_AUTH_NONE)
        return refuse(why, len, GVS_E_PROTO, "token proof before a challenge");
    int rc = gvs_auth_nonce(nonce);
    if (rc < 0)
        return refuse(why, len, rc, "cannot make a challenge (%s)",
                      gvs_strerror(rc));
    rc = send_reply(s->conn, h->id, GVS_HELLO_CHALLENGE, "token required",
                    s->opts->id, nonce);
    if (rc == 0)
        rc = recv_hello(s, h);
    if (rc < 0)
        return refuse(why, len, rc, "no answer to the challenge (%s)",
                      gvs_strerror(rc));
    rc = decode_hello(s, h, hello, transcript, tlen, why, len);
    if (rc < 0)
        return rc;
    if (hello->auth != GVS_HELLO_AUTH_HMAC)
        return refuse(why, len, GVS_E_DENIED,
                      "this server requires a token (set GVS_TOKEN)");
    int i = gvs_auth_find_token(cfg, nonce, hello->client_nonce, *transcript,
                                *tlen, hello->mac);
    if (i == GVS_E_DENIED)
        return refuse(why, len, i, "authentication failed: no token matches");
    if (i < 0)
        return refuse(why, len, i, "cannot check the token (%s)",
                      gvs_strerror(i));
    gvs_auth_token_identity(cfg, i, s->info.identity,
                            sizeof(s->info.identity));
    if (cfg->tokens[i].quota != 0)
        s->info.memory_quota = cfg->tokens[i].quota;
    return 0;
}

/* Plugins that offer their peers an interface (the remoting layer) are
 * opened first, so that the others find it from their session_open. */
static int open_plugins(struct gvs_session *s, const struct gvs_hello *hello,
                        char *why, size_t len)
{
    for (uint32_t k = 0; k < 2 * hello->nplugins; k++) {
        uint32_t i = k % hello->nplugins;
        const struct gvsd_plugin *p =
            gvsd_plugins_find(s->plugins, hello->plugins[i].id);
        if ((k < hello->nplugins) != (p->desc->peer_api != NULL))
            continue;
        void *state = NULL;
        int rc = p->desc->session_open(p->host, s, &state);
        if (rc < 0) {
            gvsd_session_close_plugins(s);
            return refuse(why, len, rc, "plugin %s: cannot open a session (%s)",
                          p->desc->name, gvs_strerror(rc));
        }
        s->open[s->nopen] = p;
        s->state[s->nopen] = state;
        s->nopen++;
    }
    return 0;
}

void gvsd_session_close_plugins(struct gvs_session *s)
{
    while (s->nopen > 0) {
        s->nopen--;
        s->open[s->nopen]->desc->session_close(s->state[s->nopen]);
    }
}

/* The connection becomes one of the sessions, if there is room: while
 * it was in its handshake it did not count (gvsd_stats_publish). */
static int join_sessions(struct gvs_session *s, char *why, size_t len)
{
    int max = s->opts->cfg != NULL ? s->opts->cfg->max_sessions : 0;
    int rc = gvsd_stats_publish(&s->info, max);
    if (rc == GVS_E_RANGE)
        return refuse(why, len, rc, "too many sessions (max_sessions %d)",
                      max);
    if (rc < 0)
        return refuse(why, len, rc, "cannot join the sessions (%s)",
                      gvs_strerror(rc));
    return 0;
}

/* The HELLO exchange up to the plugins' opening.  The handshake timeout
 * bounds it as a whole, from the connection's acceptance (the tls
 * handshake included, which the first receive runs) to the last frame of
 * the proof, however slowly the client sends.  On failure why is set,
 * except for a transport failure (*frame 0: nothing to answer). */
static int exchange(struct gvs_session *s, struct gvs_frame_hdr *h,
                    struct gvs_hello *hello, int *frame, char *why,
                    size_t len)
{
    unsigned ms = s->opts->handshake_timeout_ms;
    const uint8_t *transcript;
    size_t tlen;
    *frame = 0;
    int rc = gvs_conn_set_deadline(
        s->conn, ms != 0 ? s->opts->accepted_ns + (long long)ms * 1000000 : 0);
    if (rc == 0)
        rc = recv_hello(s, h);
    if (rc < 0)
        return refuse(why, len, rc, "%s", gvs_strerror(rc));
    *frame = 1;
    rc = decode_hello(s, h, hello, &transcript, &tlen, why, len);
    if (rc == 0 && s->opts->cfg != NULL && s->opts->cfg->ntokens > 0)
        rc = authenticate(s, h, hello, &transcript, &tlen, why, len);
    else if (rc == 0 && hello->auth != GVS_HELLO_AUTH_NONE)
        rc = refuse(why, len, GVS_E_PROTO, "token proof before a challenge");
    if (rc == 0)
        rc = check_plugins(s, hello, why, len);
    if (rc == 0)
        rc = join_sessions(s, why, len);
    if (rc == 0)
        rc = open_plugins(s, hello, why, len);
    return rc;
}

/* The counted reason of a failed handshake, from its code: each check
 * above fails with a code of its own kind. */
static enum gvsd_refusal refusal_of(int rc)
{
    switch (rc) {
    case GVS_E_TIMEOUT:
        return GVSD_REFUSED_TIMEOUT;
    case GVS_E_CLOSED:
    case GVS_E_IO:
        return GVSD_REFUSED_GONE;
    case GVS_E_TLS:
        return GVSD_REFUSED_TLS;
    case GVS_E_VERSION:
        return GVSD_REFUSED_VERSION;
    case GVS_E_DENIED:
        return GVSD_REFUSED_TOKEN;
    case GVS_E_NOENT:
    case GVS_E_MISMATCH:
        return GVSD_REFUSED_PLUGIN;
    case GVS_E_RANGE:
        return GVSD_REFUSED_MAX_SESSIONS;
    case GVS_E_NOMEM:
        return GVSD_REFUSED_INTERNAL;
    default:
        return GVSD_REFUSED_BAD_HELLO;
    }
}

int gvsd_handshake(struct gvs_session *s)
{
    uint32_t id = s->opts->id;
    struct gvs_hello *hello = gvs_malloc(sizeof(*hello));
    if (hello == NULL) {
        gvs_error("session %u: out of memory", id);
        return GVS_E_NOMEM;
    }
    struct gvs_frame_hdr h;
    char why[GVS_NAME_MAX + 1];
    int frame;
    int rc = exchange(s, &h, hello, &frame, why, sizeof(why));
    /* Before a frame came there is nobody to answer, and nothing but
     * the transport's error to say. */
    int sent = 0;
    if (frame)
        sent = gvsd_hello_reply(s->conn, h.id, rc, rc == 0 ? "" : why, id);
    if (!frame) {
        gvs_warn("session %u: handshake failed: %s", id, why);
        gvsd_count_refusal(refusal_of(rc));
    } else if (rc < 0) {
        gvs_warn("session %u: handshake refused: %s (peer %s)", id, why,
                 s->info.identity);
        gvsd_count_refusal(refusal_of(rc));
    } else if (sent < 0) {
        gvs_warn("session %u: handshake reply failed: %s", id,
                 gvs_strerror(sent));
        gvsd_count_refusal(GVSD_REFUSED_GONE);
        rc = sent;
    } else {
        gvs_info("session %u: %s: program %s pid %" PRIu32 ", %" PRIu32
                 " plugin(s)",
                 id, s->info.identity, hello->program, hello->pid,
                 hello->nplugins);
        rc = gvs_conn_set_deadline(s->conn, 0);
    }
    explicit_bzero(hello, sizeof(*hello));
    gvs_free(hello);
    return rc;
}
