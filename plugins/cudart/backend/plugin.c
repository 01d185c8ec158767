#include "be.h"

#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"

static int session_open(const struct gvs_host_api *host, void **state)
{
    struct be_session *s = gvs_calloc(1, sizeof(*s));
    (void)host;
    if (s == NULL)
        return GVS_E_NOMEM;
    /* CUDA is initialized lazily, by the first call that needs it. */
    *state = s;
    return 0;
}

static void session_close(void *state)
{
    struct be_session *s = state;
    if (s == NULL)
        return;
    be_modules_free(s);
    gvs_free(s->stage);
    gvs_free(s);
}

static const struct gvs_plugin plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = CUDART_PLUGIN_ID,
    .name = CUDART_PLUGIN_NAME,
    .table_hash = CUDART_TABLE_HASH,
    .ops = cudart_op_table,
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
