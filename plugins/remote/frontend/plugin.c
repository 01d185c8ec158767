/* The remoting layer's frontend: registers the `remote` plugin before
 * any API frontend's first call (a dependency's constructors run before
 * those of the libraries that need it), so that every session of the
 * process opens the layer.
 *
 * It registers NVML's too: a session's plugins are fixed at its
 * handshake, and frameworks load NVML after their CUDA session began
 * (PyTorch at its first device count), when the NVML frontend's own
 * registration comes too late.  Its backend opens for nothing and loads
 * NVML at the session's first NVML call. */
#include "gvs/client.h"
#include "nvml_ops.h"
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
    static const struct gvs_client_plugin nvml = {
        .id = NVML_PLUGIN_ID,
        .name = NVML_PLUGIN_NAME,
        .table_hash = NVML_TABLE_HASH,
    };
    if (gvs_client_register(&plugin) == 0) {
        (void)remote_fe_output_init();
        (void)remote_fe_callbacks_init();
        (void)remote_fe_posted_init();
    }
    (void)gvs_client_register(&nvml);
}
