/*
 * fuzz_cudart_ops: the argument decoding of every handler of the cudart
 * backend (plugins/cudart/backend, table cudart_op_table), the bytes a
 * client puts in a request, against the mock CUDA runtime of
 * plugins/cudart/tests/mock_*.c: no GPU and no driver needed.
 *
 * Input: u16 op number (little-endian), one byte of call mode (bit 0:
 * sent as GVS_F_NOREPLY, honoured for the ops that allow it as gvsd
 * does; bits 1-2: the lane), then the request body.  An op number the
 * table lacks is ignored.
 *
 * Each input runs in a session of its own, opened and closed around the
 * call as a worker does (so that streams, events, modules and lanes a
 * request creates are released), on a host like gvsd's: the client is
 * gone (notify fails with GVS_E_CLOSED, so no host callback waits for
 * it), descriptors cannot be passed (recv_fd: GVS_E_NOTSUP), and the
 * session has a memory quota, which bounds what the mock allocates over
 * the whole run (fuzz_host.h).  The plugin is linked in rather than
 * loaded (tests/fuzz/CMakeLists.txt).
 *
 * Checked: no crash and no sanitizer report; the handler returns 0 or a
 * negative GVS_E_* code; a reply that is not empty (ops a client only
 * posts reply nothing) starts with its i32 result, a cudaError_t (>= 0);
 * a reply tail (out_tail) follows a reply and is readable for its whole
 * length.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_host.h"
#include "gvs/buf.h"
#include "gvs/plugin.h"

/* What the quota lets the mock hold over the whole run: allocations are
 * not freed when a session closes (a worker's end frees them). */
#define QUOTA ((uint64_t)256 << 20)

int LLVMFuzzerInitialize(int *argc, char **argv[])
{
    (void)argc;
    (void)argv;
    fuzz_ops_init();
    return 0;
}

/* Reads every byte of the reply tail, so that ASan checks them all. */
static void touch(const void *p, size_t len)
{
    void *copy = malloc(len);
    if (copy == NULL)
        abort();
    memcpy(copy, p, len);
    free(copy);
}

static void check(const struct gvs_op *o, const struct gvs_call *c)
{
    (void)o;
    if (c->noreply)
        return;
    /* The ops a client only posts (MODULE_STAGE, CALLBACK_DONE) reply
     * nothing even when asked for a reply. */
    if (gvs_buf_len(c->out) > 0) {
        int32_t result;
        if (gvs_buf_get_i32(c->out, &result) != 0 || result < 0)
            abort();
    }
    if (c->out_tail_len > 0) {
        if (c->out_tail == NULL || gvs_buf_len(c->out) == 0)
            abort();
        touch(c->out_tail, c->out_tail_len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    const struct gvs_op *o = fuzz_op(data, size);
    if (o == NULL)
        return 0;
    int noreply = (data[2] & 1) && (o->flags & GVS_OP_ASYNC_OK);
    fuzz_op_run(o, data + 3, size - 3, QUOTA, 1u + ((data[2] >> 1) & 3u),
                noreply, check);
    return 0;
}
