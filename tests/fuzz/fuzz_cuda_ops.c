/*
 * fuzz_cuda_ops: the argument decoding of every handler of the driver
 * backend (plugins/cuda/backend, table cuda_op_table: generated from
 * cuda.api and hand-written in devices.c), the bytes a client puts in a
 * request, against the mock driver of plugins/cuda/tests/mock_driver.c:
 * no GPU and no driver needed.
 *
 * Input: u16 op number (little-endian), then the request body.  An op
 * number the table lacks is ignored.  No op of the table is posted
 * without a reply (cuda.api has no async op), so there is no mode byte.
 *
 * Each input runs in a session of its own, opened and closed around the
 * call as a worker does, on a host with every callback gvsd gives: the
 * client is gone (notify fails with GVS_E_CLOSED), descriptors cannot be
 * passed, no layer offers a peer interface, and the session has a memory
 * quota (which cuDeviceTotalMem_v2 reports instead of a larger total).
 * The plugin is linked in rather than loaded (tests/fuzz/CMakeLists.txt).
 *
 * Checked: no crash and no sanitizer report; the handler returns 0 or a
 * negative GVS_E_* code; after 0 the reply starts with its i32 result, a
 * CUresult (>= 0), and a failed call replies nothing more, but a load's
 * or a link step's report (the driver's logs are the point of a failed
 * one, cuda.api).
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "fuzz_host.h"
#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/plugin.h"
#include "gvs/proto.h"

/* The backend's entry point, linked in. */
int gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out);

/* Below the mock's devices' total, so that the quota shows. */
#define QUOTA ((uint64_t)1 << 30)

static const struct gvs_plugin *plugin;
static struct gvs_buf *out;

int LLVMFuzzerInitialize(int *argc, char **argv[])
{
    (void)argc;
    (void)argv;
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
        int report = o->op == CUDA_OP_LOAD || o->op == CUDA_OP_LINK_ADD ||
                     o->op == CUDA_OP_LINK_COMPLETE;
        if (gvs_buf_get_i32(out, &result) != 0 || result < 0 ||
            (result != 0 && !report && gvs_buf_len(out) != 0))
            abort();
    }
    plugin->session_close(state);
    gvs_buf_free(in);
    return 0;
}
