/* Broken plugins for gvsd's loader tests, one per BAD_* definition.
 * Each must be refused while gvsd goes on serving its good plugins. */
#include "echo.h"
#include "gvs/err.h"
#include "gvs/plugin.h"

static int op_nop(struct gvs_call *c)
{
    (void)c;
    return 0;
}

static int bad_open(const struct gvs_host_api *host,
                    struct gvs_session *session, void **state)
{
    (void)host;
    (void)session;
    *state = NULL;
    return 0;
}

static void bad_close(void *state)
{
    (void)state;
}

#ifdef BAD_FLAGS
#define NOP_FLAGS (GVS_OP_BLOCKING | GVS_OP_INLINE)
#else
#define NOP_FLAGS 0
#endif

static const struct gvs_op bad_ops[] = {
    {1, NOP_FLAGS, "NOP", op_nop},
#ifdef BAD_DUPOP
    {1, 0, "NOP_AGAIN", op_nop},
#endif
    GVS_OP_END,
};

static const struct gvs_plugin bad_plugin = {
#ifdef BAD_ABI
    .abi = GVS_PLUGIN_ABI + 1,
#else
    .abi = GVS_PLUGIN_ABI,
#endif
#ifdef BAD_TWIN
    .id = ECHO_PLUGIN_ID,
#else
    .id = 201,
#endif
    .name = BAD_NAME,
    .table_hash = 1,
    .ops = bad_ops,
    .session_open = bad_open,
    .session_close = bad_close,
};

#ifdef BAD_NOENTRY
#define ENTRY gvs_plugin_entry_misspelt
#else
#define ENTRY gvs_plugin_entry
#endif
#ifdef BAD_ENTRYFAIL
#define ENTRY_RESULT GVS_E_VERSION
#else
#define ENTRY_RESULT 0
#endif

int ENTRY(uint32_t abi, const struct gvs_plugin **out);
int ENTRY(uint32_t abi, const struct gvs_plugin **out)
{
    (void)abi;
    *out = &bad_plugin;
    return ENTRY_RESULT;
}
