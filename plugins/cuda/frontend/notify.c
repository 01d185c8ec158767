/* The backend's notifications of the cuda plugin (cuda.api `notify`
 * ops), run on the client's notify thread one at a time, in arrival
 * order. */
#include "call.h"

#include "cuda_ops.h"
#include "gvs/client.h"
#include "gvs_remote.h"

static void dispatch(uint16_t op, struct gvs_buf *body, void *arg)
{
    (void)arg;
    if (op == CUDA_OP_USER_OBJECT_DESTROY)
        gvs_remote_destructor_run(body);
}

int cuda_fe_notify_init(void)
{
    return gvs_client_on_notify(CUDA_PLUGIN_ID, dispatch, NULL);
}
