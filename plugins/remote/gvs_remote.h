/*
 * What the remoting layer's frontend, libgvs-remote.so.0, offers the API
 * frontends (libcudart.so.13, libcuda.so.1; docs/remoting.md): one copy
 * per process, so that what it keeps is the same for all of them.
 *
 * The round trips of the calls generated from an API's description
 * (tools/apigen/README.md, "Generated files"): an API frontend describes
 * itself once in a struct gvs_remote_api and its generated hooks call
 * these.  Results are the API's own codes (cudaError_t, CUresult) as
 * int32_t: the layer only moves them.
 */
#ifndef GVS_REMOTE_H
#define GVS_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "apigen_rt.h"
#include "gvs/client.h"

struct gvs_remote_api {
    uint16_t plugin; /* the API plugin's wire id */
    /* Its codes for success, for out of memory, for a reply that cannot
     * be decoded, and for an invalid argument. */
    int32_t success, nomem, unknown, invalid;
    /* The process's connected client, with the API's own session
     * initialization done: success, or the API's sticky failure. */
    int32_t (*client)(struct gvs_client **out);
    /* The API's code for a failed gvs_client_* call. */
    int32_t (*transport_error)(int rc);
    /* Caller holds the client lock: what must leave before a request
     * with these apigen flags (APIGEN_DEVICE: the lane's device brought
     * in line, say).  0 or a negative GVS_E_* code.  NULL: nothing. */
    int (*before_send_locked)(struct gvs_client *cl, unsigned flags);
};

/* Caller holds the client lock.  Sends one request of the calling
 * thread's lane, after what api->before_send_locked sends; frame: its
 * frame flags (0, GVS_F_NOREPLY or GVS_F_LATER, gvs/proto.h).  id may be
 * NULL for a GVS_F_NOREPLY request; otherwise the caller releases the
 * lock and collects the reply with gvs_client_wait.  0 or a negative
 * GVS_E_*. */
int gvs_remote_send_locked(const struct gvs_remote_api *api,
                           struct gvs_client *cl, uint16_t op,
                           unsigned flags, uint32_t frame,
                           const struct iovec *iov, int n, uint64_t *id);

/* The generated hooks.  begin connects and takes this thread's request
 * and reply buffers (one pair per thread, kept between calls); run sends
 * the request and waits, and returns the transport's error or the
 * reply's leading result; post sends it without waiting; end checks that
 * the reply was read exactly (api->unknown if not).  Each returns r
 * unchanged where there is nothing to check. */
int32_t gvs_remote_begin(const struct gvs_remote_api *api,
                         struct apigen_call *c);
int32_t gvs_remote_run(const struct gvs_remote_api *api,
                       struct apigen_call *c, uint16_t op, unsigned flags);
int32_t gvs_remote_post(const struct gvs_remote_api *api,
                        struct apigen_call *c, uint16_t op, unsigned flags);
int32_t gvs_remote_end(const struct gvs_remote_api *api,
                       struct apigen_call *c, int32_t r);

/* What the layer sends once per session ahead of any API call, whichever
 * frontend connects first: the client's CUDA_VISIBLE_DEVICES, so that
 * the worker narrows its devices before CUDA starts there.  Takes the
 * client lock; does nothing after the first success in this process's
 * session.  0 or a negative GVS_E_* code. */
int gvs_remote_session_start(struct gvs_client *cl);

/* The device the runtime frontend (libcudart.so.13) serves the calling
 * thread on, set at each of its device requests; -1 before the first.
 * The driver frontend makes that device's primary context the thread's
 * current one while the thread has none of its own, as NVIDIA's runtime
 * does, so that a library's own runtime in the process finds it. */
void gvs_remote_runtime_device_set(int dev);
int gvs_remote_runtime_device(void);
/* Whether the runtime frontend has made a device request on any thread
 * of this process's session: NVIDIA's runtime has initialized the driver
 * by then, so the driver frontend counts itself initialized. */
int gvs_remote_runtime_used(void);

