#include "be.h"

#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "rdc.h"
#include "remote_be.h"

const struct gvs_remote_be *be_remote;

static int session_open(const struct gvs_host_api *host,
                        struct gvs_session *session, void **state)
{
    struct be_session *s = gvs_calloc(1, sizeof(*s));
    if (s == NULL)
        return GVS_E_NOMEM;
    s->host = host;
    s->session = session;
    /* The layer's backend, opened before us (docs/remoting.md): the
     * lanes, handles and quota are its.  Our frontend always names it; a
     * client that did not, or a layer of another version, is refused. */
    const struct gvs_remote_be *r = gvs_remote_be_of(host, session);
    if (r == NULL) {
        gvs_free(s);
        return GVS_E_PROTO;
    }
    be_remote = r;
    pthread_mutex_init(&s->mods_lock, NULL);
    /* CUDA is initialized lazily, by the first call that needs it. */
    *state = s;
    return 0;
}

static void session_close(void *state)
{
    struct be_session *s = state;
    if (s == NULL)
        return;
    be_remote->callbacks_release();
    be_remote->notify_stop();
    be_notifications_release();
    be_shared_free();
    be_link_free();
    be_modules_free(s);
    be_lanes_free(s);
    pthread_mutex_destroy(&s->mods_lock);
    gvs_free(s);
}

/* A synchronous copy of shared memory that the GPU answers waits for
 * nothing (remote_be.h, STORE). */
static int may_wait(void *state, uint16_t op, uint32_t lane,
                    const struct gvs_buf *in)
{
    (void)state;
    return op != CUDART_OP_MEMCPY_SHARED || be_remote == NULL ||
           be_remote->shared_may_wait(in, lane, CUDART_PLUGIN_ID);
}

static const struct gvs_plugin plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = CUDART_PLUGIN_ID,
    .name = CUDART_PLUGIN_NAME,
    .table_hash = CUDART_TABLE_HASH,
    .ops = cudart_op_table,
    .session_open = session_open,
    .session_close = session_close,
    .may_wait = may_wait,
};

__attribute__((visibility("default"))) int
gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out)
{
    if (abi != GVS_PLUGIN_ABI)
        return GVS_E_VERSION;
    *out = &plugin;
    return 0;
}
