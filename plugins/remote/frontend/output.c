/* DEVICE_OUTPUT notifications (backend/output.h): the worker's CUDA wrote
 * device printf output or an assert message; it goes to this process's
 * stdout or stderr as the real runtime would write it: through the stdio
 * streams, so that it lands in order with what the program printed
 * itself, and stdout flushed after each piece. */
#include <stdio.h>

#include "gvs/client.h"
#include "remote_fe.h"
#include "remote_ops.h"

/* u8 fd, blob bytes; anything else is ignored. */
static void on_output(uint16_t op, struct gvs_buf *body, void *arg)
{
    (void)op, (void)arg;
    const uint8_t *bytes;
    size_t len;
    uint8_t fd;
    if (gvs_buf_get_u8(body, &fd) < 0 ||
        gvs_buf_get_blob(body, &bytes, &len) < 0 ||
        gvs_buf_expect_end(body) < 0 || (fd != 1 && fd != 2))
        return;
    FILE *f = fd == 1 ? stdout : stderr;
    fwrite(bytes, 1, len, f);
    fflush(f);
}

/* On the receiver thread: the output a synchronizing call produced is
 * written before its reply, which follows it on the connection, lets the
 * call return. */
int remote_fe_output_init(void)
{
    return gvs_client_on_notify_inline(REMOTE_PLUGIN_ID,
                                       REMOTE_OP_DEVICE_OUTPUT, on_output,
                                       NULL);
}
