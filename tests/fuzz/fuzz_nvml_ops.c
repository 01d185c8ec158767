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
#include "gvs/plugin.h"

#define QUOTA ((uint64_t)1 << 30)

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
    fuzz_ops_init();
    return 0;
}

static void check(const struct gvs_op *o, const struct gvs_call *c)
{
    int32_t result;
    (void)o;
    if (gvs_buf_get_i32(c->out, &result) != 0 || result < 0 ||
        (result != 0 && gvs_buf_len(c->out) != 0))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct gvs_op *o = fuzz_op(data, size);
    if (o != NULL)
        fuzz_op_run(o, data + 2, size - 2, QUOTA, 1, 0, check);
    return 0;
}
