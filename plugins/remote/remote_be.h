/*
 * What the remoting layer's backend (gvs-remote.so) offers the API
 * plugins of the same session (docs/remoting.md), through
 * host->peer(session, GVS_REMOTE_PEER): the plugins are loaded
 * RTLD_LOCAL and cannot link each other.  Versioned by
 * GVS_REMOTE_BE_VERSION; a plugin built against another version gets
 * NULL and refuses the session.
 *
 * A worker serves one session, so what the layer keeps is the process's
 * and every API plugin of the session sees the same: a stream created
 * through the runtime is a stream to the driver, an allocation counts
 * against one quota whichever API made it.  Everything here is
 * thread-safe: handlers run on several threads at once.
 */
#ifndef GVS_REMOTE_BE_H
#define GVS_REMOTE_BE_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "gvs/handles.h"
#include "gvs/plugin.h"
#include "gvs/u64map.h"

#define GVS_REMOTE_PEER "remote"
#define GVS_REMOTE_BE_VERSION 20u

/* Each API plugin's own per-lane state hangs off the lane, by its wire
 * id (cudart 1, cuda 2; the layer is 3). */
#define GVS_REMOTE_LANE_SLOTS 8u

/* No plugin's wire id: see context_moved. */
#define GVS_REMOTE_CONTEXT_LOST 0xffffu

/* A device-to-host piece: len bytes at device address src, on stream
 * (the API's own; NULL for a synchronous copy's). */
struct gvs_remote_piece {
    uint64_t src, len;
    void *stream;
};

/* The piece a lane reads ahead (stage_d2h_next) into half `half` of its
 * staging, with pinner's API: pending from its copy's start until
 * waited for, event (the API's, kept for the next) recorded behind it. */
struct gvs_remote_pinner;
struct gvs_remote_ahead {
    struct gvs_remote_piece piece;
    const struct gvs_remote_pinner *pinner;
    void *event;
    int half;
    int pending;
};

/* A lane: one client thread.  A lane's own requests never overlap
 * (include/gvs/plugin.h), so a handler may use its lane's fields without
 * a lock. */
struct gvs_remote_ptds;
struct gvs_remote_lane {
    uint32_t id;
    /* The driver API's current context of the client thread (the handle
     * id of a GVS_RH_CONTEXT, 0 for none), moved by SET_CONTEXT. */
    uint64_t context;
    /* The first failure of a posted op not yet reported, in the code
     * space of the plugin that posted it (0: none). */
    uint16_t latched_plugin;
    int32_t latched;
    /* The client thread's stream capture mode (CUstreamCaptureMode, the
     * same numbers as the runtime's), set by either API's op: the lane's
     * calls run under it (thread_capture_mode). */
    int32_t capture_mode;
    /* The image STAGE pieces have brought for the lane's next load. */
    uint8_t *stage;
    size_t stage_len;
    /* Pinned staging of the lane's device-to-host pieces (stage_d2h),
     * made by d2h_pinner's API; d2h_unpinned once it could not be had. */
    void *d2h_stage;
    const struct gvs_remote_pinner *d2h_pinner;
    int d2h_unpinned;
    struct gvs_remote_ahead d2h_ahead;
    /* The lane's per-thread default streams, the layer's (ptds_stream). */
    struct gvs_remote_ptds *ptds;
    uint32_t nptds;
    /* Each API plugin's own state, indexed by its wire id; freed by the
     * plugin (lanes_each at its session_close). */
    void *slot[GVS_REMOTE_LANE_SLOTS];
};

/* The types of the session's one handle table (include/gvs/handles.h):
 * an id made through one API is found through the other under the same
 * type.  The object is the CUDA handle itself (a CUstream is a
 * cudaStream_t) unless said otherwise. */
enum gvs_remote_handle_type {
    GVS_RH_STREAM = 1,
    GVS_RH_EVENT,
    GVS_RH_GRAPH,
    GVS_RH_GRAPH_EXEC,
    GVS_RH_GRAPH_NODE,
    GVS_RH_MEMPOOL, /* the CUmemoryPool itself, interned (handle_intern) */
    GVS_RH_ARRAY,
    GVS_RH_MIPMAPPED_ARRAY,
    GVS_RH_TEXTURE,
    GVS_RH_SURFACE,
    GVS_RH_USER_OBJECT,
    GVS_RH_ASYNC_CALLBACK,
    GVS_RH_LOGS_CALLBACK,
    GVS_RH_CONTEXT,  /* the driver plugin's struct cuda_be_ctx */
    GVS_RH_LIBRARY,  /* the driver plugin's struct cuda_be_library */
    GVS_RH_KERNEL,   /* the driver plugin's struct cuda_be_kernel */
    GVS_RH_FUNCTION, /* the driver plugin's struct cuda_be_kernel */
    GVS_RH_MODULE,   /* the driver plugin's struct cuda_be_library */
    GVS_RH_LINK,     /* the driver plugin's struct cuda_be_link */
    GVS_RH_VMM_ALLOC, /* the driver plugin's struct cuda_be_vmm_alloc */
};

/* The key spaces of the allocations the quota counts: device addresses
 * (linear, pitched, managed, stream-ordered, graph memory), array ids,
 * mipmapped array ids, the ids of the virtual memory API's physical
 * allocations (cuMemCreate). */
