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
#include <sys/uio.h>

#include "gvs/buf.h"
#include "gvs/log.h"

#define GVS_PLUGIN_ABI 15u
#define GVS_PLUGIN_ENTRY "gvs_plugin_entry"

/* A session as the host knows it; opaque to plugins. */
struct gvs_session;
struct gvs_call;

/* Who a session serves and what it may hold (docs/security.md). */
#define GVS_IDENTITY_MAX 128
struct gvs_session_info {
    /* "token NAME" for a client that proved a named token, else the
     * peer ("uid=U gid=G pid=P", "127.0.0.1:5000"). */
    char identity[GVS_IDENTITY_MAX];
    uint64_t memory_quota; /* bytes of GPU memory; 0: no limit */
};

/* What gvsd offers a plugin's session. */
struct gvs_host_api {
    uint32_t abi;
    void (*log)(enum gvs_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    /* Sends the client a frame it did not ask for (GVS_F_NOTIFY) on behalf
     * of plugin `plugin`: e.g. "run host callback N now".  Callable from
     * any thread of the worker, a CUDA callback thread included, while
     * the session is open.  Returns 0 or a negative GVS_E_* code
     * (GVS_E_CLOSED once the client has gone). */
    int (*notify)(struct gvs_session *session, uint16_t plugin, uint16_t op,
                  const void *body, size_t len);
    /* Takes the descriptor the client passed with `tag` ahead of the
     * request being served (gvs_client_send_fd_locked), waiting a bounded
     * time for it: *fd is the caller's to close.  Descriptors that came
     * with other tags are kept for their own requests (a few at most).
     * GVS_E_NOTSUP when the session's connection cannot pass
     * descriptors (only shm:// can), GVS_E_TIMEOUT when it never came,
     * GVS_E_PROTO when the client broke the rules.  Any thread. */
    int (*recv_fd)(struct gvs_session *session, uint64_t tag, int *fd);
    /* The session's identity and limits, fixed once it is open. */
    void (*session_info)(struct gvs_session *session,
                         struct gvs_session_info *out);
    /* Tells gvsd how much GPU memory the session holds now, for
     * `gvs status` and the metrics (any thread, as often as it
     * changes). */
    void (*report_memory)(struct gvs_session *session, uint64_t bytes);
    /* The interface plugin `name`, open in the same session, offers its
     * peers (struct gvs_plugin's peer_api), or NULL when the session has
     * no such plugin or it offers none.  Plugins that offer one are
     * opened first, so it may be asked from session_open. */
    const void *(*peer)(struct gvs_session *session, const char *name);
    /* Tells gvsd how much of that memory is on one GPU, for the per-GPU
     * metrics: any thread, whenever it changes.  device is the worker's
     * CUDA ordinal, one numbering for every plugin of the session (a
     * worker is one process); ordinals from GVS_SESSION_GPUS on are
     * counted in report_memory's total only. */
    void (*report_gpu_memory)(struct gvs_session *session, int device,
                              uint64_t bytes);
    /* Names the GPU of ordinal device by its UUID (the 16 bytes of
     * cudaDeviceProp::uuid, CUuuid), once; its memory is shown per GPU
     * from then on.  Any plugin of the session may; any thread. */
    void (*report_gpu_uuid)(struct gvs_session *session, int device,
                            const uint8_t uuid[16]);
    /* The data area of the session's connection as the worker maps it
     * (gvs_conn_area: ivshmem://), which the client may write at any
     * moment: *base, *len.  GVS_E_NOTSUP when it has none.  Any thread. */
    int (*area)(struct gvs_session *session, void **base, size_t *len);
    /* Brackets a wait for the client's answer to a notification (a host
     * callback's end): begin 1 before the notification is sent, 0 once
     * the wait is over.  Meanwhile gvsd keeps reading the session's
     * requests on a thread that serves none of them, since a request may
     * wait for the waiting thread (a launch queued behind the callback).
     * Any thread. */
    void (*await_client)(struct gvs_session *session, int begin);
    /* As notify, n notifications of one op at once (1 to
     * GVS_FRAMES_MAX, include/gvs/proto.h), body i bodies[i], sent in
     * one write, in order. */
    int (*notify_many)(struct gvs_session *session, uint16_t plugin,
                       uint16_t op, const struct iovec *bodies, int n);
    /* From the handler of call, a GVS_OP_BLOCKING request its client
     * waits for: 1 when the next request of call's lane is already here
     * and of the same plugin and op (the next piece of a bulk copy, say),
     * so that the handler may start what that request will likely ask
     * for (read the next piece ahead), which must come to no harm when it
     * asks for something else; else 0.  Asked late in the handler, it
     * finds more arrived than when the handler began. */
    int (*next_queued)(const struct gvs_call *call);
};

/* Device ordinals report_gpu_memory is shown for. */
#define GVS_SESSION_GPUS 16

/* One request being served.
 *
 * Threads: a session's requests are read by one thread and run in
 * arrival order by one executor thread, except GVS_OP_BLOCKING ops, which
 * run on a thread of their lane (the executor goes on with other lanes),
 * and GVS_OP_INLINE ops, which run on the reader thread.  So a
 * plugin's handlers of one session may run concurrently on several
 * threads and must guard their shared session state. */
struct gvs_call {
    struct gvs_buf *in;  /* request body, to be decoded completely */
    struct gvs_buf *out; /* reply body, empty on entry */
    void *state;         /* the plugin's per-session state */
    uint64_t id;         /* request id */
    uint16_t op;         /* the operation being served */
    uint32_t lane;       /* the client thread the request comes from */
    int noreply;         /* the client does not wait: out is discarded */
    /* Set by a handler whose client learnt the outcome otherwise and was
     * told that no reply comes (a word in shared memory: remote_be.h,
     * STORE): none is sent, out is discarded.  0 on entry. */
    int answered;
    struct gvs_session *session; /* for host->notify */
    /* Bytes the handler owns, sent after out's as the rest of the reply
     * body without being copied into out (a bulk reply sent straight from
     * the handler's pinned staging).  NULL on entry; they must stay valid
     * until the handler's thread serves its next request. */
    const void *out_tail;
    size_t out_tail_len;
    /* 1 when the next request this thread serves is already here and is
     * this plugin's same op, on the same lane and ordered as this one
     * (nothing of another lane runs in between): the handler may leave
     * work for that request to finish (a batch), which it then must.
     * 0 when not, or not known. */
    int next_same;
    /* A handler that returns a negative code may say here which field,
     * limit or handle was wrong ("callback 7 is not this session's");
     * gvsd logs it with the session's close.  Empty on entry. */
    char why[128];
};

/* Returns 0 (out is sent as the reply) or a negative GVS_E_* code when
 * the request is malformed: the session is then logged and closed.  API
 * failures (a cudaError_t) are results, encoded in out, not errors. */
typedef int (*gvs_handler_fn)(struct gvs_call *call);

enum gvs_op_flags {
    GVS_OP_ASYNC_OK = 1u << 0, /* may be sent with GVS_F_NOREPLY */
    /* May wait for the GPU or for the client: run on the lane's own
     * thread, so the session's other lanes go on meanwhile.  The lane's
     * later requests wait for it. */
    GVS_OP_BLOCKING = 1u << 1,
    /* Never blocks: run on the reader thread as soon as it arrives, ahead
     * of queued work (completions the client reports, e.g. "host callback
     * N has returned"). */
    GVS_OP_INLINE = 1u << 2,
    /* Posted requests of it that follow one another may be served
     * together: before the reader serves one, it reads the next if it is
     * already there, so that gvs_call.next_same says so (a stream's run
     * of posted copies goes to the driver as one batch).  Not with
     * GVS_OP_BLOCKING. */
    GVS_OP_BATCH = 1u << 3,
};
#define GVS_OP_FLAGS_KNOWN                                                    \
    (GVS_OP_ASYNC_OK | GVS_OP_BLOCKING | GVS_OP_INLINE | GVS_OP_BATCH)

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
     * refused).  session stays valid until session_close returns. */
    int (*session_open)(const struct gvs_host_api *host,
                        struct gvs_session *session, void **state);
    /* Called in the worker when the session ends normally; in the
     * reverse of the opening order. */
    void (*session_close)(void *state);
    /* What this plugin offers the other plugins of a session (host->peer),
     * given its session state: plugins are loaded RTLD_LOCAL and cannot
     * link each other (the remoting layer, docs/remoting.md).  NULL:
     * nothing. */
    const void *(*peer_api)(void *state);
    /* For a request of a GVS_OP_BLOCKING op: 0 when it will not wait
     * this time, so that gvsd's reader may serve it where it read it, as
     * any other request, instead of passing the reading to another
     * thread (a hand-off that cost a synchronous copy 0.7-1.0 us);
     * anything else when it may wait.  Called on the reading thread
     * after the request was read and before it is served, with its op,
     * lane and body (in: not to be consumed).  A wrong 0 holds up the
     * reading of the session's other lanes while the request waits.
     * NULL: every request of a blocking op may wait. */
    int (*may_wait)(void *state, uint16_t op, uint32_t lane,
                    const struct gvs_buf *in);
};

/* The entry symbol's type: returns 0 and the plugin's static descriptor,
 * or GVS_E_VERSION if abi is not supported. */
typedef int (*gvs_plugin_entry_fn)(uint32_t abi, const struct gvs_plugin **out);

#endif
