/* Module images sent in pieces ahead of the load that takes them
 * (remote.api, STAGE): an image may be larger than a request. */
#include <string.h>

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "remote_be_gen.h"
#include "state.h"

/* Request: u8 first, blob piece.  Posted: no reply. */
int remote_be_stage(struct gvs_call *call)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t first;
    const uint8_t *piece;
    size_t len;
    apigen_get_u8(&c, &first);
    apigen_get_blob(&c, &piece, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (first > 1)
        return GVS_E_PROTO;
    if (l == NULL)
        return GVS_E_NOMEM;
    if (first)
        l->stage_len = 0;
    if (len > GVS_BUF_MAX_CEILING - l->stage_len)
        return GVS_E_TOOBIG;
    uint8_t *p = gvs_realloc(l->stage, l->stage_len + len + 1);
    if (p == NULL)
        return GVS_E_NOMEM;
    memcpy(p + l->stage_len, piece, len);
    l->stage = p;
    l->stage_len += len;
    return 0;
}

int remote_be_take_stage(struct gvs_call *call, uint8_t **image, size_t *len)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (l == NULL)
        return GVS_E_NOMEM;
    if (l->stage == NULL)
        return GVS_E_PROTO;
    *image = l->stage;
    *len = l->stage_len;
    (*image)[*len] = 0;
    l->stage = NULL;
    l->stage_len = 0;
    return 0;
}