enum gvs_remote_quota_kind {
    GVS_RQ_PTR,
    GVS_RQ_ARRAY,
    GVS_RQ_MIPMAP,
    GVS_RQ_VMM,
    GVS_RQ_KINDS
};

struct gvs_remote_callback;
/* Graphs, executable graphs and their nodes, as the session names them
 * to either API (a CUgraph is a cudaGraph_t): GVS_RH_GRAPH,
 * GVS_RH_GRAPH_NODE and GVS_RH_GRAPH_EXEC ids of the handle table.  A
 * graph is keyed also by CUDA's handle, so that a graph CUDA hands out
 * twice (a capture's graph seen in flight, then ended) keeps one id; a
 * graph's nodes get ids on first mention and keep them until the node or
 * its graph is destroyed. */
struct gvs_remote_graph {
    void *g; /* CUgraph */
    uint64_t id;
    /* Destroyed by the session; 0 for a capture's graph still in flight,
     * or a child graph owned by its node. */
    int owned;
    struct gvs_u64map nodes; /* CUgraphNode -> struct gvs_remote_node */
};

struct gvs_remote_node {
    void *n; /* CUgraphNode */
    uint64_t id;
    struct gvs_remote_graph *graph;
};

/* Shared host memory (backend/shared.c; docs/remoting.md, "Shared host
 * memory"): the wire form every API's ops carry alike.
 *   HOSTMEM_SHARE:   u32 from, u64 at, u64 client address, u64 size
 *                    -> i32, u64 the device address of the pinned
 *                    mapping (on success).  from SHARE_FD: at is the tag
 *                    of the memfd sent ahead; SHARE_AREA: at is the
 *                    offset of the memory in the connection's data area
 *                    (gvs_conn_area), which the worker maps already
 *   HOSTMEM_UNSHARE: u64 client address -> i32 (the device synchronized
 *                    first: no copy still reads or writes the region)
 *   MEMCPY_SHARED:   u64 stream, u32 flags, u32 kind, u64 device
 *                    address, u64 client host address, u64 len, and
 *                    with SIGNAL u64 client address of a 32-bit word in
 *                    a shared region, u32 value -> i32.  An API's posted
 *                    variant (an op flagged async and not blocking,
 *                    served by the same handler) has flags ON_STREAM,
 *                    or ON_STREAM and SIGNAL, and its failure is
 *                    latched.  SIGNAL: once the stream has passed the
 *                    copy, the value is written into the word (by the
 *                    GPU, else by a host function; at once when the copy
 *                    never went on the stream): a staged chunk's slot is
 *                    free again (frontend/staging.c).  The value written
 *                    has SIGNAL_ASK added when the copy failed or the
 *                    lane holds a failure latched under the copy's API
 *                    (an earlier posted op's): its reply, or the next
 *                    reply of that API on the lane, answers it, so a
 *                    client waiting for the word asks.  A
 *                    client's values leave the top three bits clear.
 *                    STORE, with ON_STREAM and WAIT, not posted: a
 *                    synchronous copy answered by the word, its reply
 *                    sent only when asked for (frontend/signal.c).  The
 *                    worker makes the copy, waits for the stream, writes
 *                    the device's output (DEVICE_OUTPUT), then stores
 *                    the value itself, with SIGNAL_ASK when the copy
 *                    failed, a failure is latched, or output was written
 *                    since the last such store, and replies only then:
 *                    the reply answers the failure and follows the
 *                    output, so that the output is written before the
 *                    copy returns, as natively.  Else no reply comes:
 *                    the client returns at the word.  A client that
 *                    stops polling (the stream is busy) first swaps the
 *                    value with SIGNAL_GAVE_UP into the word; a worker
 *                    that finds that there replies instead of storing.
 *                    But while no device code can still write output
 *                    (every kernel launched ended, its output sent:
 *                    backend/quiet.h) and no failure is latched, the
 *                    worker does not wait: it enqueues the copy, swaps
 *                    the value with SIGNAL_GPU into the word (unless
 *                    the client gave up first), and enqueues the GPU's
 *                    write of the value (SIGNAL's way); no reply comes.
 *                    A client that finds SIGNAL_GPU when it stops
 *                    polling asks for the stream to be waited for (len
 *                    0 with WAIT), which answers the copy.  CUDA writes
 *                    device printf output only inside a synchronizing
 *                    call, which the GPU's write is not: hence the
 *                    wait otherwise.  len 0 with WAIT waits for the
 *                    stream (ON_STREAM), else the device: what a word
 *                    that does not come waits for */
enum {
    GVS_REMOTE_SHARED_ON_STREAM = 1u, /* ordered on the stream */
    GVS_REMOTE_SHARED_WAIT = 2u,      /* the stream waited for */
    GVS_REMOTE_SHARED_SIGNAL = 4u,    /* a word written after the copy */
    GVS_REMOTE_SHARED_STORE = 8u,     /* the word stored after a wait */
    /* Never on the wire (refused there): the layer's word to a pinner's
     * copy that this one is posted (plain, or a packed one whose signal
     * the layer writes behind the batch), which may go through
     * copy_posted and join a batch. */
    GVS_REMOTE_SHARED_BATCH = 0x100u,
};
/* Added to a SIGNAL's or STORE's value: a failure is latched, ask for
 * it (STORE: the reply comes). */
#define GVS_REMOTE_SIGNAL_ASK 0x80000000u
/* Added by the client to a STORE's value in its word: it stopped
 * polling and waits for the reply. */
