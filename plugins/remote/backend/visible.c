/* The client's CUDA_VISIBLE_DEVICES (remote.api, VISIBLE_DEVICES),
 * composed with the worker's own list (gvsd's `devices`) before CUDA
 * starts in the worker, so that every API plugin sees CUDA's own view of
 * the narrowed set. */
#include <stdlib.h>

#include "apigen_rt.h"
#include "gvs/devices.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "remote_be_gen.h"

/* Request: u8 set, str the value.  Posted: no reply. */
int remote_be_visible_devices(struct gvs_call *call)
{
    static int done;
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t set;
    char *sel = NULL;
    apigen_get_u8(&c, &set);
    if (c.rc == 0)
        c.rc = gvs_buf_get_str(c.get, GVS_DEVICES_MAX_LEN, &sel);
    int rc = apigen_end(&c);
    if (rc == 0 && (set > 1 || done))
        rc = GVS_E_PROTO;
    char *list = NULL;
    if (rc == 0 && set) {
        list = gvs_devices_compose(getenv("CUDA_VISIBLE_DEVICES"), sel);
        if (list == NULL || setenv("CUDA_VISIBLE_DEVICES", list, 1) != 0)
            rc = GVS_E_NOMEM;
    }
    if (rc == 0)
        done = 1;
    gvs_free(list);
    gvs_free(sel);
    return rc;
}
