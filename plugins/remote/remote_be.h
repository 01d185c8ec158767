/*
 * What the remoting layer's backend (gvs-remote.so) offers the API
 * plugins of the same session (docs/remoting.md), through
 * host->peer(session, GVS_REMOTE_PEER): the plugins are loaded
 * RTLD_LOCAL and cannot link each other.  Versioned by
 * GVS_REMOTE_BE_VERSION; a plugin built against another version gets
 * NULL and does without.
 */
#ifndef GVS_REMOTE_BE_H
#define GVS_REMOTE_BE_H

#include <stdint.h>

#define GVS_REMOTE_PEER "remote"
#define GVS_REMOTE_BE_VERSION 1u

struct gvs_remote_be {
    uint32_t version; /* GVS_REMOTE_BE_VERSION */
    /* Sends the client everything the worker's CUDA has written on
     * stdout and stderr so far (device printf, assert messages), ahead
     * of the reply the caller is about to send.  Thread-safe. */
    void (*output_flush)(void);
};

#endif