#define GVS_REMOTE_SIGNAL_GAVE_UP 0x40000000u
/* Added by the worker to a STORE's value in its word: the copy and the
 * GPU's write of the value behind it are enqueued; no reply comes. */
#define GVS_REMOTE_SIGNAL_GPU 0x20000000u
enum { GVS_REMOTE_SHARED_H2D = 1u, GVS_REMOTE_SHARED_D2H = 2u };
enum { GVS_REMOTE_SHARE_FD = 0u, GVS_REMOTE_SHARE_AREA = 1u };

/* What an API plugin gives the layer to pin, copy and unpin the regions
 * it receives, in its own codes. */
struct gvs_remote_pinner {
    int32_t success, invalid, nomem, notsup;
    int32_t registered; /* meets a region already shared */
    int32_t direction;  /* a kind neither H2D nor D2H */
    /* The plugin's wire id: a posted copy's failure is latched under it
     * for the lane's next synchronizing call. */
    uint16_t plugin;
    /* The plugin's first step of a call (lane, device or context). */
    int32_t (*enter)(struct gvs_call *call);
    /* Pins the worker's mapping p for every device, *dev its device
     * address (0 when none); unpin undoes it and leaves no error behind. */
    int32_t (*pin)(void *p, uint64_t size, uint64_t *dev);
    void (*unpin)(void *p, uint64_t size);
    /* Waits for the lane's device (before a region goes). */
    int32_t (*sync)(struct gvs_call *call);
    /* One copy between device memory at dev and host (inside the
     * worker's mapping of a region), with the MEMCPY_SHARED flags:
     * enters the call, checks stream and range, copies; with
     * GVS_REMOTE_SHARED_BATCH through copy_posted. */
    int32_t (*copy)(struct gvs_call *call, uint64_t stream, uint32_t flags,
                    int h2d, uint64_t dev, void *host, uint64_t len);
    /* Page-locked memory of n bytes that every device reaches (a lane's
     * staging, stage_d2h); host_free frees it. */
    int32_t (*host_alloc)(void **p, size_t n);
    void (*host_free)(void *p);
    /* Enqueues fn(arg) on the stream of wire in call's lane, as CUDA's
     * host functions run (the lane entered by copy before). */
    int32_t (*host_func)(struct gvs_call *call, uint64_t stream,
                         void (*fn)(void *arg), void *arg);
    /* Enqueues on that stream the GPU's write of the 32-bit value at
     * device address dev (a stream memory operation); anything but
     * success when it cannot (the layer then uses host_func). */
    int32_t (*signal)(struct gvs_call *call, uint64_t stream, uint64_t dev,
                      uint32_t value);
    /* The name the plugin gives device_code for the context of call's
     * lane (entered by copy before). */
    uintptr_t (*context_key)(struct gvs_call *call);
    /* Reading a piece ahead (stage_d2h_next); NULL when the API does not.
     * ahead_copy, in the lane's current context, cuts p at the end of
     * the device allocation it starts in (none: a failure) and enqueues
     * on p's stream (a synchronous copy's: the legacy stream) the copy
     * of its bytes to host and behind it the record of *event,
     * which it makes when NULL and may replace; success, or a failure
     * with nothing enqueued, no copy running into host, and no error left
     * for a later call.  ahead_done answers whether event was reached
     * (1, *result the copy's result), waiting for it when wait is set,
     * else 0 at once; ahead_free frees an event. */
    int32_t (*ahead_copy)(void *host, struct gvs_remote_piece *p,
                          void **event);
    int (*ahead_done)(void *event, int wait, int32_t *result);
    void (*ahead_free)(void *event);
};

/* An API's calls that tie a kept callback record to a graph
 * (callback_give): create makes a user object of one reference whose
 * destructor is destroy(ptr), CUDA's NO_DESTRUCTOR_SYNC kind; move moves
 * the caller's reference to graph; release drops it.  Each answers 0 or
 * the API's error. */
struct gvs_remote_user_objects {
    int32_t (*create)(void **object, void *ptr, void (*destroy)(void *ptr));
    int32_t (*move)(void *graph, void *object);
    int32_t (*release)(void *object);
};

/* Copies one batch call of the driver's takes at most (copy_posted). */
#define GVS_REMOTE_BATCH_MAX 16u

/* The driver's entry points through which the layer makes copies between
 * device memory with a kernel of its own (copy_posted): each the driver's
 * function of that name, a NULL one disabling the kernel. */
struct gvs_remote_copy_driver {
    CUresult (*library_load_data)(CUlibrary *lib, const void *code,
                                  CUjit_option *jit_options,
                                  void **jit_values, unsigned n_jit,
                                  CUlibraryOption *options, void **values,
                                  unsigned n_options);
    CUresult (*library_get_kernel)(CUkernel *kernel, CUlibrary lib,
                                   const char *name);
    CUresult (*launch)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                       CUstream stream, void **params, void **extra);
    CUresult (*pointer_attrs)(unsigned n, CUpointer_attribute *which,
                              void **data, CUdeviceptr p);
    CUresult (*stream_ctx)(CUstream stream, CUcontext *ctx);
    CUresult (*current_ctx)(CUcontext *ctx);
};

/* What an API plugin gives the layer to put posted copies on a stream
 * together (copy_posted), in its own codes.  stream is the API's own,
 * found and checked by the plugin; addresses are unified ones the
 * plugin checked. */
