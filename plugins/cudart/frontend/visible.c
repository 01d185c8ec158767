/* The client's CUDA_VISIBLE_DEVICES narrows the backend's devices: the
 * worker composes it with its own list before CUDA starts, so that every
 * device ordinal, peer and attribute is CUDA's own view of the narrowed
 * set (docs/cudart.md). */
#include "devices.h"

#include <stdlib.h>
#include <string.h>

#include "cudart_ops.h"
#include "gvs/buf.h"
#include "gvs/err.h"

/* Longer values are not device lists; they are sent empty, which shows
 * no device, as CUDA shows none for a list it cannot read. */
#define VISIBLE_MAX 4096u

/* Request: u8 set, str value (empty when not set). */
int fe_visible_devices_post_locked(struct gvs_client *cl)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    struct gvs_buf *b = gvs_buf_new(VISIBLE_MAX + 16);
    if (b == NULL)
        return GVS_E_NOMEM;
    int rc = gvs_buf_put_u8(b, v != NULL);
    if (rc == 0)
        rc = gvs_buf_put_str(b, v != NULL && strlen(v) <= VISIBLE_MAX ? v : "");
    struct iovec iov = {(void *)gvs_buf_ptr(b), gvs_buf_len(b)};
    if (rc == 0)
        rc = fe_send_locked(cl, CUDART_OP_VISIBLE_DEVICES, 0, 1, &iov, 1,
                            NULL);
    gvs_buf_free(b);
    return rc;
}