/* Device attributes the backend answered, one table per process for
 * both APIs (the runtime's and the driver's numbers are the same;
 * frontend/devattrs.c): the hardware's, which does not change while the
 * program runs, as the session sees it.  attr: 1 and the value where
 * kept, else 0; keep records a success, *value first made the session's
 * (below).  Thread-safe. */
int gvs_remote_device_attr(int device, int attr, int *value);
void gvs_remote_device_attr_keep(int device, int attr, int *value);
/* Whether the GPU can map this process's host memory: only where the
 * connection shares memory with the backend (shm://, unix://).  Over tcp
 * and tls the device is one that cannot (CanMapHostMemory 0 through
 * either API's attributes, canMapHostMemory 0 in the runtime's
 * properties), so that programs take the path they have for such
 * devices. */
int gvs_remote_maps_host_memory(void);

/* The flags of device's primary context, kept while it is known active
 * (frontend/primary.c), for both APIs.  A frontend takes the epoch
 * before it asks the backend, and keeps the answer with it: an answer
 * that crossed a change is dropped.  Every frontend calls
 * gvs_remote_primary_changed before it sends a release, a reset or new
 * flags of a primary context.  state: 1 and *flags where kept, else 0.
 * Thread-safe. */
/* Kernel settings (frontend/funcset.c): every frontend calls change
 * before it sends a function attribute, cache or shared memory setting,
 * through either API; an attribute a program may set is kept with the
 * count it was answered at, and valid while the count stays.
 * Thread-safe. */
uint64_t gvs_remote_kernel_settings(void);
void gvs_remote_kernel_settings_change(void);

uint64_t gvs_remote_primary_epoch(void);
int gvs_remote_primary_state(int device, unsigned *flags);
void gvs_remote_primary_keep(int device, unsigned flags, int active,
                             uint64_t asked);
void gvs_remote_primary_changed(void);

/* The streams and events this process made and has not destroyed,
 * through either API frontend (frontend/known.c), each with the API
 * plugin that made it and its owner there, a nonzero tag of that API's
 * (the runtime's device, the driver's context); and whether a stream
 * capture may be under way.  What lets a call that
 * cannot fail be posted: one the tables do not prove takes its round
 * trip.  Thread-safe; a forked child starts with none. */
enum { GVS_REMOTE_KNOWN_STREAM, GVS_REMOTE_KNOWN_EVENT, GVS_REMOTE_KNOWN_KINDS };
void gvs_remote_known_add(int kind, uint64_t id, uint16_t api,
                          uint64_t owner);
void gvs_remote_known_remove(int kind, uint64_t id);
/* The owner of id, with the API that made it in *api; 0 when unknown. */
uint64_t gvs_remote_known_owner(int kind, uint64_t id, uint16_t *api);
/* Every stream and event of an API's owner is gone (a device reset). */
void gvs_remote_known_forget_owner(uint16_t api, uint64_t owner);
/* Around a capture through either API: begins before its request is
 * sent (undone when it fails), ends when one ended. */
void gvs_remote_capture_begins(void);
void gvs_remote_capture_ends(void);
int gvs_remote_capturing(void);

/* Device memory each API frontend knows (frontend/devmem.c): its
 * allocations, mappings and globals, answered from its own table with no
 * round trip.  A frontend names its lookup once, under its plugin id;
 * gvs_remote_device_memory says whether a frontend other than api knows
 * p as device memory. */
typedef int (*gvs_remote_devmem_fn)(uint64_t p);
void gvs_remote_device_memory_lookup(uint16_t api, gvs_remote_devmem_fn known);
int gvs_remote_device_memory(uint16_t api, uint64_t p);

/* Caller holds the client lock.  Posts image in STAGE pieces of the
 * calling thread's lane, for the API's load that follows (an image may
 * be larger than a request).  0 or a negative GVS_E_* code. */
int gvs_remote_stage_locked(struct gvs_client *cl, const uint8_t *image,
                            size_t len);

/* Caller holds the client lock.  Posts the calling thread's current
 * driver context (its handle id, 0 for none) as its lane's, for the
 * requests that follow.  0 or a negative GVS_E_* code. */
int gvs_remote_set_context_locked(struct gvs_client *cl, uint64_t ctx);