struct gvs_remote_batcher {
    int32_t success;
    uint16_t plugin; /* a batched copy's failure is latched under it */
    /* One copy of len bytes on stream, as the plugin makes one alone;
     * kind is what the plugin gave copy_posted. */
    int32_t (*copy)(void *stream, uint64_t dst, uint64_t src, uint64_t len,
                    int kind);
    /* Whether stream may take a batch now (not capturing). */
    int (*batchable)(void *stream);
    /* The n copies (2 to GVS_REMOTE_BATCH_MAX) on stream as one batch,
     * each reading its source in stream order; anything but success
     * when the API refuses it, having enqueued nothing.  The addresses
     * are the driver's (CUdeviceptr's type). */
    int32_t (*copy_batch)(void *stream, unsigned long long *dsts,
                          unsigned long long *srcs, size_t *sizes, size_t n);
    /* The driver's entry points the layer's copy kernel needs, or NULL
     * where the plugin has none (its copies are then never made by it). */
    const struct gvs_remote_copy_driver *(*driver)(void);
    /* The same for copies from host memory of a shared region (a
     * batcher of copies to the device: whose ordered batches the kernel
     * may make, reading the region; the layer's batch.c says when), or
     * NULL. */
    const struct gvs_remote_copy_driver *(*mapped_driver)(void);
};

struct gvs_remote_be {
    uint32_t version; /* GVS_REMOTE_BE_VERSION */
    /* Sends the client everything the worker's CUDA has written on
     * stdout and stderr so far (device printf, assert messages), ahead
     * of the reply the caller is about to send. */
    void (*output_flush)(void);
    /* Whether device code may still have output to write (a synchronous
     * copy the GPU answers alone then could return before it): called
     * before each launch of a kernel or graph on the context key (the
     * plugin's nonzero name for it), and around each synchronization of
     * a whole context: settle_begin before it, settled after its handler
     * wrote the reply (whose result must be success, the plugin's code)
     * and the output it made visible was flushed. */
    void (*device_code)(uintptr_t key);
    uint64_t (*settle_begin)(void);
    void (*settled)(struct gvs_call *call, uintptr_t key, uint64_t begin,
                    int32_t success);
    /* Called before a non-blocking stream is made: a wait on the legacy
     * stream no longer covers every stream's work. */
    void (*stream_unordered)(void);

    /* Lanes ------------------------------------------------------------ */
    /* The lane of call, created on first use; NULL when out of memory
     * or past the session's bound on lanes. */
    struct gvs_remote_lane *(*lane)(struct gvs_call *call);
    /* Calls fn on every lane (session_close: a plugin frees its slot). */
    void (*lanes_each)(void (*fn)(struct gvs_remote_lane *l, void *arg),
                       void *arg);

    /* Whether, since plugin's last call of this on the calling thread,
     * another plugin's handler ran on it (and so may have moved the
     * thread's current context): a plugin that remembers what it made
     * current applies it again then.  Records plugin as the last;
     * GVS_REMOTE_CONTEXT_LOST says the caller moved the context outside
     * its own view (a context it created or destroyed). */
    int (*context_moved)(uint16_t plugin);
    /* The stream capture mode the calling handler thread was last put in
     * through any plugin (0, global, for a new thread, as CUDA starts
     * it): a plugin entering a lane whose capture_mode differs exchanges
     * the thread's mode and writes the new one here. */
    int *(*thread_capture_mode)(void);
    /* The lane of call's capture_mode set to mode, as a client asked (an
     * API's capture-mode op): 0, GVS_E_PROTO for no CUstreamCaptureMode,
     * GVS_E_NOMEM. */
    int (*set_capture_mode)(struct gvs_call *call, int32_t mode);

    /* Per-thread default streams (backend/ptds.c) -----------------------
     * The handlers run on threads every lane shares, where CUDA's own
     * per-thread default stream would be the handler thread's, shared by
     * the lanes it serves.  So each lane has a stream of its own per
     * context, made at its first use with the default flags: like a
     * per-thread default stream, it synchronizes with the legacy stream
     * and with no other.  It is one stream for both APIs, as natively
     * (the runtime's cudaStreamPerThread is the driver's
     * CU_STREAM_PER_THREAD of the device's primary context).  A context
     * is named by ctx, a created one's CUcontext, or by NULL and dev for
     * dev's primary context. */
    /* The lane's stream in the context current on the calling thread
     * (the plugin entered the lane), made by create (the plugin's
     * stream creation there with the default flags and priority 0) at
     * its first use and after the context lost its streams: 0, create's
     * failure, or nomem. */
    int32_t (*ptds_stream)(struct gvs_call *call, void *ctx, int dev,
                           int32_t (*create)(void **s), int32_t nomem,
                           void **out);
    /* The context lost its streams (a primary context reset or released
     * for good, a created context destroyed): every lane's stream there
     * is made again at its next use. */
    void (*ptds_lost)(void *ctx, int dev);

    /* Failures of posted ops -------------------------------------------
     * CUDA reports a failure it cannot report at once (a kernel's, a
     * posted call's) at the lane's next synchronizing call. */
    /* Keeps code (plugin's) as the lane's first unreported failure. */
    void (*latch)(struct gvs_call *call, uint16_t plugin, int32_t code);
    /* After a synchronizing handler of plugin (whose result code for
     * success is success) wrote its reply: a successful reply becomes
     * the latched failure, with no result data behind it.  A failure
     * another plugin latched waits for that plugin's next one. */
    void (*report_latched)(struct gvs_call *call, uint16_t plugin,
                           int32_t success);
    /* Forgets the lane's latched failure (a device reset discards it). */
    void (*latch_clear)(struct gvs_call *call);

