#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "session.h"

/* The HELLO is small: a larger frame is refused before it is read. */
#define HELLO_FRAME_MAX 16384

int gvsd_hello_reply(struct gvs_conn *c, uint64_t id, int32_t status,
                     const char *message, uint32_t session)
{
    struct gvs_hello_reply r = {
        .status = status, .version = GVS_PROTO_VERSION, .session = session};
    snprintf(r.message, sizeof(r.message), "%s", message);
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

static int check_hello(const struct gvs_session *s,
                       const struct gvs_frame_hdr *h, struct gvs_hello *hello,
                       char *why, size_t len)
{
    if (h->plugin != 0 || h->op != GVS_CTL_HELLO || h->flags != 0)
        return refuse(why, len, GVS_E_PROTO, "first frame must be a HELLO");
    int rc = check_version(s->in, why, len);
    if (rc < 0)
        return rc;
    rc = gvs_hello_decode(s->in, hello);
    if (rc < 0)
        return refuse(why, len, rc, "malformed HELLO (%s)", gvs_strerror(rc));
    for (uint32_t i = 0; i < hello->nplugins; i++) {
        rc = check_plugin(s, hello, i, why, len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int open_plugins(struct gvs_session *s, const struct gvs_hello *hello,
                        char *why, size_t len)
{
    for (uint32_t i = 0; i < hello->nplugins; i++) {
        const struct gvsd_plugin *p =
            gvsd_plugins_find(s->plugins, hello->plugins[i].id);
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

int gvsd_handshake(struct gvs_session *s)
{
    uint32_t id = s->opts->id;
    size_t max = s->opts->max_frame < HELLO_FRAME_MAX ? s->opts->max_frame
                                                      : HELLO_FRAME_MAX;
    struct gvs_frame_hdr h;
    int rc = gvs_conn_set_timeout(s->conn, s->opts->handshake_timeout_ms);
    if (rc == 0)
        rc = gvs_frame_recv(s->conn, max, &h, s->in);
    if (rc < 0) {
        gvs_warn("session %u: handshake failed: %s", id, gvs_strerror(rc));
        return rc;
    }
    struct gvs_hello *hello = gvs_malloc(sizeof(*hello));
    if (hello == NULL) {
        gvs_error("session %u: out of memory", id);
        return GVS_E_NOMEM;
    }
    char why[GVS_NAME_MAX + 1];
    rc = check_hello(s, &h, hello, why, sizeof(why));
    if (rc == 0)
        rc = open_plugins(s, hello, why, sizeof(why));
    int sent = gvsd_hello_reply(s->conn, h.id, rc, rc == 0 ? "" : why, id);
    if (rc < 0) {
        gvs_warn("session %u: handshake refused: %s", id, why);
    } else if (sent < 0) {
        gvs_warn("session %u: handshake reply failed: %s", id,
                 gvs_strerror(sent));
        rc = sent;
    } else {
        gvs_info("session %u: program %s pid %" PRIu32 ", %" PRIu32
                 " plugin(s)",
                 id, hello->program, hello->pid, hello->nplugins);
        rc = gvs_conn_set_timeout(s->conn, 0);
    }
    gvs_free(hello);
    return rc;
}