/* The bytes of the module image at code, as CUDA reads it: a fat
 * binary (or nvcc's wrapper of one, followed to its data), an ELF cubin
 * (up to its furthest header or section), or else NUL-terminated PTX
 * text (its NUL included).  Sets *start to the image's first byte; 0
 * when the image is malformed or larger than a session may send. */
size_t gvs_remote_image_size(const void *code, const uint8_t **start);
/* The same of an image in avail bytes (a file's): 0 also when the image
 * would reach past them, or is nvcc's wrapper, which points elsewhere. */
size_t gvs_remote_image_size_in(const void *code, size_t avail,
                                const uint8_t **start);

/* Posting launches.  A launch in a configuration the backend already
 * accepted for the kernel cannot fail at launch time any more: it is
 * posted without waiting, and what CUDA could still report is an
 * execution failure, reported at a later synchronization natively too
 * (the backend latches it for the lane's next synchronizing call).
 * Other launches wait, so that a bad configuration is reported at once.
 *
 * A configuration as one word (valid bit, device, threads per block,
 * dynamic shared memory), 0 when it is outside what every device allows
 * (never accepted, so never posted). */
uint64_t gvs_remote_launch_config(int dev, const uint32_t grid[3],
                                  const uint32_t block[3], uint64_t shmem);
/* Whether a launch in configuration want cannot fail at launch time
 * because ok was accepted. */
int gvs_remote_launch_within(uint64_t want, uint64_t ok);

/* Host callbacks (docs/remoting.md, "Host callbacks"): a function of the
 * program that a stream runs on the client's notify thread when it
 * reaches it, in stream order.  An API frontend records it here, then
 * enqueues it with its own request naming the record's id; the layer
 * runs it on the backend's CALLBACK_RUN and reports CALLBACK_DONE, which
 * lets the stream go on.  No lock of the layer is held while it runs: a
 * callback may call the API (which CUDA forbids for most calls, but
 * libraries do). */
struct gvs_remote_callback {
    /* Calls the program's function: fn cast back to its type, with user,
     * and for a stream callback the stream and status (the stream's
     * error in the API's codes, 0 for a host function). */
    void (*run)(const struct gvs_remote_callback *cb, int32_t status);
    void (*fn)(void);
    void *user;
    void *stream; /* as the program named it */
    void *context; /* the API's own, for run (a driver context) */
};
/* Records a copy of cb; its id, 0 when out of memory.  In the table
 * before the request that enqueues it leaves: the backend may run it
 * before that request's reply is read. */
uint64_t gvs_remote_callback_add(const struct gvs_remote_callback *cb);
/* Forgets id (its enqueueing failed). */
void gvs_remote_callback_drop(uint64_t id);
/* A copy of id's record: 0, or -1 when there is none. */
int gvs_remote_callback_find(uint64_t id, struct gvs_remote_callback *out);
/* User objects (remote_be.h, "User objects"): CUDA keeps the references
 * on the backend, the destructor is the program's.  An API frontend
 * records it here before the object's create request leaves (the object
 * may be gone, and the notification on its way, before the reply is
 * read) and sends the id as the object's callback; the handler of its
 * plugin's destroy notification hands the body (u64 id) to run, which
 * runs the destructor once and forgets it.  As natively (no destructor
 * sync), no call waits for a destructor.  add answers 0 when out of
 * memory; forget drops a record whose object CUDA refused to make. */
uint64_t gvs_remote_destructor_add(void (*fn)(void *), void *ptr);
void gvs_remote_destructor_forget(uint64_t id);
struct gvs_buf;
void gvs_remote_destructor_run(struct gvs_buf *body);

/* The calling thread's stream capture mode (CUstreamCaptureMode, the
 * runtime's numbers alike), one for both APIs as natively: an API
 * frontend exchanging it sends its lane the new one (the backend's lane
 * capture_mode, remote_be.h), then sets it here. */
int gvs_remote_capture_mode(void);
void gvs_remote_set_capture_mode(int mode);

/* Writes len bytes to the file at path (created or truncated), as CUDA
 * would have written it where the program runs: 0, or -1 when the OS
 * refused (the API's "operating system" error). */
