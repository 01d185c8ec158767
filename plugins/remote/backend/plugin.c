/* The remoting layer's backend plugin (docs/remoting.md): the session's
 * layer state, in the worker, for every API plugin of the session. */
#include "gvs/err.h"
#include "gvs/plugin.h"
#include "output.h"
#include "remote_be.h"
#include "remote_be_gen.h"
#include "remote_ops.h"

static const struct gvs_remote_be api = {
    .version = GVS_REMOTE_BE_VERSION,
    .output_flush = remote_be_output_flush,
};

/* A worker serves one session: the layer's state is the process's. */
static int session_open(const struct gvs_host_api *host,
                        struct gvs_session *session, void **state)
{
    /* Without capture the session still works: device printf output then
     * stays in the worker.  Before any CUDA call: CUDA keeps the stdio
     * streams it finds. */
    if (remote_be_output_open(host, session) < 0)
        host->log(GVS_LOG_WARN, "device output will not reach the client");
    *state = NULL;
    return 0;
}

static void session_close(void *state)
{
    (void)state;
    remote_be_output_close();
}

static const void *peer_api(void *state)
{
    (void)state;
    return &api;
}

static const struct gvs_plugin plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = REMOTE_PLUGIN_ID,
    .name = REMOTE_PLUGIN_NAME,
    .table_hash = REMOTE_TABLE_HASH,
    .ops = remote_op_table,
    .session_open = session_open,
    .session_close = session_close,
    .peer_api = peer_api,
};

__attribute__((visibility("default"))) int
gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out)
{
    if (abi != GVS_PLUGIN_ABI)
        return GVS_E_VERSION;
    *out = &plugin;
    return 0;
}
