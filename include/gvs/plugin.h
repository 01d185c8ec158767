/*
 * Backend plugin interface.  A plugin is a shared object in gvsd's plugin
 * directory exporting one entry symbol, GVS_PLUGIN_ENTRY, of type
 * gvs_plugin_entry_fn.  gvsd dlopens it (RTLD_NOW|RTLD_LOCAL) in the parent
 * at start-up, calls the entry with its ABI version, and dlcloses it if the
 * entry fails.  The parent never calls anything else in the plugin: GPU
 * work happens only in the per-session worker processes, through
 * session_open / the handlers / session_close.
 */
#ifndef GVS_PLUGIN_H
#define GVS_PLUGIN_H

#include <stdint.h>

#include "gvs/buf.h"
#include "gvs/log.h"

#define GVS_PLUGIN_ABI 1u
#define GVS_PLUGIN_ENTRY "gvs_plugin_entry"

/* What gvsd offers a plugin's session. */
struct gvs_host_api {
    uint32_t abi;
    void (*log)(enum gvs_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
};

/* One request being served. */
struct gvs_call {
    struct gvs_buf *in;  /* request body, to be decoded completely */
    struct gvs_buf *out; /* reply body, empty on entry */
    void *state;         /* the plugin's per-session state */
    uint64_t id;         /* request id */
    int noreply;         /* the client does not wait: out is discarded */
};

/* Returns 0 (out is sent as the reply) or a negative GVS_E_* code when
 * the request is malformed: the session is then logged and closed.  API
 * failures (a cudaError_t) are results, encoded in out, not errors. */
typedef int (*gvs_handler_fn)(struct gvs_call *call);

enum gvs_op_flags {
    GVS_OP_ASYNC_OK = 1u << 0, /* may be sent with GVS_F_NOREPLY */
};

struct gvs_op {
    uint16_t op; /* >= 1; 0 ends the table */
    uint16_t flags;
    const char *name;
    gvs_handler_fn fn;
};
#define GVS_OP_END {0, 0, NULL, NULL}

struct gvs_plugin {
    uint32_t abi;        /* GVS_PLUGIN_ABI */
    uint16_t id;         /* wire id, >= 1, unique per gvsd */
    const char *name;    /* "cudart" */
    uint64_t table_hash; /* must equal the frontend's, checked at HELLO */
    const struct gvs_op *ops; /* ends with GVS_OP_END */
    /* Called in the worker process once the handshake named this plugin;
     * returns 0 and sets *state, or a negative GVS_E_* code (session is
     * refused). */
    int (*session_open)(const struct gvs_host_api *host, void **state);
    /* Called in the worker when the session ends normally. */
    void (*session_close)(void *state);
};

/* The entry symbol's type: returns 0 and the plugin's static descriptor,
 * or GVS_E_VERSION if abi is not supported. */
typedef int (*gvs_plugin_entry_fn)(uint32_t abi, const struct gvs_plugin **out);

#endif