int gvs_remote_write_file(const char *path, const uint8_t *bytes,
                          size_t len);

/* A reply's leading result; api->unknown if absent. */
int32_t gvs_remote_reply_result(const struct gvs_remote_api *api,
                                struct apigen_call *c);

/* The client side of ops both API frontends carry in the same wire form
 * (frontend/twins.c; their backend bodies are remote_be.h's
 * atomic_caps and logs_dump), as op of api.  Results are the API's. */
/* The host's (peer -1) or a peer device's atomic capabilities of the
 * count operations (the enum's values) on dev. */
int32_t gvs_remote_atomic_caps(const struct gvs_remote_api *api,
                               uint16_t op, unsigned int *caps,
                               const int32_t *ops, unsigned int count,
                               int dev, int peer);
/* The driver's logs from *it (NULL: all) into buf, cap bytes with the
 * NUL; *len the text's length, *it moved past it. */
int32_t gvs_remote_logs_dump(const struct gvs_remote_api *api, uint16_t op,
                             unsigned int *it, char *buf, size_t cap,
                             size_t *len, unsigned int flags);

/* Managed memory (frontend/managed.c): a shadow of each managed
 * segment, mapped in the client at the device's address, one table per
 * process whichever API made the memory.  The program's writes mark
 * pages dirty; the API frontend pushes them before a device request and
 * pulls the clean ones after a synchronization, through its own ops. */
struct gvs_remote_seg {
    uint64_t lo, hi;
};

struct gvs_remote_managed_io {
    const struct gvs_remote_api *api;
    /* The API's op that writes pushed bytes to the device: u64 dst, blob
     * the bytes; posted, ordered before the lane's next request. */
    uint16_t push_op;
    /* The API's op that reads device bytes: its request built by
     * pull_request (0 or a negative GVS_E_* code) for n bytes (at most
     * GVS_BULK_CHUNK) at device address src; its reply i32 result, blob
     * the bytes. */
    uint16_t pull_op;
    int (*pull_request)(struct gvs_buf *req, uint64_t src, size_t n);
};

/* A shadow (read-only, clean) for the managed bytes [lo, hi), not yet
 * pulled; a segment sharing pages with shadows already there joins
 * them, and one already there keeps its shadow.  Its slot for
 * gvs_remote_managed_pull, or -1 when its pages are taken here, the
 * table is full or memory is short. */
int gvs_remote_managed_add(uint64_t lo, uint64_t hi);
/* The segment starting at lo is freed: its shadow goes (with its pages
 * when it was the last segment in them). */
void gvs_remote_managed_forget(uint64_t lo);
/* Whether any shadow exists. */
int gvs_remote_managed_any(void);
/* Caller holds the client lock: pushes every dirty page, which is clean
 * again after.  0 or the first negative GVS_E_* code of io. */
int gvs_remote_managed_push_locked(const struct gvs_remote_managed_io *io,
                                   struct gvs_client *cl);
/* Pulls every clean page of slot only's shadow, or of every shadow when
 * only is -1, each piece a round trip of its own (a synchronizing call's
 * reply may still be unread in the thread's buffers); the API's success
 * or first failure. */
int32_t gvs_remote_managed_pull(const struct gvs_remote_managed_io *io,
                                int only);

/* Bulk copies (frontend/bulk.c), in pieces of gvs_remote_piece_len
 * both ways.  The length of the next piece of a copy with rem bytes
 * still to go: GVS_REMOTE_PIECE while more remains.  The backend copies
 * a piece to the device once all its bytes have come, while the next
 * one arrives, and one from it while the one before travels, so only
 * one piece's copy is not hidden behind the wire (over tcp on the H200,
 * an 8 MiB piece took 1.64 ms to arrive, then 0.66 ms to copy).  And the
 * storage a piece passes through on either side was used a few pieces
 * before, likely still in the processor's caches at 1 MiB: over tcp on
 * the H200, copies of 64 and 256 MiB moved 11% (to the device) and 20%
 * (from it) faster on average in pieces of 1 MiB than of 8 MiB, the
 * most a frame carries (GVS_BULK_CHUNK; docs/performance.md).  Not smaller: gvsd
 * copies a smaller piece to the device where it reads it, not while it
 * reads the next (server/executor.c, bulky). */
