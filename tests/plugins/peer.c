/* The test-only "peer" plugin (echo.h): no ops of its own, an interface
 * for the other plugins of a session (host->peer), as the remoting layer
 * offers its own. */
#include "echo.h"
#include "gvs/err.h"
#include "gvs/plugin.h"

static const uint32_t value = PEER_PLUGIN_VALUE;

static int op_nop(struct gvs_call *c)
{
    return gvs_buf_expect_end(c->in);
}

static const struct gvs_op peer_ops[] = {
    {1, 0, "NOP", op_nop},
    GVS_OP_END,
};

static int peer_open(const struct gvs_host_api *host,
                     struct gvs_session *session, void **state)
{
    (void)host, (void)session;
    *state = NULL;
    return 0;
}

static void peer_close(void *state)
{
    (void)state;
}

static const void *peer_api(void *state)
{
    (void)state;
    return &value;
}

static const struct gvs_plugin peer_plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = PEER_PLUGIN_ID,
    .name = PEER_PLUGIN_NAME,
    .table_hash = 1,
    .ops = peer_ops,
    .session_open = peer_open,
    .session_close = peer_close,
    .peer_api = peer_api,
};

__attribute__((visibility("default"))) int
gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out)
{
    if (abi != GVS_PLUGIN_ABI)
        return GVS_E_VERSION;
    *out = &peer_plugin;
    return 0;
}
