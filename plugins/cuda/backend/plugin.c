/* The CUDA driver backend plugin, gvs-cuda.so (be.h). */
#include "be.h"

#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"

const struct gvs_remote_be *cuda_be_remote;

/* The driver is resolved at the first call that needs it, not here: a
 * session that never calls the driver API never loads it. */
static int session_open(const struct gvs_host_api *host,
                        struct gvs_session *session, void **state)
{
    /* The layer's backend, opened before us (docs/remoting.md).  Our
     * frontend always names it; a client that did not, or a layer of
     * another version, is refused. */
    const struct gvs_remote_be *r = gvs_remote_be_of(host, session);
    if (r == NULL)
        return GVS_E_PROTO;
    struct cuda_be_session *s = gvs_calloc(1, sizeof(*s));
    if (s == NULL)
        return GVS_E_NOMEM;
    cuda_be_remote = r;
    s->host = host;
    s->session = session;
    *state = s;
    return 0;
}

/* What the session made on the GPU goes with the worker process; what
 * the plugin keeps for it goes here. */
static void session_close(void *state)
{
    /* Nothing below may wait for a callback that waits for the client,
     * and the client has gone: destructors the teardown runs send
     * nothing. */
    cuda_be_remote->callbacks_release();
    cuda_be_remote->notify_stop();
    cuda_be_shared_free();
    cuda_be_modules_free();
    cuda_be_links_free();
    cuda_be_vmm_free();
    cuda_be_contexts_free();
    cuda_be_lanes_free();
    gvs_free(state);
}

/* A synchronous copy of shared memory that the GPU answers waits for
 * nothing (remote_be.h, STORE). */
static int may_wait(void *state, uint16_t op, uint32_t lane,
                    const struct gvs_buf *in)
{
    (void)state;
    return op != CUDA_OP_MEMCPY_SHARED || cuda_be_remote == NULL ||
           cuda_be_remote->shared_may_wait(in, lane, CUDA_PLUGIN_ID);
}

static const struct gvs_plugin plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = CUDA_PLUGIN_ID,
    .name = CUDA_PLUGIN_NAME,
    .table_hash = CUDA_TABLE_HASH,
    .ops = cuda_op_table,
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
