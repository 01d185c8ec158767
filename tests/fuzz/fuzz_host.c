/* The op harnesses' host (fuzz_host.h). */
#include "fuzz_host.h"

#include <stdlib.h>
#include <string.h>

#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/proto.h"

static uint64_t quota;

static void host_log(enum gvs_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static int host_notify(struct gvs_session *session, uint16_t plugin,
                       uint16_t op, const void *body, size_t len)
{
    (void)session;
    (void)plugin;
    (void)op;
    (void)body;
    (void)len;
    return GVS_E_CLOSED;
}

static int host_recv_fd(struct gvs_session *session, uint64_t tag, int *fd)
{
    (void)session;
    (void)tag;
    *fd = -1;
    return GVS_E_NOTSUP;
}

/* A data area, as an ivshmem:// connection has: shares placed in it are
 * checked against its bounds, never its bytes. */
static _Alignas(65536) uint8_t area[65536];

static int host_area(struct gvs_session *session, void **base, size_t *len)
{
    (void)session;
    *base = area;
    *len = sizeof(area);
    return 0;
}

static void host_session_info(struct gvs_session *session,
                              struct gvs_session_info *out)
{
    (void)session;
    memset(out, 0, sizeof(*out));
    strcpy(out->identity, "fuzz");
    out->memory_quota = quota;
}

static void host_report_memory(struct gvs_session *session, uint64_t bytes)
{
    (void)session;
    (void)bytes;
}

static void host_report_gpu_memory(struct gvs_session *session, int device,
                                   uint64_t bytes)
{
    (void)session;
    (void)device;
    (void)bytes;
}

static void host_report_gpu_uuid(struct gvs_session *session, int device,
                                 const uint8_t uuid[16])
{
    (void)session;
    (void)device;
    (void)uuid;
}

static const void *host_peer(struct gvs_session *session, const char *name);

static const struct gvs_host_api host = {
    .abi = GVS_PLUGIN_ABI,
    .log = host_log,
    .notify = host_notify,
    .recv_fd = host_recv_fd,
    .session_info = host_session_info,
    .report_memory = host_report_memory,
    .peer = host_peer,
    .report_gpu_memory = host_report_gpu_memory,
    .report_gpu_uuid = host_report_gpu_uuid,
    .area = host_area,
};

int remote_plugin_entry(uint32_t abi, const struct gvs_plugin **out);

/* The layer's session: no notify, so that it captures no output (the
 * fuzzer's own goes to stderr). */
static struct gvs_host_api layer_host;
static const struct gvs_plugin *layer;
static void *layer_state;

static const void *host_peer(struct gvs_session *session, const char *name)
{
    (void)session;
    if (layer == NULL) {
        layer_host = host;
        layer_host.notify = NULL;
        if (remote_plugin_entry(GVS_PLUGIN_ABI, &layer) != 0 ||
            layer->session_open(&layer_host, NULL, &layer_state) != 0)
            abort();
    }
    return strcmp(name, layer->name) == 0 ? layer->peer_api(layer_state)
                                          : NULL;
}

const struct gvs_host_api *fuzz_host(uint64_t memory_quota)
{
    quota = memory_quota;
    return &host;
}

/* The API plugin's entry point, linked into each op harness. */
int gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out);

static const struct gvs_plugin *plugin;
static struct gvs_buf *reply;

void fuzz_ops_init(void)
{
    reply = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    if (reply == NULL || gvs_plugin_entry(GVS_PLUGIN_ABI, &plugin) != 0)
        abort();
}

const struct gvs_op *fuzz_op(const uint8_t *data, size_t size)
{
    if (size < 2)
        return NULL;
    uint16_t op = (uint16_t)(data[0] | data[1] << 8);
    for (const struct gvs_op *o = plugin->ops; o->op != 0; o++)
        if (o->op == op)
            return o;
    return NULL;
}

void fuzz_op_run(const struct gvs_op *o, const uint8_t *body, size_t len,
                 uint64_t memory_quota, uint32_t lane, int noreply,
                 void (*check)(const struct gvs_op *o,
                               const struct gvs_call *c))
{
    struct gvs_buf *in = gvs_buf_view(body, len);
    void *state;
    if (in == NULL ||
        plugin->session_open(fuzz_host(memory_quota), NULL, &state) != 0)
        abort();
    gvs_buf_reset(reply);
    struct gvs_call c = {.in = in, .out = reply, .state = state, .id = 1,
                         .op = o->op, .lane = lane, .noreply = noreply};
    int rc = o->fn(&c);
    if (rc > 0 || (rc < 0 && strcmp(gvs_errname(rc), "UNKNOWN") == 0))
        abort();
    if (rc == 0)
        check(o, &c);
    plugin->session_close(state);
    gvs_buf_free(in);
}
