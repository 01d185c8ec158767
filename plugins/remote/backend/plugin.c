/* The remoting layer's backend plugin (docs/remoting.md): the session's
 * layer state, in the worker, for every API plugin of the session. */
#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/plugin.h"
#include "output.h"
#include "quiet.h"
#include "remote_be_gen.h"
#include "remote_ops.h"
#include "state.h"

static struct gvs_handles *table;

struct gvs_handles *remote_be_handles(void)
{
    return table;
}

static const struct gvs_remote_be api = {
    .version = GVS_REMOTE_BE_VERSION,
    .output_flush = remote_be_output_flush,
    .device_code = remote_be_device_code,
    .settle_begin = remote_be_settle_begin,
    .settled = remote_be_settled,
    .stream_unordered = remote_be_stream_unordered,
    .lane = remote_be_lane,
    .lanes_each = remote_be_lanes_each,
    .context_moved = remote_be_context_moved,
    .thread_capture_mode = remote_be_thread_capture_mode,
    .set_capture_mode = remote_be_set_capture_mode,
    .ptds_stream = remote_be_ptds_stream,
    .ptds_lost = remote_be_ptds_lost,
    .latch = remote_be_latch,
    .report_latched = remote_be_report_latched,
    .latch_clear = remote_be_latch_clear,
    .take_stage = remote_be_take_stage,
    .handles = remote_be_handles,
    .handle_intern = remote_be_handle_intern,
    .handle_forget = remote_be_handle_forget,
    .quota_take = remote_be_quota_take,
    .quota_settle = remote_be_quota_settle,
    .quota_release = remote_be_quota_release,
    .quota_device_unnamed = remote_be_quota_device_unnamed,
    .quota_name_device = remote_be_quota_name_device,
    .quota_release_device = remote_be_quota_release_device,
    .quota_release_owner = remote_be_quota_release_owner,
    .quota_mem_info = remote_be_quota_mem_info,
    .quota_usage = remote_be_quota_usage,
    .callback_new = remote_be_callback_new,
    .callback_run = remote_be_callback_run,
    .callback_free = remote_be_callback_free,
    .callback_id = remote_be_callback_id,
    .callback_keep = remote_be_callback_keep,
    .callback_give = remote_be_callback_give,
    .host_func = remote_be_host_func,
    .callbacks_release = remote_be_callbacks_release,
    .atomic_caps = remote_be_atomic_caps,
    .logs_dump = remote_be_logs_dump,
    .array_add = remote_be_array_add,
    .array_get = remote_be_array_get,
    .array_sub = remote_be_array_sub,
    .array_remove = remote_be_array_remove,
    .texobj_keep = remote_be_texobj_keep,
    .texobj_destroy = remote_be_texobj_destroy,
    .texobj_desc = remote_be_texobj_desc,
    .graphs_lock = remote_be_graphs_lock,
    .graphs_unlock = remote_be_graphs_unlock,
    .graph_get = remote_be_graph_get,
    .graph_known = remote_be_graph_known,
    .graph_of = remote_be_graph_of,
    .graph_forget = remote_be_graph_forget,
    .node_get = remote_be_node_get,
    .node_id = remote_be_node_id,
    .node_forget = remote_be_node_forget,
    .exec_add = remote_be_exec_add,
    .exec_get = remote_be_exec_get,
    .exec_forget = remote_be_exec_forget,
    .user_object_new = remote_be_user_object_new,
    .user_object_destructor = remote_be_user_object_destructor,
    .user_object_set = remote_be_user_object_set,
    .user_object_drop = remote_be_user_object_drop,
    .user_object_get = remote_be_user_object_get,
    .notify_stop = remote_be_notify_stop,
    .capture_file = remote_be_capture_file,
    .hostmem_share = remote_be_hostmem_share,
    .hostmem_unshare = remote_be_hostmem_unshare,
    .memcpy_shared = remote_be_memcpy_shared,
    .shared_may_wait = remote_be_shared_may_wait,
    .shared_flush = remote_be_shared_flush,
    .context_ending = remote_be_context_ending,
    .shared_release = remote_be_shared_release,
    .stage_d2h = remote_be_stage_d2h,
    .stage_d2h_next = remote_be_stage_d2h_next,
    .stage_release = remote_be_stage_release,
    .d2h_posted = remote_be_d2h_posted,
    .posted_release = remote_be_posted_release,
    .copy_posted = remote_be_copy_posted,
    .batch_flush = remote_be_batch_flush,
    .graph_range_add = remote_be_graph_range_add,
    .graph_range_has = remote_be_graph_range_has,
    .shared_device_has = remote_be_shared_device_has,
    .shared_host = remote_be_shared_host,
    .shared_client = remote_be_shared_client,
};

/* Request: u64 context id. */
int remote_be_set_context(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t ctx;
    apigen_get_u64(&c, &ctx);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct gvs_remote_lane *l = remote_be_lane(call);
    if (l == NULL)
        return GVS_E_NOMEM;
    l->context = ctx;
    apigen_put_i32(&c, 0);
    return c.rc;
}

/* A worker serves one session: the layer's state is the process's. */
static int session_open(const struct gvs_host_api *host,
                        struct gvs_session *session, void **state)
{
    table = gvs_handles_new();
    if (table == NULL)
        return GVS_E_NOMEM;
    remote_be_quota_open(host, session);
    remote_be_callbacks_open(host, session);
    remote_be_user_objects_open(host, session);
    remote_be_shared_open(host, session);
    remote_be_pinned_open(host);
    /* Without capture the session still works: device printf output then
     * stays in the worker.  Before any CUDA call: CUDA keeps the stdio
     * streams it finds. */
    if (remote_be_output_open(host, session) < 0)
        host->log(GVS_LOG_WARN, "device output will not reach the client");
    *state = NULL;
    return 0;
}

/* Opened first, closed last: the API plugins have let go of what they
 * held here. */
static void session_close(void *state)
{
    (void)state;
    remote_be_callbacks_release();
    remote_be_notify_stop();
    remote_be_output_close();
    remote_be_lanes_free();
    remote_be_ptds_close();
    remote_be_quota_close();
    remote_be_texobjs_free();
    remote_be_intern_close();
    gvs_handles_free(table, remote_be_array_release, NULL);
    table = NULL;
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
