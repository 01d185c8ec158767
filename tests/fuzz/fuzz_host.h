/*
 * The host the op harnesses (fuzz_cudart_ops, fuzz_cuda_ops) open their
 * plugin's sessions on, like gvsd's once the client is gone: logs go
 * nowhere, notify fails with GVS_E_CLOSED (so no host callback waits for
 * a client), no descriptor ever arrives, no peer plugin is there, and
 * the session's memory quota is the one given.
 */
#ifndef GVS_FUZZ_HOST_H
#define GVS_FUZZ_HOST_H

#include <stdint.h>

#include "gvs/plugin.h"

const struct gvs_host_api *fuzz_host(uint64_t memory_quota);

#endif
