#include <inttypes.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "session.h"

static int reply(struct gvsd_session *s, const struct gvs_frame_hdr *req,
                 const struct gvs_buf *body)
{
    struct gvs_frame_hdr h = {.plugin = req->plugin,
                              .op = req->op,
                              .flags = GVS_F_REPLY,
                              .id = req->id};
    int rc = gvs_frame_send(s->conn, &h, body);
    if (rc < 0)
        gvs_warn("session %u: sending reply %" PRIu64 " failed: %s",
                 s->opts->id, req->id, gvs_strerror(rc));
    return rc;
}

static int control(struct gvsd_session *s, const struct gvs_frame_hdr *h)
{
    uint32_t id = s->opts->id;
    switch (h->op) {
    case GVS_CTL_PING:
        if (gvs_buf_len(s->in) != 0) {
            gvs_warn("session %u: PING with a body", id);
            return GVS_E_PROTO;
        }
        return h->flags & GVS_F_NOREPLY ? 0 : reply(s, h, NULL);
    case GVS_CTL_BYE:
        return GVSD_SESSION_END;
    default:
        gvs_warn("session %u: unexpected control op %u", id, (unsigned)h->op);
        return GVS_E_PROTO;
    }
}

int gvsd_dispatch(struct gvsd_session *s, const struct gvs_frame_hdr *h)
{
    uint32_t id = s->opts->id;
    if (h->flags & GVS_F_REPLY) {
        gvs_warn("session %u: request %" PRIu64 " is flagged as a reply", id,
                 h->id);
        return GVS_E_PROTO;
    }
    if (h->plugin == 0)
        return control(s, h);
    int i = 0;
    while (i < s->nopen && s->open[i]->desc->id != h->plugin)
        i++;
    if (i == s->nopen) {
        gvs_warn("session %u: request for plugin %u, not in this session", id,
                 (unsigned)h->plugin);
        return GVS_E_NOENT;
    }
    const struct gvsd_plugin *p = s->open[i];
    const struct gvs_op *op = gvsd_plugin_op(p, h->op);
    if (op == NULL) {
        gvs_warn("session %u: plugin %s has no op %u", id, p->desc->name,
                 (unsigned)h->op);
        return GVS_E_NOENT;
    }
    int noreply = (h->flags & GVS_F_NOREPLY) != 0;
    if (noreply && !(op->flags & GVS_OP_ASYNC_OK)) {
        gvs_warn("session %u: %s/%s cannot be sent without a reply", id,
                 p->desc->name, op->name);
        return GVS_E_PROTO;
    }
    gvs_buf_reset(s->out);
    struct gvs_call call = {.in = s->in,
                            .out = s->out,
                            .state = s->state[i],
                            .id = h->id,
                            .noreply = noreply};
    s->calls++;
    int rc = op->fn(&call);
    if (rc < 0) {
        gvs_warn("session %u: %s/%s: malformed request (%s)", id,
                 p->desc->name, op->name, gvs_strerror(rc));
        return rc;
    }
    return noreply ? 0 : reply(s, h, s->out);
}