    /* The image the lane's STAGE pieces brought, NUL-terminated in
     * memory of the caller's to free (gvs_free), its length in *len;
     * the lane has none after.  GVS_E_PROTO if there is none. */
    int (*take_stage)(struct gvs_call *call, uint8_t **image, size_t *len);

    /* The session's handle table, created at session open. */
    struct gvs_handles *(*handles)(void);
    /* The id of a CUDA object the session did not create (a device's
     * default memory pool), added to the table under type with obj as
     * its object the first time, the same id every time after, whichever
     * plugin asks.  0 or a negative GVS_E_* code. */
    int (*handle_intern)(uint16_t type, void *obj, uint64_t *id);
    /* Removes an id handle_intern gave (or one added otherwise), and the
     * object's entry; the object, or NULL when id is none of type. */
    void *(*handle_forget)(uint16_t type, uint64_t id);

    /* The memory quota (docs/security.md) -------------------------------
     * The bytes of device memory the session's allocations hold, by
     * whichever API, counted against the quota gvsd gave the session
     * (0: none) and reported to gvsd after every change. */
    /* Takes bytes (what the allocation about to be made will hold, or a
     * bound) from what the session may still hold, before CUDA is asked,
     * so that two threads cannot both pass the quota: -1, nothing taken,
     * when that would pass it, else 0. */
    int (*quota_take)(uint64_t bytes);
    /* Settles what quota_take(taken) took once CUDA answered: when ok,
     * the allocation key (of kind) is recorded as holding bytes on
     * device for owner (a graph's, else 0); else taken is given back. */
    void (*quota_settle)(int ok, enum gvs_remote_quota_kind kind,
                         uint64_t key, int device, uint64_t owner,
                         uint64_t taken, uint64_t bytes);
    /* Whether gvsd has yet to learn which GPU device is (so that it shows
     * the memory counted there per GPU): the plugin that settles an
     * allocation there then names it, with the device's UUID. */
    int (*quota_device_unnamed)(int device);
    void (*quota_name_device)(int device, const uint8_t uuid[16]);
    /* The allocation key of kind was freed (nothing for one not
     * counted). */
    void (*quota_release)(enum gvs_remote_quota_kind kind, uint64_t key);
    /* Every allocation on device was freed (a reset). */
    void (*quota_release_device)(int device);
    /* The owner was destroyed: its allocations' bytes go back. */
    void (*quota_release_owner)(uint64_t owner);
    /* What CUDA said of a device's memory as the session may see it:
     * total at most the quota, free (unless NULL) at most what is left
     * of it. */
    void (*quota_mem_info)(size_t *free, size_t *total);
    /* The bytes the session's allocations hold on device (the worker's
     * CUDA ordinal), and its quota (0: none): what NVML shows as the
     * session's own use. */
    void (*quota_usage)(int device, uint64_t *bytes, uint64_t *quota);

