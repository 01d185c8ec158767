/*
 * The backend's notifications (GVS_F_NOTIFY frames of the cudart plugin),
 * handed to the file that serves each op.  They run on the client's
 * notify thread, one at a time, in arrival order.
 */
#include "devices.h"
#include "graphs.h"

#include "cudart_ops.h"

static const struct gvs_client_plugin plugin = {
    .id = CUDART_PLUGIN_ID,
    .name = CUDART_PLUGIN_NAME,
    .table_hash = CUDART_TABLE_HASH,
};

static const struct {
    uint16_t op;
    void (*fn)(struct gvs_buf *body);
} handlers[] = {
    {CUDART_OP_USER_OBJECT_DESTROY, fe_user_object_destroy},
    {CUDART_OP_ASYNC_NOTIFICATION, fe_async_notification},
    {CUDART_OP_LOGS_MESSAGE, fe_logs_message},
};

static void dispatch(uint16_t op, struct gvs_buf *body, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
        if (handlers[i].op == op) {
            handlers[i].fn(body);
            return;
        }
}

/* The handler must be set before the first connection, and only for a
 * registered plugin: registering here too (an identical registration is
 * accepted) makes the order of the constructors irrelevant. */
__attribute__((constructor)) static void notify_init(void)
{
    if (gvs_client_register(&plugin) == 0)
        (void)gvs_client_on_notify(CUDART_PLUGIN_ID, dispatch, NULL);
}
