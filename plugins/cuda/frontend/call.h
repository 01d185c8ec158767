/*
 * The hooks of the calls generated from cuda.api (tools/apigen/README.md,
 * "Generated files"), on the remoting layer's round trips (call.c), and
 * the initialization state cuInit sets (init.c).
 */
#ifndef CUDA_FE_CALL_H
#define CUDA_FE_CALL_H

#include "fe.h"

#include "apigen_rt.h"

CUresult cuda_fe_begin(struct apigen_call *c);
CUresult cuda_fe_run(struct apigen_call *c, uint16_t op, unsigned flags);
CUresult cuda_fe_post(struct apigen_call *c, uint16_t op, unsigned flags);
CUresult cuda_fe_end(struct apigen_call *c, CUresult r);
CUresult cuda_fe_ret(CUresult r);
/* cuInit succeeded: the calls that need it go to the backend from now. */
void cuda_fe_set_initialized(void);
/* Whether cuInit succeeded in this process's session. */
int cuda_fe_initialized(void);

/* Runs the device op whose request c holds (after cuda_fe_begin): its
 * result, and where out is not NULL the u64 its reply carries after
 * CUDA_SUCCESS, written to *out then. */
CUresult cuda_fe_run_u64(struct apigen_call *c, uint16_t op, uint64_t *out);
/* A device op whose request is n u64s (ids) and whose reply is the
 * result and, where out is not NULL, one u64 written to *out on
 * success. */
CUresult cuda_fe_call_ids(uint16_t op, const uint64_t *in, int n,
                          uint64_t *out);

/* Sends a request built in c->put (after cuda_fe_begin) as a hand-written
 * call does: waited for unless post, which has no reply. */
struct gvs_client;
/* The process's connected client, or the driver's failure code. */
CUresult cuda_fe_client(struct gvs_client **out);
/* The code for a failed gvs_client_* call. */
CUresult cuda_fe_transport(int rc);

/* notify.c: the plugin's notifications go to their handlers; before the
 * first connection.  0 or a negative GVS_E_* code. */
int cuda_fe_notify_init(void);

/* streams.c: a device op that makes an object (a stream, an event, a
 * graph) of u32 flags, and of i32 prio where has_prio: its id in *id. */
CUresult cuda_fe_create(uint16_t op, uint32_t flags, int has_prio, int prio,
                        uint64_t *id);

/* streams.c: a stream's wire value; the default stream of a per-thread
 * call (a _ptsz/_ptds twin) is CU_STREAM_PER_THREAD. */
uint64_t cuda_fe_stream_wire(CUstream s, int per_thread);
/* streams.c: the device of the context of the stream of a wire value (a
 * default stream is the current context's), as the layer's table of the
 * process's streams knows it (gvs_remote_known_*): 0, or -1 when unknown. */
int cuda_fe_stream_device(uint64_t wire, CUdevice *dev);
/* contexts.c: the device of a context of the session's: 0, or -1. */
int cuda_fe_ctx_device_of(CUcontext ctx, CUdevice *dev);

/* contexts.c ----------------------------------------------------------
 * Each thread's context stack is the client's; the backend knows each
 * lane's current context, posted ahead of the lane's next request that
 * depends on it (call.c's pre-send work). */

/* The calling thread's current context, or NULL.  Where the thread has
 * none of its own and gvs's runtime frontend serves it, the runtime
 * device's primary context, asked of the backend the first time (a
 * round trip: never while a request is being built). */
CUcontext cuda_fe_ctx_current(void);
/* The same, asking nothing: for the client lock's holder. */
CUcontext cuda_fe_ctx_current_locked(void);
/* Caller holds the client lock: posts the thread's current context as
 * its lane's when it changed.  0 or a negative GVS_E_* code. */
int cuda_fe_ctx_sync_locked(struct gvs_client *cl);
/* The device of the thread's current context: CUDA_ERROR_INVALID_CONTEXT
 * without one. */
CUresult cuda_fe_ctx_device(CUdevice *dev);
/* How many times a context of this process was destroyed, or a primary
 * context released or reset: what was kept for a context (a kernel's
 * function in it) is valid while it stays.  Only grows. */