    /* Host callbacks (docs/remoting.md, "Host callbacks") ---------------
     * A function of the program that a stream runs on the client.  A
     * plugin enqueues a function of its own whose data is a record of the
     * client's callback id; when CUDA calls it, it calls callback_run. */
    /* A record of the client's callback id, NULL when out of memory.
     * keep: a graph's callback, which runs each time the graph does; once
     * CUDA has taken it, callback_give hands it to the graph. */
    struct gvs_remote_callback *(*callback_new)(uint64_t id, int keep);
    /* On CUDA's callback thread: runs the client's function with status
     * (the stream's error in the enqueuing plugin's codes) and returns
     * once it returned, or once the client has gone or the session is
     * closing; frees a record that does not keep. */
    void (*callback_run)(struct gvs_remote_callback *cb, int32_t status);
    /* Frees a record CUDA did not take. */
    void (*callback_free)(struct gvs_remote_callback *cb);
    /* Makes a record keep (a host function enqueued into a capturing
     * stream becomes a node of the capture's graph). */
    void (*callback_keep)(struct gvs_remote_callback *cb);
    /* A kept record CUDA took for a node of graph (a node added or set, a
     * host function captured) goes with the graph: a user object made
     * through uo, whose reference graph takes, frees it once no graph,
     * executable graph or launch holds it (CUDA's clones, instantiations
     * and updates take references of their own) and tells the client to
     * drop its record (CALLBACK_FORGET).  A record of no graph
     * (graph NULL: one an executable graph's node was set to) or one
     * whose user object CUDA refused stays until the worker exits. */
    void (*callback_give)(struct gvs_remote_callback *cb, void *graph,
                          const struct gvs_remote_user_objects *uo);
    /* The handler of an API plugin's HOST_FUNC op, whose request every
     * API lays out alike: u64 stream, u64 callback id, u32 kind (0 a host
     * function, 1 a stream callback), u32 flags (0 for kind 0); reply
     * i32, the API's result.  Decodes and checks the request, makes the
     * record and calls enqueue, which enters the lane, finds the stream
     * and enqueues a function of the plugin's on it with the record;
     * a record it did not enqueue (a result other than success) is
     * freed.  nomem: the API's code for out of memory. */
    int (*host_func)(struct gvs_call *call, int32_t success, int32_t nomem,
                     int32_t (*enqueue)(struct gvs_call *call,
                                        uint64_t stream, uint32_t kind,
                                        uint32_t flags,
                                        struct gvs_remote_callback *cb));
    /* The client's callback id of a record. */
    uint64_t (*callback_id)(const struct gvs_remote_callback *cb);
    /* Lets every waiting callback go and sends no more: each plugin's
     * session_close does it first, so that nothing it waits for then
     * waits for the client. */
    void (*callbacks_release)(void);
    /* Handler bodies of ops both API plugins carry in the same wire form
     * (cudart's ATOMIC_CAPS and LOGS_DUMP, the driver's the same), over
     * the plugin's own CUDA function; success is 0 in both APIs. */
    /* Request: u32 n (at most 1024), n x i32 operation, i32 device, i32
     * peer (-1: the host).  Reply: i32, n x u32 capabilities.  caps is
     * the API's host query for peer -1, else its peer query (and the
     * plugin's entering of the call first, where it has one). */
    int (*atomic_caps)(struct gvs_call *call,
                       int32_t (*caps)(struct gvs_call *call,
                                       unsigned int *out, const int32_t *ops,
                                       unsigned int n, int dev, int peer));
    /* Request: u8 has iterator, u64 iterator (ignored without), u64
     * capacity (the client's *size), u32 flags.  Reply: i32, u64
     * iterator, u64 size, blob the text (size bytes, no NUL).  dump is
     * the API's cuLogsDumpToMemory. */
    int (*logs_dump)(struct gvs_call *call,
                     int32_t (*dump)(struct gvs_call *call, unsigned int *it,
                                     char *buf, size_t *size,
                                     unsigned int flags));
    /* Arrays (backend/arrays.c) -----------------------------------------
     * GVS_RH_ARRAY and GVS_RH_MIPMAPPED_ARRAY objects are the layer's, so
     * that either API finds the other's; the handles kept are CUDA's (a
     * CUarray is a cudaArray_t).  A sub-array, a mipmapped array's level
     * or an array's plane, belongs to its parent: it has one id, kept
     * until the parent goes, and cannot be freed on its own. */
    /* Registers an array or mipmapped array (type) the plugin made: 0,
     * or -1 (out of memory: the plugin frees it). */
    int (*array_add)(uint16_t type, void *handle, uint64_t *id);
    /* The handle of id under type, NULL if there is none; *sub (unless
     * NULL) says whether it is a sub-array. */
    void *(*array_get)(uint16_t type, uint64_t id, int *sub);
    /* The id of sub-array key of parent (type, id), registered at the
     * first success of get(the parent's handle, key, &sub's handle): 0,
     * get's failure, missing when there is no such parent, nomem. */
    int32_t (*array_sub)(uint16_t type, uint64_t parent, uint32_t key,
                         int32_t (*get)(void *parent, uint32_t key,
                                        void **sub),
                         int32_t missing, int32_t nomem, uint64_t *id);
    /* Unregisters id (CUDA freed it) with its sub-arrays: 0, or -1 when
     * it was not there (another thread removed it first). */
    int (*array_remove)(uint16_t type, uint64_t id);

    /* Texture and surface objects (backend/texobjs.c) -------------------
     * Their values are CUDA's (kernels use them on the GPU), never ids:
     * the layer keeps the values each plugin created, with the
     * description each was made from; destruction and queries accept
     * only those, through the plugin that made them. */
    /* Keeps value (surface or texture) with a copy of desc: 0, or -1
     * (out of memory: the plugin destroys it). */
    int (*texobj_keep)(uint16_t plugin, int surface, uint64_t value,
                       const uint8_t *desc, size_t len);
    /* destroy(value) if plugin made value, which is forgotten when that
     * answers success (0): destroy's answer, or missing. */
    int32_t (*texobj_destroy)(uint16_t plugin, int surface, uint64_t value,
                              int32_t (*destroy)(uint64_t value),
                              int32_t missing);
    /* A copy (gvs_free) of the description plugin made value from: 0,
     * 1 for a value it did not make, GVS_E_NOMEM. */
    int (*texobj_desc)(uint16_t plugin, int surface, uint64_t value,
                       uint8_t **desc, size_t *len);
    /* Graphs (struct gvs_remote_graph) ----------------------------------
     * One lock guards the graphs and nodes: graph calls are short and
     * never wait for the GPU.  Callers hold it for the graph and node
     * functions below (not for the executable graphs'). */
    void (*graphs_lock)(void);
    void (*graphs_unlock)(void);
    /* The graph of an id, or NULL. */
    struct gvs_remote_graph *(*graph_get)(uint64_t id);
    /* The graph of a CUDA handle if it has an id, else NULL. */
    struct gvs_remote_graph *(*graph_known)(void *g);
    /* The graph of a CUDA handle, registered (owned as given, or-ed into
     * a known graph's) on first mention; NULL only when out of memory. */
    struct gvs_remote_graph *(*graph_of)(void *g, int owned);
    /* Forgets a graph and its nodes' ids (the CUDA graph is the
     * caller's). */
    void (*graph_forget)(struct gvs_remote_graph *g);
    /* The node of an id, or NULL. */
    struct gvs_remote_node *(*node_get)(uint64_t id);
    /* The id of a node of g, registered on first mention; 0 when out of
     * memory (or n is NULL). */
    uint64_t (*node_id)(struct gvs_remote_graph *g, void *n);
    /* Forgets one node's id. */
    void (*node_forget)(struct gvs_remote_node *n);
    /* An executable graph (CUgraphExec) as a new id: 0 or GVS_E_NOMEM. */
    int (*exec_add)(void *x, uint64_t *id);
    /* The executable graph of an id, or NULL. */
    void *(*exec_get)(uint64_t id);
    /* Forgets an id exec_add gave. */
    void (*exec_forget)(uint64_t id);

