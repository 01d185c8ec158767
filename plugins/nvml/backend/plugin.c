/* The NVML backend plugin, gvs-nvml.so (be.h). */
#include "be.h"

#include "gvs/err.h"
#include "nvml_ops.h"

const struct gvs_host_api *nvml_be_host;
const struct gvs_remote_be *nvml_be_remote;

/* NVML is loaded at the session's first NVML call, not here: a session
 * that never calls NVML never loads it. */
static int session_open(const struct gvs_host_api *host,
                        struct gvs_session *session, void **state)
{
    /* The layer's backend, opened before us (docs/remoting.md): the
     * session's memory use.  A client without it, or a layer of another
     * version, is refused. */
    const struct gvs_remote_be *r = gvs_remote_be_of(host, session);
    if (r == NULL)
        return GVS_E_PROTO;
    nvml_be_host = host;
    nvml_be_remote = r;
    *state = NULL;
    return 0;
}

static void session_close(void *state)
{
    (void)state;
    nvml_be_unload();
}

static const struct gvs_plugin plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = NVML_PLUGIN_ID,
    .name = NVML_PLUGIN_NAME,
    .table_hash = NVML_TABLE_HASH,
    .ops = nvml_op_table,
    .session_open = session_open,
    .session_close = session_close,
};

__attribute__((visibility("default"))) int
gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out)
{
    if (abi != GVS_PLUGIN_ABI)
        return GVS_E_VERSION;
    *out = &plugin;
    return 0;
}