#define GVS_REMOTE_PIECE ((size_t)1 << 20)
size_t gvs_remote_piece_len(size_t rem);

/* A host-to-device copy: piece encodes piece i's request into hdr
 * (reset for it), called for i = 0, 1, ... in order, its last field the
 * u32 length of its bytes, and names them (one span of the program's
 * memory), which the request carries as they are.  Every piece but the
 * last is posted; the backend keeps the first failure, which the last
 * piece's reply (a result only) reports.  The bytes have left when it
 * returns.  The API's result. */
struct gvs_remote_h2d {
    const struct gvs_remote_api *api;
    uint16_t op;
    size_t pieces;
    int (*piece)(void *arg, size_t i, struct gvs_buf *hdr, const void **src,
                 size_t *len);
    void *arg;
    /* When not 0: the op every piece is posted as instead, the last too
     * (no reply; the API's tables proved the copy valid, and the backend
     * latches a failure for the lane's next synchronizing call), so that
     * the call returns once the bytes have left and a program copying
     * block after block keeps the wire busy, no round trip between. */
    uint16_t post_op;
};
int32_t gvs_remote_bulk_h2d(const struct gvs_remote_h2d *o);

/* A device-to-host copy, pipelined: a window of piece requests in
 * flight, so that the backend copies a piece while the one before
 * travels, and each piece's bytes read by the client's receiver thread
 * straight into the program's memory.  A piece's reply is i32 result,
 * then on success u32 length and the bytes.  piece encodes piece i's
 * request into req (reset for it), called for i = 0, 1, ... in order,
 * and says where its len bytes go (one span).  Every reply sent for is
 * collected, even after a failure; the first failure is the result (the
 * API's), and the memory may then hold part of the bytes. */
struct gvs_remote_d2h {
    const struct gvs_remote_api *api;
    uint16_t op;
    size_t pieces;
    int (*piece)(void *arg, size_t i, struct gvs_buf *req, void **dst,
                 size_t *len);
    void *arg;
};
int32_t gvs_remote_bulk_d2h(const struct gvs_remote_d2h *o);

/* Page-locked host memory (frontend/hostmem.c): one table per process of
 * what the program allocated or registered through either API. */
struct gvs_remote_host {
    size_t size;
    unsigned int flags; /* as cudaHostGetFlags / cuMemHostGetFlags say */
    int allocated;      /* by a host allocation, else registered */
    int shared;         /* with the session's backend (share->map) */
    uint64_t dev;       /* the backend's device address of it, or 0 */
};

enum gvs_remote_host_rc {
    GVS_RHOST_OK,
    GVS_RHOST_INVALID,        /* bad argument, or not such memory */
    GVS_RHOST_NOMEM,
    GVS_RHOST_REGISTERED,     /* meets memory already tracked */
    GVS_RHOST_NOT_REGISTERED, /* unregistering what is not */
};

/* Graph copy nodes of host memory the worker cannot reach
 * (frontend/ghost.c; docs/cudart.md "Graphs"): the node copies from or
 * to device memory of its own, and each launch moves the bytes around
 * the graph in stream order.  An API frontend gives its calls; streams
 * and events are its handles as u64, device memory its address. */
#define GVS_REMOTE_GHOST_PARAMS_MAX 256u
struct gvs_remote_ghost_api {
    int32_t success, notsup, nomem;
    int32_t (*alloc)(uint64_t *dev, size_t n);
    void (*release)(uint64_t dev);
    /* Stream-ordered copies: into the node's memory before a launch,
     * out of it after (posted where it can be). */
    int32_t (*to_dev)(uint64_t dev, const void *host, size_t n,
                      uint64_t stream);
    int32_t (*to_host)(void *host, uint64_t dev, size_t n, uint64_t stream);
    int32_t (*event_new)(uint64_t *ev);
    void (*event_free)(uint64_t ev);
    int32_t (*record)(uint64_t ev, uint64_t stream);
    int32_t (*wait)(uint64_t stream, uint64_t ev);
};
/* Before a node's request is begun (it allocates): device memory *dev of
 * span bytes for a node copying host (to_dev: from it), keeping the
 * program's parameters (size bytes, at most GVS_REMOTE_GHOST_PARAMS_MAX)
 * for its queries; api->notsup when span is 0, or
 * gvs_remote_ghost_stageable(0) was said for the request. */
