/* The scaffolding of the cudart backend tests: backend_harness.h. */
#include "backend_harness.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

const struct gvs_plugin *plugin;
static void *state;
/* The remoting layer's backend (docs/remoting.md), gvs-remote.so beside
 * the plugin, opened first as gvsd opens it; NULL where there is none. */
static gvs_plugin_entry_fn layer_entry;
static const struct gvs_plugin *layer;
static void *layer_state;

/* One write per line, so that lines logged by the plugin's threads do not
 * interleave. */
static void host_log(enum gvs_log_level level, const char *fmt, ...)
{
    va_list ap;
    char line[512];
    (void)level;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    dprintf(2, "%s\n", line);
}

/* A session of no identity and no quota. */
static void host_session_info(struct gvs_session *session,
                              struct gvs_session_info *out)
{
    (void)session;
    memset(out, 0, sizeof(*out));
}

static void host_report_memory(struct gvs_session *session, uint64_t bytes)
{
    (void)session, (void)bytes;
}

static void host_report_gpu_memory(struct gvs_session *session, int device,
                                   uint64_t bytes)
{
    (void)session, (void)device, (void)bytes;
}

static void host_report_gpu_uuid(struct gvs_session *session, int device,
                                 const uint8_t uuid[16])
{
    (void)session, (void)device, (void)uuid;
}

static const void *host_peer(struct gvs_session *session, const char *name)
{
    (void)session;
    if (layer == NULL || layer->peer_api == NULL ||
        strcmp(layer->name, name) != 0)
        return NULL;
    return layer->peer_api(layer_state);
}

/* A data area of the session's connection, as ivshmem:// gives one:
 * requests that place shared memory in it are checked against its
 * bounds. */
static _Alignas(65536) uint8_t area[65536];

static int host_area(struct gvs_session *session, void **base, size_t *len)
{
    (void)session;
    *base = area;
    *len = sizeof(area);
    return 0;
}

void *harness_area(size_t *len)
{
    *len = sizeof(area);
    return area;
}

/* The last call's gvs_call.answered. */
static int answered;

/* The plugin keeps a pointer to it while the session is open. */
static struct gvs_host_api host = {.abi = GVS_PLUGIN_ABI,
                                   .log = host_log,
                                   .session_info = host_session_info,
                                   .report_memory = host_report_memory,
                                   .peer = host_peer,
                                   .report_gpu_memory = host_report_gpu_memory,
                                   .report_gpu_uuid = host_report_gpu_uuid,
                                   .area = host_area};

int harness_mock_arg(int argc, char **argv)
{
    if (argc == 2)
        return 0;
    return argc == 3 && strcmp(argv[2], "--mock") == 0 ? 1 : -1;
}

static gvs_plugin_entry_fn load_entry(const char *path)
{
    gvs_plugin_entry_fn entry;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        dprintf(2, "%s\n", dlerror());
        return NULL;
    }
    /* ISO C has no conversion from void * to a function pointer. */
    *(void **)&entry = dlsym(h, GVS_PLUGIN_ENTRY);
    return entry;
}

gvs_plugin_entry_fn harness_load(const char *path)
{
    char layer_path[4096];
    const char *slash = strrchr(path, '/');
    int dir = slash != NULL ? (int)(slash - path) : 1;
    snprintf(layer_path, sizeof(layer_path), "%.*s/gvs-remote.so", dir,
             slash != NULL ? path : ".");
    if (access(layer_path, R_OK) == 0 &&
        (layer_entry = load_entry(layer_path)) == NULL)
        return NULL;
    return load_entry(path);
}

int harness_start(gvs_plugin_entry_fn entry, harness_notify_fn notify)
{
    host.notify = notify;
    if (layer_entry != NULL &&
        (layer_entry(GVS_PLUGIN_ABI, &layer) != 0 ||
         layer->session_open(&host, NULL, &layer_state) != 0))
        return -1;
    if (entry(GVS_PLUGIN_ABI, &plugin) != 0)
        return -1;
    return plugin->session_open(&host, NULL, &state) == 0 ? 0 : -1;
}

int harness_open(const char *path, harness_notify_fn notify)
{
    gvs_plugin_entry_fn entry = harness_load(path);
    return entry != NULL ? harness_start(entry, notify) : -1;
}

void harness_close(void)
{
    plugin->session_close(state);
    if (layer != NULL)
        layer->session_close(layer_state);
}

static int call_of(const struct gvs_plugin *p, void *st, uint16_t op,
                   struct gvs_buf *in, struct gvs_buf *out, int noreply,
                   int next_same)
{
    gvs_buf_reset(out);
    for (const struct gvs_op *o = p->ops; o->op != 0; o++)
        if (o->op == op) {
            struct gvs_call c = {.in = in, .out = out, .state = st,
                                 .id = 1, .op = op, .lane = 1,
                                 .noreply = noreply == 1,
                                 .next_same = next_same};
            int rc = o->fn(&c);
            answered = c.answered;
            return rc;
        }
    return 1000;
}

int call_noreply(uint16_t op, struct gvs_buf *in, struct gvs_buf *out,
                 int noreply)
{
    return call_of(plugin, state, op, in, out, noreply, 0);
}

int call_followed(uint16_t op, struct gvs_buf *in, struct gvs_buf *out,
                  int noreply)
{
    return call_of(plugin, state, op, in, out, noreply, 1);
}

int call_layer_noreply(uint16_t op, struct gvs_buf *in, struct gvs_buf *out,
                       int noreply)
{
    return layer != NULL
               ? call_of(layer, layer_state, op, in, out, noreply, 0)
               : 1000;
}

int harness_answered(void)
{
    return answered;
}

int call(uint16_t op, struct gvs_buf *in, struct gvs_buf *out)
{
    return call_noreply(op, in, out, 0);
}

int32_t result_of(struct gvs_buf *out)
{
    int32_t r;
    return gvs_buf_get_i32(out, &r) == 0 ? r : -1000;
}

int32_t on_u64s(uint16_t op, int n, const uint64_t *v, struct gvs_buf *in,
                struct gvs_buf *out)
{
    gvs_buf_reset(in);
    for (int i = 0; i < n; i++)
        gvs_buf_put_u64(in, v[i]);
    return call(op, in, out) == 0 ? result_of(out) : -1000;
}

int32_t on_u64(uint16_t op, uint64_t v, struct gvs_buf *in,
               struct gvs_buf *out)
{
    return on_u64s(op, 1, &v, in, out);
}
