/* Failures of posted ops, answered by the lane's next synchronizing
 * call, the way CUDA reports a kernel's failure at the next
 * synchronization (remote_be.h). */
#include "gvs/buf.h"
#include "state.h"

void remote_be_latch(struct gvs_call *call, uint16_t plugin, int32_t code)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (l != NULL && l->latched_plugin == 0) {
        l->latched_plugin = plugin;
        l->latched = code;
    }
}

void remote_be_latch_clear(struct gvs_call *call)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (l != NULL)
        l->latched_plugin = 0;
}

int remote_be_latched(struct gvs_call *call, uint16_t plugin)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    return l != NULL && l->latched_plugin == plugin;
}

int remote_be_reply_result(const struct gvs_call *call, int32_t *result)
{
    *result = 0;
    if (call->noreply || gvs_buf_len(call->out) < sizeof(int32_t))
        return 0;
    const uint8_t *p = gvs_buf_ptr(call->out);
    *result = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                        (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    return 1;
}

void remote_be_report_latched(struct gvs_call *call, uint16_t plugin,
                              int32_t success)
{
    struct gvs_remote_lane *l = remote_be_lane(call);
    int32_t result;
    if (l == NULL || l->latched_plugin != plugin ||
        !remote_be_reply_result(call, &result) || result != success)
        return;
    /* The reply's data is dropped with its success; a tail with it. */
    gvs_buf_reset(call->out);
    call->out_tail = NULL;
    call->out_tail_len = 0;
    if (gvs_buf_put_i32(call->out, l->latched) == 0)
        l->latched_plugin = 0;
}
