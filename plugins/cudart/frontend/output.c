/* DEVICE_OUTPUT notifications (backend/output.h): the worker's CUDA
 * runtime wrote device printf output or an assert message; it goes to
 * this process's stdout or stderr as the real runtime would write it:
 * through the stdio streams, so that it lands in order with what the
 * program printed itself, and stdout flushed after each piece. */
#include "devices.h"

#include <stdio.h>

#include "cudart_ops.h"

void fe_device_output(struct gvs_buf *body)
{
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

static void on_output(uint16_t op, struct gvs_buf *body, void *arg)
{
    (void)op, (void)arg;
    fe_device_output(body);
}

/* On the receiver thread: the output a synchronizing call produced is
 * written before its reply, which follows it on the connection, lets the
 * call return.  Registering the plugin here too (an identical
 * registration is accepted) makes the constructors' order irrelevant. */
__attribute__((constructor)) static void output_init(void)
{
    static const struct gvs_client_plugin plugin = {
        .id = CUDART_PLUGIN_ID,
        .name = CUDART_PLUGIN_NAME,
        .table_hash = CUDART_TABLE_HASH,
    };
    if (gvs_client_register(&plugin) == 0)
        (void)gvs_client_on_notify_inline(CUDART_PLUGIN_ID,
                                          CUDART_OP_DEVICE_OUTPUT, on_output,
                                          NULL);
}
