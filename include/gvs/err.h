/*
 * gvs error space: one set of negative codes shared by every gvs module.
 *
 * Every gvs function that can fail returns 0 on success or one of the
 * negative GVS_E_* codes below.  Plugin results (cudaError_t, ...) never
 * travel in this space: they are payload.
 */
#ifndef GVS_ERR_H
#define GVS_ERR_H

/* X(name, value, message) */
#define GVS_ERRNO_MAP(X)                                                     \
    X(NOMEM, -1, "out of memory")                                            \
    X(SHORT, -2, "not enough data")                                          \
    X(TOOBIG, -3, "length exceeds the maximum")                              \
    X(INVAL, -4, "invalid argument")                                         \
    X(PROTO, -5, "protocol violation")                                       \
    X(VERSION, -6, "protocol version mismatch")                              \
    X(IO, -7, "input/output error")                                          \
    X(CLOSED, -8, "connection closed by peer")                               \
    X(TIMEOUT, -9, "timed out")                                              \
    X(NOENT, -10, "unknown plugin or operation")                             \
    X(CONFIG, -11, "configuration error")                                    \
    X(URI, -12, "malformed or unsupported URI")                              \
    X(TRAILING, -13, "trailing bytes after message")                         \
    X(PLUGIN, -14, "plugin failed to load")                                  \
    X(CONNECT, -15, "cannot connect to server")                              \
    X(MISMATCH, -16, "plugin operation table mismatch")                      \
    X(RANGE, -17, "value out of range")                                     \
    X(NOTSUP, -18, "not supported by this connection")                      \
    X(TLS, -19, "TLS handshake failed or peer certificate not trusted")    \
    X(DENIED, -20, "access denied")                                         \
    X(INUSE, -21, "address in use by another process")

enum gvs_errno {
#define GVS_ERR_ENUM(name, value, msg) GVS_E_##name = (value),
    GVS_ERRNO_MAP(GVS_ERR_ENUM)
#undef GVS_ERR_ENUM
};

/* Human-readable message for a GVS_E_* code; "success" for 0 and
 * "unknown gvs error" for anything else.  Never NULL, never freed. */
const char *gvs_strerror(int err);

/* The code's name without prefix ("NOMEM"); "OK" for 0, "UNKNOWN" else. */
const char *gvs_errname(int err);

#endif
