/* What the layer posts ahead of an API's request in the same lane
 * (gvs_remote.h): image pieces, the thread's current context. */
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs_remote.h"
#include "remote_fe.h"
#include "remote_ops.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int gvs_remote_stage_locked(struct gvs_client *cl,
                                   const uint8_t *image, size_t len)
{
    struct gvs_buf *hdr = gvs_buf_new(16);
    int rc = hdr != NULL ? 0 : GVS_E_NOMEM;
    for (size_t off = 0; rc == 0 && off < len; off += GVS_BULK_CHUNK) {
        size_t n = len - off < GVS_BULK_CHUNK ? len - off : GVS_BULK_CHUNK;
        gvs_buf_reset(hdr);
        rc = gvs_buf_put_u8(hdr, off == 0);
        if (rc == 0)
            rc = gvs_buf_put_u32(hdr, (uint32_t)n);
        struct iovec iov[2] = {
            {(void *)gvs_buf_ptr(hdr), gvs_buf_len(hdr)},
            {(void *)(image + off), n},
        };
        if (rc == 0)
            rc = gvs_client_send_locked(cl, REMOTE_PLUGIN_ID, REMOTE_OP_STAGE,
                                        GVS_F_NOREPLY, iov, 2, NULL);
    }
    gvs_buf_free(hdr);
    return rc;
}

EXPORT int gvs_remote_set_context_locked(struct gvs_client *cl, uint64_t ctx)
{
    struct gvs_buf *b = gvs_buf_new(sizeof(uint64_t));
    if (b == NULL)
        return GVS_E_NOMEM;
    remote_fe_lane_moved();
    int rc = gvs_buf_put_u64(b, ctx);
    if (rc == 0) {
        struct iovec iov = {(void *)gvs_buf_ptr(b), gvs_buf_len(b)};
        rc = gvs_client_send_locked(cl, REMOTE_PLUGIN_ID,
                                    REMOTE_OP_SET_CONTEXT, GVS_F_NOREPLY,
                                    &iov, 1, NULL);
    }
    gvs_buf_free(b);
    return rc;
}
