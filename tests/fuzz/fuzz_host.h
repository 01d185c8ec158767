/*
 * The host the op harnesses (fuzz_cudart_ops, fuzz_cuda_ops) open their
 * plugin's sessions on, like gvsd's once the client is gone: logs go
 * nowhere, notify fails with GVS_E_CLOSED (so no host callback waits for
 * a client), no descriptor ever arrives, and the session's memory quota
 * is the one given.  The remoting layer's backend (plugins/remote) is
 * linked in as the one peer, its session opened at the first use and
 * kept for the process, as a worker keeps it for its session (its entry
 * point renamed remote_plugin_entry beside the API plugin's).
 */
#ifndef GVS_FUZZ_HOST_H
#define GVS_FUZZ_HOST_H

#include <stdint.h>

#include "gvs/plugin.h"

const struct gvs_host_api *fuzz_host(uint64_t memory_quota);

/* What every op harness does with the plugin linked into it (its
 * gvs_plugin_entry).  fuzz_ops_init: from LLVMFuzzerInitialize.
 * fuzz_op: the op of the table whose number the input's first two
 * bytes are (little-endian), NULL for none.  fuzz_op_run: o's handler
 * on body in a session of its own on fuzz_host(memory_quota), as the
 * request of lane (posted when noreply); aborts unless the handler
 * returns 0 or a GVS_E_* code, and after 0 hands check the call, whose
 * out holds the reply. */
void fuzz_ops_init(void);
const struct gvs_op *fuzz_op(const uint8_t *data, size_t size);
void fuzz_op_run(const struct gvs_op *o, const uint8_t *body, size_t len,
                 uint64_t memory_quota, uint32_t lane, int noreply,
                 void (*check)(const struct gvs_op *o,
                               const struct gvs_call *c));

#endif
