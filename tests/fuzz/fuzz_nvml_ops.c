/*
 * fuzz_nvml_ops: the argument decoding of every handler of the NVML
 * backend (plugins/nvml/backend, table nvml_op_table: generated from
 * nvml.api and hand-written in handlers.c), the bytes a client puts in a
 * request, against the mock NVML of tests/nvml/mock_nvml.c and the mock
 * driver's list of GPUs (tests/nvml/mock_cuda_uuids.c): no GPU needed.
 *
 * Input: u16 op number (little-endian), then the request body.  An op
 * number the table lacks is ignored.
 *
 * The backend loads NVML with dlopen, as in a worker: the harness runs
 * itself again with the mocks' directories (GVS_FUZZ_NVML_LIBS) on its
 * LD_LIBRARY_PATH.  Each input runs in a session of its own on the host
 * of fuzz_host.h (a memory quota of 1 GiB); NVML is loaded once for the
 * process, as once for a worker.
 *
 * Checked: no crash and no sanitizer report; the handler returns 0 or a
 * negative GVS_E_* code; after 0 the reply starts with its i32 result,
 * an nvmlReturn_t (>= 0), and a failed call replies nothing more.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_host.h"
#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/plugin.h"
#include "gvs/proto.h"
#include "nvml_ops.h"

/* The backend's entry point, linked in. */
int gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out);

#define QUOTA ((uint64_t)1 << 30)

static const struct gvs_plugin *plugin;
static struct gvs_buf *out;

int LLVMFuzzerInitialize(int *argc, char **argv[])
{
    const char *have = getenv("LD_LIBRARY_PATH");
    if (have == NULL || strstr(have, GVS_FUZZ_NVML_LIBS) == NULL) {
        if (setenv("LD_LIBRARY_PATH", GVS_FUZZ_NVML_LIBS, 1) != 0)
            abort();
        execv("/proc/self/exe", *argv);
        abort();
    }
    (void)argc;
    out = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    if (out == NULL || gvs_plugin_entry(GVS_PLUGIN_ABI, &plugin) != 0)
        abort();
    return 0;
}

static const struct gvs_op *find(uint16_t op)
{
    for (const struct gvs_op *o = plugin->ops; o->op != 0; o++)
        if (o->op == op)
            return o;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const struct gvs_op *o = find((uint16_t)(data[0] | data[1] << 8));
    if (o == NULL)
        return 0;
    struct gvs_buf *in = gvs_buf_view(data + 2, size - 2);
    void *state;
    if (in == NULL ||
        plugin->session_open(fuzz_host(QUOTA), NULL, &state) != 0)
        abort();
    gvs_buf_reset(out);
    struct gvs_call c = {.in = in, .out = out, .state = state, .id = 1,
                         .op = o->op, .lane = 1};
    int rc = o->fn(&c);
    if (rc > 0 || (rc < 0 && strcmp(gvs_errname(rc), "UNKNOWN") == 0))
        abort();
    if (rc == 0) {
        int32_t result;
        if (gvs_buf_get_i32(out, &result) != 0 || result < 0 ||
            (result != 0 && gvs_buf_len(out) != 0))
            abort();
    }
    plugin->session_close(state);
    gvs_buf_free(in);
    return 0;
}