int32_t gvs_remote_ghost_prepare(const struct gvs_remote_ghost_api *api,
                                 void *host, size_t span, int to_dev,
                                 const void *params, size_t size,
                                 uint64_t *dev);
/* Whether the request being built on this thread may prepare one (not
 * for a graph's node whose graph is not known here); reset by done. */
void gvs_remote_ghost_stageable(int yes);
/* Once the request was answered (ok), what node held in owner (a graph,
 * or an executable graph: exec) is replaced by the node prepared, if
 * any; owner 0 changes nothing.  Always called after prepare. */
void gvs_remote_ghost_done(uint64_t owner, uint64_t node, int exec, int ok);
/* The graph holding such a node, or 0. */
uint64_t gvs_remote_ghost_graph_of(uint64_t node);
/* A node is gone from its graph; an owner is gone. */
void gvs_remote_ghost_forget_node(uint64_t node);
void gvs_remote_ghost_forget(uint64_t owner);
/* What from holds, to holds too (an executable graph: exec), under
 * node_in's node ids (NULL: the same). */
void gvs_remote_ghost_copy(uint64_t from, uint64_t to, int exec,
                           uint64_t (*node_in)(uint64_t node, uint64_t to));
/* The program's parameters of such a node (size bytes): 1, else 0. */
int gvs_remote_ghost_params(uint64_t node, void *out, size_t size);
/* Launches exec on stream through launch, moving such nodes' bytes
 * around it. */
int32_t gvs_remote_ghost_launch(const struct gvs_remote_ghost_api *api,
                                uint64_t exec, uint64_t stream,
                                int32_t (*launch)(uint64_t exec,
                                                  uint64_t stream));

/* Shared host memory (frontend/shared.c, staging.c; docs/remoting.md,
 * "Shared host memory"), on connections that can share it (shm://, unix://:
 * GVS_CONN_CAP_FDS): the layer allocates a sealed memfd, maps it and
 * passes it to the backend, which maps it too and pins it.  A copy
 * between such memory and the GPU is then one DMA in the worker, with no
 * byte crossing the connection; copies from and to pageable memory go
 * through a shared staging region, chunk by chunk, the program's side of
 * a chunk overlapping the GPU's side of the ones before.  An API names
 * its three ops (the wire form of remote_be.h, "Shared host memory") and
 * its code for what cannot be done so. */
struct gvs_remote_shared {
    const struct gvs_remote_api *api;
    uint16_t share, unshare, copy;
    int32_t notsup;
    /* Where memory is not shared (tcp://, tls://), the op of a posted
     * device-to-host copy into page-locked memory (remote_be.h,
     * d2h_posted): it returns once the copy is on the stream, its bytes
     * landing before anything can show it done; 0 for none. */
    uint16_t posted;
    /* The op of a stream-ordered copy between device memory and shared
     * memory that is posted (no reply): the API proved that it cannot be
     * refused at once (GVS_REMOTE_SHARED_PROVEN); a failure the backend
     * still meets is the lane's next synchronizing call's.  0 for none. */
    uint16_t copy_posted;
};

/* gvs_remote_shared_try_copy's flag, the frontend's alone (never on the
 * wire): the API's own tables prove an ON_STREAM copy valid (the device
 * range inside an allocation of the stream's device, the stream known,
 * no capture under way), so that it may be posted like a launch. */
enum { GVS_REMOTE_SHARED_PROVEN = 1u << 8 };

/* An allocation with the flags (portable, mapped, write-combined), shared
 * through sh when not NULL and the connection can share it; *pp NULL for
 * size 0. */