    /* User objects ------------------------------------------------------
     * The destructor is the client's: a user object is a record of the
     * client's id of it (callback), which CUDA destroys with
     * user_object_destructor when the last reference goes; that sends
     * the client plugin's notification op (u64 callback), whose handler
     * runs the program's destructor (gvs_remote.h).  A GVS_RH_USER_OBJECT
     * id names the object to either API. */
    /* A record for a user object about to be made, its id in *id; NULL
     * when out of memory.  Hand CUDA the record and
     * user_object_destructor, then user_object_set the object it made,
     * or user_object_drop the record when CUDA refused. */
    void *(*user_object_new)(uint16_t plugin, uint16_t op, uint64_t callback,
                             uint64_t *id);
    void (*user_object_destructor)(void *record);
    void (*user_object_set)(void *record, void *object);
    void (*user_object_drop)(void *record);
    /* The CUuserObject of an id, or NULL. */
    void *(*user_object_get)(uint64_t id);
    /* What CUDA writes only to a file: write(path, arg) is run on a
     * private temporary file of the worker ($TMPDIR, else /tmp), whose
     * bytes (at most max) come back in *out, gvs_malloc'd with a byte
     * to spare, *len of them; the file is gone after.  Write's result,
     * else CUDA_ERROR_OPERATING_SYSTEM, CUDA_ERROR_OUT_OF_MEMORY (past
     * max too) or CUDA_ERROR_UNKNOWN (the runtime's codes are the same
     * numbers). */
    int32_t (*capture_file)(int32_t (*write)(const char *path, void *arg),
                            void *arg, size_t max, uint8_t **out,
                            size_t *len);
    /* The session is closing: no notification leaves from now on, and
     * those under way have left when it returns (any plugin's
     * session_close, before it lets CUDA run destructors). */
    void (*notify_stop)(void);

    /* Shared host memory (above, struct gvs_remote_pinner) --------------
     * One table for the session: a region one API shared is found by
     * either API's MEMCPY_SHARED.  Handler bodies of the three ops
     * (memcpy_shared also of the posted variant). */
    int (*hostmem_share)(struct gvs_call *call,
                         const struct gvs_remote_pinner *pn);
    int (*hostmem_unshare)(struct gvs_call *call,
                           const struct gvs_remote_pinner *pn);
    int (*memcpy_shared)(struct gvs_call *call,
                         const struct gvs_remote_pinner *pn);
    /* An API plugin's may_wait (gvs/plugin.h) for its MEMCPY_SHARED
     * request in: 0 for a STORE copy the GPU will answer (no failure of
     * plugin's latched on lane, no device code that may still print:
     * the handler then enqueues it and its word's write, and returns),
     * else 1. */
    int (*shared_may_wait)(const struct gvs_buf *in, uint32_t lane,
                           uint16_t plugin);
    /* Unpins and unmaps every region pn pinned (the plugin's
     * session_close). */
    void (*shared_release)(const struct gvs_remote_pinner *pn);
    /* A posted SIGNAL copy on any stream but a per-thread default one
     * may leave its word's write held back, for the next copy of shared
     * memory of the same API and context to enqueue or, when that one
     * signals the same word on the same stream, to make needless: a run
     * of the small copies the client packs into one staging slot then
     * costs one write.  What destroys
     * streams (a stream's destruction, a device reset, a context's
     * destruction or reset) or begins a capture calls this first, its
     * lane entered, with its pinner: the held write of its context, or
     * of a stream the program created, is enqueued while its stream is
     * there and not capturing. */
    void (*shared_flush)(struct gvs_call *call,
                         const struct gvs_remote_pinner *pn);
    /* What destroys a context (a device reset, a context's destruction
     * or reset, the last release of a primary context) calls this first
     * instead of shared_flush, its lane entered: the held writes go,
     * then the lane's device is waited for (pn->sync: the host functions
     * of posted copies give their buffers back), and the page-locked
     * buffers the layer made through pn (stage_d2h's, d2h_posted's) are
     * freed while their context is there, to be made again when next
     * needed: the context's end would free them under the layer. */
    void (*context_ending)(struct gvs_call *call,
                           const struct gvs_remote_pinner *pn);

