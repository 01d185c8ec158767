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

#endif
