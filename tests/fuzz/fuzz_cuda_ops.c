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

#include "cuda_ops.h"
#include "fuzz_host.h"
#include "gvs/buf.h"
#include "gvs/plugin.h"

/* Below the mock's devices' total, so that the quota shows. */
#define QUOTA ((uint64_t)1 << 30)

int LLVMFuzzerInitialize(int *argc, char **argv[])
{
    (void)argc;
    (void)argv;
    fuzz_ops_init();
    return 0;
}

static void check(const struct gvs_op *o, const struct gvs_call *c)
{
    int32_t result;
    int report = o->op == CUDA_OP_LOAD || o->op == CUDA_OP_LINK_ADD ||
                 o->op == CUDA_OP_LINK_COMPLETE;
    if (gvs_buf_get_i32(c->out, &result) != 0 || result < 0 ||
        (result != 0 && !report && gvs_buf_len(c->out) != 0))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct gvs_op *o = fuzz_op(data, size);
    if (o != NULL)
        fuzz_op_run(o, data + 2, size - 2, QUOTA, 1, 0, check);
    return 0;
}
