/* Failures of posted ops, answered by the lane's next synchronizing call,
 * the way CUDA reports a kernel's failure at the next synchronization. */
#include <stdint.h>

#include "be.h"
#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "remote_be.h"

void be_async_error(struct gvs_call *call, cudaError_t e)
{
    be_remote->latch(call, CUDART_PLUGIN_ID, e);
}

void cudart_be_posted_failure(struct gvs_call *call, int r)
{
    be_async_error(call, (cudaError_t)r);
}

/* A device reset discards a posted failure, as it discards every error
 * of the device's context.  A HOSTMEM_SHARE's reply is the layer's (a
 * failure there only means memory of the client's own): a posted failure
 * waits for the lane's next synchronizing call. */
void cudart_be_after_blocking(struct gvs_call *call)
{
    be_remote->output_flush();
    be_lane_settled(call);
    if (call->op == CUDART_OP_cudaDeviceReset)
        be_remote->latch_clear(call);
    else if (call->op != CUDART_OP_HOSTMEM_SHARE)
        be_remote->report_latched(call, CUDART_PLUGIN_ID, cudaSuccess);
}