uint64_t cuda_fe_ctx_epoch(void);
/* fork(), in the child: the new session knows no context. */
void cuda_fe_ctx_fork_child(void);

/* call.c: the driver as the layer's round trips know it. */
extern const struct gvs_remote_api cuda_fe_remote_api;
/* call.c: the driver's ops of the layer's shared host memory
 * (gvs_remote.h, "Shared host memory"). */
extern const struct gvs_remote_shared cuda_fe_shared;

/* managed.c: managed memory's shadows (the layer's).  push: caller
 * holds the client lock, before a device-dependent request, posts the
 * pages the program wrote.  synced: after op succeeded, pulls the
 * shadows when it synchronized.  shadow: [p, p + size) is managed memory
 * of dev, shadowed (and known here as device memory) with its current
 * bytes; CUDA_ERROR_OUT_OF_MEMORY when its addresses are taken here. */
int cuda_fe_managed_push_locked(struct gvs_client *cl);
CUresult cuda_fe_managed_synced(uint16_t op);
CUresult cuda_fe_managed_shadow(uint64_t p, uint64_t size, CUdevice dev);

/* memory.c: the device memory known here, for unified copies and
 * pointer queries.  note records [p, p + size) on dev; forget drops the
 * range at p. */
void cuda_fe_mem_note(uint64_t p, uint64_t size, CUdevice dev);
void cuda_fe_mem_forget(uint64_t p);
/* Runs the request in c of op, whose reply is i32, u64 address, u64
 * size of device memory (a global, an IPC mapping), and notes it. */
CUresult cuda_fe_run_noted(struct apigen_call *c, uint16_t op, uint64_t *p,
                           uint64_t *size);
/* Whether p lies in device memory known here. */
int cuda_fe_mem_is_device(uint64_t p);
/* Whether p lies in a range noted here (no round trip): the layer's
 * lookup for the runtime frontend (gvs_remote_device_memory). */
int cuda_fe_mem_known(uint64_t p);

/* memory.c: forgets every range noted at an address in [p, p + size)
 * (an unmapped virtual range's mappings). */
void cuda_fe_mem_forget_range(uint64_t p, uint64_t size);

/* pools.c: an access list as the backend reads it (cuda_be_get_access):
 * u32 count, count x {i32 location type, i32 location id, i32 flags}. */
#define CUDA_FE_ACCESS_MAX 1024u
void cuda_fe_put_access(struct apigen_call *c, const CUmemAccessDesc *map,
                        size_t count);
/* Whether [p, p + len) lies in one allocation known here, asking the
 * backend nothing: 1 and its device in *dev, else 0. */
int cuda_fe_mem_device_of(uint64_t p, uint64_t len, CUdevice *dev);

/* hostfunc.c: the layer's record of a graph host node's function, run
 * on the client each time the graph runs the node, with the context
 * current here; its callback id in *id. */
CUresult cuda_fe_host_node(CUhostFn fn, void *user, uint64_t *id);
/* copy.c: begins a copy's or memset's request with the header the
 * backend reads first (cuda_be_enter_stream), u64 stream and u8 flags;
 * CUDA_ERROR_NOT_INITIALIZED before cuInit. */
CUresult cuda_fe_copy_begin(struct apigen_call *c, uint64_t stream,
                            uint8_t flags);
/* The program's function and data of a host node's callback id, as it
 * gave them: CUDA_ERROR_INVALID_VALUE for an id that is none. */
CUresult cuda_fe_host_node_params(uint64_t id, CUDA_HOST_NODE_PARAMS *out);

/* memops.c: the operations of a stream memory operation batch or a
 * batch memory operation node on the wire (cuda.api, STREAM_MEMOP): u32
 * count, then each; CUDA_ERROR_INVALID_VALUE for more than the backend
 * takes, or none to read.  get reads as many into ops (room for max),
 * the count in *count; malformed: c->rc. */
CUresult cuda_fe_put_memops(struct apigen_call *c, unsigned int count,
                            const CUstreamBatchMemOpParams *ops);
void cuda_fe_get_memops(struct apigen_call *c, CUstreamBatchMemOpParams *ops,
                        unsigned int max, unsigned int *count);
#define CUDA_FE_MEMOPS_MAX 256u

#endif
