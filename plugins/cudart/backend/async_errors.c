/* Failures of posted ops, answered by the lane's next synchronizing call,
 * the way CUDA reports a kernel's failure at the next synchronization. */
#include <stdint.h>

#include "be.h"
#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "remote_be.h"

void be_async_error(struct gvs_call *call, cudaError_t e)
{
    struct be_lane *l = be_lane(call);
    if (l != NULL && l->async_error == cudaSuccess)
        l->async_error = e;
}

void cudart_be_posted_failure(struct gvs_call *call, int r)
{
    be_async_error(call, (cudaError_t)r);
}

/* A successful reply whose lane has a posted failure pending becomes
 * that failure, with no result data behind it.  A device reset discards
 * it instead, as it discards every error of the device's context. */
static void report_async_error(struct gvs_call *call)
{
    struct be_lane *l = be_lane(call);
    if (l == NULL || l->async_error == cudaSuccess)
        return;
    if (call->op == CUDART_OP_cudaDeviceReset) {
        l->async_error = cudaSuccess;
        return;
    }
    if (call->noreply || gvs_buf_len(call->out) < sizeof(int32_t))
        return;
    const uint8_t *p = gvs_buf_ptr(call->out);
    int32_t result = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                               (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    if (result != cudaSuccess)
        return;
    gvs_buf_reset(call->out);
    if (gvs_buf_put_i32(call->out, l->async_error) == 0)
        l->async_error = cudaSuccess;
}

void cudart_be_after_blocking(struct gvs_call *call)
{
    const struct be_session *s = call->state;
    if (s != NULL && s->remote != NULL)
        s->remote->output_flush();
    report_async_error(call);
}