    /* Pinned staging of device-to-host pieces (backend/pinned.c) ---------
     * Pinned memory for a piece of len bytes of the lane of call (its
     * staging of GVS_BULK_CHUNK bytes, made with pn the first time; a
     * piece of up to half of it gets a half), the lane's until its next
     * bulk copy, so it may be the reply's tail (one DMA into it, sent
     * from there); NULL when staging does not pay (below 1 MiB) or cannot
     * be had (past 8 lanes, or no pinned memory): the caller then copies
     * through the API's own staging.  When p (NULL for bytes that are not
     * one linear piece) is the piece the lane read ahead, *read is set and
     * *result is that copy's result: on success the bytes are there, else
     * the piece fails with it; else *read is 0 and the caller copies the
     * piece in.  The caller has entered the lane. */
    void *(*stage_d2h)(struct gvs_call *call, size_t len,
                       const struct gvs_remote_piece *p,
                       const struct gvs_remote_pinner *pn, int *read,
                       int32_t *result);
    /* After piece p is in buf (from stage_d2h) and before its reply goes:
     * when the host's next_queued says the lane's next request is
     * another of the same op, and pn can, starts the copy of the piece
     * that follows p in device memory (as long, on p's stream, cut at
     * its allocation's end) into the staging's other half, for that
     * request's stage_d2h to find: the lane's next piece is read from
     * the GPU while this one is sent. */
    void (*stage_d2h_next)(struct gvs_call *call,
                           const struct gvs_remote_piece *p, const void *buf,
                           const struct gvs_remote_pinner *pn);
    /* Frees the lanes' buffers pn made (the plugin's session_close). */
    void (*stage_release)(const struct gvs_remote_pinner *pn);

    /* Posted device-to-host copies (backend/posted.c; docs/remoting.md,
     * "Posted device-to-host copies"): the handler body of an API's
     * MEMCPY_POSTED, u64 stream, u64 device address, u64 len (at most
     * GVS_BULK_CHUNK), u64 token -> i32.  On success the copy is on the
     * stream, into pinned memory of the layer's, and when the stream
     * reaches it the layer's D2H_BYTES notification carries the token and
     * the bytes to the client, ahead of anything that can show the copy
     * done; pn->notsup when no pinned memory is free (the client then
     * copies the ordinary way).  Sent posted (no reply; the frontend's
     * tables proved the copy valid) it is never refused: without pinned
     * memory free the bytes go through a heap buffer, the lane waiting
     * for the stream to reach the copy, as the ordinary way would; a
     * failure is latched, and a D2H_BYTES of the token alone tells the
     * client that no bytes come. */
    int (*d2h_posted)(struct gvs_call *call,
                      const struct gvs_remote_pinner *pn);
    /* Frees the idle buffers pn made (the plugin's session_close). */
    void (*posted_release)(const struct gvs_remote_pinner *pn);
    /* Posted copies put on a stream together (backend/batch.c): the
     * handler of a GVS_OP_BATCH op's posted copy between unified
     * addresses on stream (the call entered, stream and ranges checked)
     * calls copy_posted instead of copying.  While call->next_same says
     * the lane's next request is another, the copy joins the thread's
     * open batch, which goes on the stream as one call of b->copy_batch
     * when the run ends (next_same 0), the batch is full, or a copy
     * cannot join (another stream or plugin, not independent of the
     * batch's copies, not posted, over 1 MiB or, in a launch of the copy
     * kernel, 16 MiB); otherwise the copy is
     * made at once.  Copies between device memory of the stream's
     * context go to the GPU as one launch of the layer's copy kernel
     * where b->driver gives its entry points (also alone, and on the
     * legacy stream, the NULL one, which takes no b->copy_batch).
     * Returns the copy's result when made at once, else b->success: a
     * batched copy's failure is latched under b->plugin.  batch_flush
     * puts the thread's open batch on its stream: such a handler calls
     * it before it enqueues anything but through copy_posted, and before
     * it returns unless call->next_same. */
    int32_t (*copy_posted)(struct gvs_call *call,
                           const struct gvs_remote_batcher *b, void *stream,
                           uint64_t dst, uint64_t src, uint64_t len, int kind);
    void (*batch_flush)(struct gvs_call *call);
    /* Graph memory: the address range a memory alloc node reserved,
     * device memory for the session's checks (which CUDA's pointer
     * attributes do not know while the graph is not running);
     * graph_range_has says whether [p, p + len) lies in one. */
    void (*graph_range_add)(uint64_t p, uint64_t len);
    int (*graph_range_has)(uint64_t p, uint64_t len);
    /* Whether [p, p + len) lies in the device mapping of one region of
     * shared host memory (the device address its pinner gave): memory
     * the GPU reaches that is the client's, not the worker's own (a
     * stream memory operation's address). */
    int (*shared_device_has)(uint64_t p, uint64_t len);
    /* The worker's own address of the client's [p, p + len) where it lies
     * in one region of shared host memory, else NULL: where a graph's
     * copy node may read or write it (GVS_RSIDE_SHARED).  The region stays
     * mapped until the client unshares it. */
    void *(*shared_host)(uint64_t p, uint64_t len);
    /* The other way: the client's address of the worker's w where it lies
     * in the worker's mapping of a shared region, else 0 (what a node's
     * parameters say back to the client). */
    uint64_t (*shared_client)(const void *w);
};

/* The layer's backend for an API plugin's session_open: the peer the
 * layer offers the session (opened before the API plugins), or NULL when
 * the session has none (a client that did not name the layer) or one of
 * another version: the plugin then refuses the session. */
static inline const struct gvs_remote_be *
gvs_remote_be_of(const struct gvs_host_api *host, struct gvs_session *session)
{
    const struct gvs_remote_be *r =
        host->peer != NULL ? host->peer(session, GVS_REMOTE_PEER) : NULL;
    return r != NULL && r->version == GVS_REMOTE_BE_VERSION ? r : NULL;
}

#endif