enum gvs_remote_host_rc
gvs_remote_host_alloc(void **pp, size_t size, unsigned int flags,
                      const struct gvs_remote_shared *sh);
/* Frees an allocation by its base; *unmapped, the API's result of the
 * backend's unsharing when it was shared (through sh's ops). */
enum gvs_remote_host_rc
gvs_remote_host_free(void *p, const struct gvs_remote_shared *sh,
                     int32_t *unmapped);
/* Registers [p, p + size) with the flags (portable, mapped, I/O memory,
 * read-only): client memory, which the GPU cannot reach. */
enum gvs_remote_host_rc gvs_remote_host_register(void *p, size_t size,
                                                 unsigned int flags);
/* Unregisters the registration starting at p. */
enum gvs_remote_host_rc gvs_remote_host_unregister(void *p);
/* Whether p lies in tracked memory: 1 and its base and record. */
int gvs_remote_host_find(const void *p, uint64_t *base,
                         struct gvs_remote_host *out);
/* Whether [p, p + len) lies in one region shared with the backend. */
int gvs_remote_host_shared(const void *p, size_t len);

/* Synchronous host-to-device copies of at most this many bytes always
 * send them (sh->notsup), shared memory or not: the worker's copy of a
 * few bytes from its request is done sooner than a DMA from page-locked
 * memory whose word the GPU writes, but from 1 KiB on the DMA is
 * (docs/performance.md, 2026-12-02, "synchronous copies of 1-4 KiB by
 * DMA"). */
#define GVS_REMOTE_H2D_INLINE_MAX ((size_t)256)

/* A copy between device memory at dev and host memory of len bytes that
 * moves no byte over the connection: one DMA when host lies in shared
 * memory, else the staging pipeline (pageable memory: to the device
 * from 64 KiB, from it from 4 KiB; a proven copy, posted: to the device
 * from 32 KiB, from it at any size).
 * h2d: host to device, else device to host.  flags: the wire's
 * (remote_be.h, GVS_REMOTE_SHARED_*): ON_STREAM ordered on stream (with
 * pageable memory it returns once done, as natively, WAIT implied), else
 * as a synchronous copy.  Where memory is not shared, a device-to-host
 * ON_STREAM copy into page-locked memory is posted (sh->posted).  The
 * API's result, or sh->notsup when none of these ways can be used: the
 * caller then sends the bytes.  With GVS_REMOTE_SHARED_PROVEN and
 * ON_STREAM, a copy of shared memory is posted through sh->copy_posted
 * (one DMA on the stream, as natively: the call returns before it); with
 * PROVEN and ON_STREAM | WAIT (a synchronous copy, ordered on stream:
 * the legacy or the per-thread default stream) it returns once a word
 * the worker stores after the copy and its wait says it is done, before
 * the reply comes (frontend/signal.c), as do the chunks of a proven
 * staged copy that must be done when it returns. */
int32_t gvs_remote_shared_try_copy(const struct gvs_remote_shared *sh,
                                   uint64_t stream, unsigned flags, int h2d,
                                   uint64_t dev, void *host, size_t len);
/* A posted device-to-host copy (docs/remoting.md, "Posted device-to-host
 * copies") into any host memory, whatever the connection: the copy is on
 * the stream when it returns, its bytes land before anything can show it
 * done.  1 with the API's result in *result; 0 when it cannot be posted
 * (sh has no posted op, a capture is under way, or the worker has no
 * pinned memory free): the caller then copies the ordinary way.  For
 * what the program did not ask to be written when it returns: a graph's
 * copy node's bytes after a launch (the runtime frontend). */
int gvs_remote_posted_d2h(const struct gvs_remote_shared *sh,
                          uint64_t stream, uint64_t dev, void *host,
                          size_t len, int32_t *result);

/* Caller holds the client lock, about to send a device op with a device
 * (or context) current: the first time on a connection that shares
 * memory, sends the staging region's share ahead of it.  Pinning takes
 * milliseconds and holds the driver: asked for early, no copy waits for
 * it later.  Its failure only means no staging. */
void gvs_remote_staging_kick_locked(const struct gvs_remote_shared *sh,
                                    struct gvs_client *cl);

#endif
