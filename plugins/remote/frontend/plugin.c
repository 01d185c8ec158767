/* The remoting layer's frontend: registers the `remote` plugin before
 * any API frontend's first call (a dependency's constructors run before
 * those of the libraries that need it), so that every session of the
 * process opens the layer. */
#include "gvs/client.h"
#include "remote_fe.h"
#include "remote_ops.h"

__attribute__((constructor)) static void remote_fe_register(void)
{
    static const struct gvs_client_plugin plugin = {
        .id = REMOTE_PLUGIN_ID,
        .name = REMOTE_PLUGIN_NAME,
        .table_hash = REMOTE_TABLE_HASH,
    };
    /* A failure (a full plugin table) surfaces at the handshake, which
     * reports it. */
    if (gvs_client_register(&plugin) == 0) {
        (void)remote_fe_output_init();
        (void)remote_fe_callbacks_init();
    }
}
