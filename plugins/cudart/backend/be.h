/*
 * Private contracts between the files of the cudart backend plugin
 * (gvs-cudart.so).  Handlers run in a session's worker process on
 * several threads at once (include/gvs/plugin.h): the executor, lane
 * threads for blocking ops.  A lane's own requests never overlap, so
 * per-lane state (struct be_lane) needs no lock; what the session shares
 * is guarded.  A handler of a `device` op first makes its lane's device
 * current on its thread (cudart_be_enter).
 *
 * Every client-supplied value is bounded before use; device pointers are
 * u64 values handed only to CUDA, after be_check_device_range where CUDA
 * would not check them itself.
 */
#ifndef CUDART_BE_H
#define CUDART_BE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gvs/plugin.h"
#include "remote_be.h"

/* Largest kernel parameter block (CUDA 12.1+ on Volta and later). */
#define BE_PARAM_MAX 32764u
/* Per-session bounds on what a client may make us hold. */
#define BE_MAX_MODULES 4096u
#define BE_MAX_NAMES 65536u
#define BE_NAME_MAX_LEN 65536u

struct be_param {
    uint32_t offset;
    uint32_t size;
};

struct be_func {
    cudaKernel_t kernel;
    cudaError_t status; /* why the kernel is unusable, or cudaSuccess */
    uint32_t nparams;
    uint32_t param_bytes;
    struct be_param *params;
};

/* A loaded module.  Its descriptor lives until the session closes, so a
 * pointer from be_module_get stays valid; unloading releases the library
 * and its image only. */
struct be_module {
    cudaLibrary_t lib; /* NULL once unloaded */
    void *image;       /* the fat binary, kept while the library lives */
    uint32_t nfuncs;
    struct be_func *funcs;
    uint32_t nvars;
    char **vars; /* global names */
};

/* What the runtime keeps per lane (client thread), in the slot of the
 * layer's lane (remote_be.h). */
struct be_lane {
    int device; /* the lane's current device, moved by SET_DEVICE */
    /* The client thread made a call that makes the device's primary
     * context current on it, as the runtime does at the thread's first
     * call needing a device; before, calls that act on the current
     * context alone find none (cudart_be_enter). */
    int context_current;
    /* First failure of a bulk transfer's posted chunks, reported by its
     * final chunk. */
    cudaError_t latched;
};

/* The remoting layer's backend (remote_be.h), set at session open: the
 * lanes, posted failures, handle table and quota are the layer's, one
 * for every API of the session. */
extern const struct gvs_remote_be *be_remote;

/* shared_mem.c: how the runtime pins, copies and stages for the layer's
 * shared host memory and pinned staging (remote_be.h). */
extern const struct gvs_remote_pinner be_pinner;
/* The regions and staging buffers the runtime pinned go (session
 * close). */
void be_shared_free(void);

struct be_session {
    const struct gvs_host_api *host;
    struct gvs_session *session; /* for host->notify */
    pthread_mutex_t mods_lock;   /* the table below */
    struct be_module **mods;     /* ids index this table, never reused */
    uint32_t nmods, cap_mods;
};

/* quota.c: the session's GPU memory quota -----------------------------
 * The bytes of device memory the session's allocations hold, counted by
 * the handlers that allocate and free (docs/cudart.md, "Memory quota")
 * against the quota gvsd gave the session (memory_quota, 0: none), and
 * reported to gvsd (host->report_memory) after every change.  A worker
 * serves one session, so the count is the process's.  Thread-safe: the
 * handlers of one session run on several threads. */

/* The key spaces of the allocations counted: device addresses (linear,
 * pitched, managed, stream-ordered, graph memory), array ids, mipmapped
 * array ids. */
enum be_quota_kind { BE_QUOTA_PTR, BE_QUOTA_ARRAY, BE_QUOTA_MIPMAP };

/* Reads the session's quota; session_open calls it first. */
void be_quota_open(const struct gvs_host_api *host,
                   struct gvs_session *session);
/* Takes bytes (what the allocation about to be made will hold, or a
 * bound) from what the session may still hold, before CUDA is asked, so
 * that two threads cannot both pass the quota:
 * cudaErrorMemoryAllocation, nothing taken, when that would pass it. */
cudaError_t be_quota_take(uint64_t bytes);
/* Settles what be_quota_take(taken) took once CUDA answered e: on
 * success the allocation `key` (of kind; 0 is nothing held) is recorded
 * as holding `bytes` (CUDA's own figure where it gives one, else taken),
 * on the lane's device, for `owner` (the cudaGraph_t of a graph memory
 * node, else 0); on failure taken is given back.  The device is named to
 * gvsd by its UUID (host->report_gpu_uuid) the first time it holds an
 * allocation, so that the metrics show its memory per GPU. */
void be_quota_settle(struct gvs_call *call, cudaError_t e,
                     enum be_quota_kind kind, uint64_t key, uint64_t owner,
                     uint64_t taken, uint64_t bytes);
/* The allocation key of kind was freed: its bytes are given back
 * (nothing for a key not counted: IPC mappings, memory of modules). */
void be_quota_release(enum be_quota_kind kind, uint64_t key);
/* Every allocation on device (a cudaDeviceReset) was freed. */
void be_quota_release_device(int device);
/* The graph owner was destroyed: its memory nodes' bytes go back. */
void be_quota_release_owner(uint64_t owner);
/* What CUDA said of a device's memory, as the session may see it under
 * its quota: total at most the quota, free (unless NULL) at most what is
 * left of it. */
void be_quota_mem_info(size_t *free, size_t *total);
/* A bound on the bytes of a pitched allocation of depth slices of height
 * rows of width bytes, taken before CUDA chooses the pitch; UINT64_MAX
 * (refused) when it overflows. */
uint64_t be_quota_pitched_bound(uint64_t width, uint64_t height,
                                uint64_t depth);

/* async_errors.c: failures of posted ops ---------------------------- */

/* Keeps e as the lane's first unreported failure of a posted op (the
 * layer's latch, reported by the lane's next synchronizing call). */
void be_async_error(struct gvs_call *call, cudaError_t e);

/* lanes.c ------------------------------------------------------------- */

/* The runtime's state of the lane of call, created on first use; NULL
 * when out of memory or past the layer's bound on lanes. */
struct be_lane *be_lane(struct gvs_call *call);
/* Makes the lane's current device and capture mode the calling
 * thread's; the lane's
 * failure to become current (cudaErrorMemoryAllocation if it has no
 * state) is the call's result. */
cudaError_t cudart_be_enter(struct gvs_call *call);
/* After a blocking op's reply and output flush: a cudaDeviceSynchronize
 * that entered tells the layer what it waited for (remote_be.h,
 * settled). */
void be_lane_settled(struct gvs_call *call);
/* The layer's name for the context of call's lane (remote_be.h,
 * device_code), 0 without lane state. */
uintptr_t be_lane_key(struct gvs_call *call);
/* Frees every lane's runtime state. */
void be_lanes_free(struct be_session *s);

/* notifications.c: makes later async notifications and log callbacks
 * send nothing; returns when none uses the session any more. */
void be_notifications_release(void);

/* driver_entry.c: the driver's entry point `name` as of driver API
 * `version`, through the runtime: the backend links no libcuda, so that
 * gvsd loads it where there is no driver.  The runtime's error, or
 * cudaErrorNotSupported where the driver lacks it; *fn is NULL unless
 * cudaSuccess.  The runtime's last error is left as the query left it. */
cudaError_t be_driver_entry(const char *name, unsigned version, void **fn);

/* The driver's calls the worker makes itself where they cost less than
 * the runtime's (launches, copies) or the runtime has none (a stream's
 * 32-bit write), found once; NULL where the driver lacks one. */
typedef CUresult (*be_driver_launch_fn)(CUfunction f, unsigned gx,
                                        unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz,
                                        unsigned shmem, CUstream stream,
                                        void **params, void **extra);
typedef CUresult (*be_driver_copy_async_fn)(CUdeviceptr dst, CUdeviceptr src,
                                            size_t n, CUstream stream);
typedef CUresult (*be_driver_copy_fn)(CUdeviceptr dst, CUdeviceptr src,
                                      size_t n);
typedef CUresult (*be_driver_write_value32_fn)(CUstream stream,
                                               CUdeviceptr addr,
                                               cuuint32_t value,
                                               unsigned int flags);
typedef CUresult (*be_driver_attrs_fn)(unsigned n, CUpointer_attribute *attrs,
                                       void **data, CUdeviceptr p);
typedef CUresult (*be_driver_copy_batch_fn)(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                            size_t *sizes, size_t count,
                                            CUmemcpyAttributes *attrs,
                                            size_t *attrs_idxs,
                                            size_t num_attrs, CUstream s);
struct be_driver {
    be_driver_launch_fn launch;
    be_driver_copy_async_fn copy_async;
    be_driver_copy_fn copy;
    be_driver_write_value32_fn write_value32;
    be_driver_attrs_fn attrs; /* cuPointerGetAttributes */
    be_driver_copy_batch_fn copy_batch; /* cuMemcpyBatchAsync */
    /* What the layer's copy kernel needs (remote_be.h). */
    struct gvs_remote_copy_driver copy_kernel;
};
const struct be_driver *be_driver(void);

/* copies.c: cudaMemcpyAsync and cudaMemcpy of kind k, which the caller
 * checked against the addresses (be_check_device_range), made through
 * the driver where it takes them: the runtime's result and state. */
cudaError_t be_memcpy_async(void *dst, const void *src, size_t n,
                            enum cudaMemcpyKind k, cudaStream_t s);
cudaError_t be_memcpy(void *dst, const void *src, size_t n,
                      enum cudaMemcpyKind k);
/* A stream-ordered copy of kind k between unified addresses the caller
 * checked, on s (entered), through the layer: a posted one may go on s
 * with the lane's next ones as one batch, one with a reply follows the
 * copies batched before it (remote_be.h, copy_posted).  The handler
 * calls be_remote->batch_flush before it returns unless
 * call->next_same. */
cudaError_t be_copy_posted(struct gvs_call *call, cudaStream_t s, void *dst,
                           const void *src, size_t n, enum cudaMemcpyKind k);

/* cudaErrorInvalidValue unless [p, p + len) starts and ends in device
 * (or managed) memory: CUDA's behaviour on a host pointer passed where a
 * device one is expected is undefined, and a host address here would be
 * one of the worker's. */
cudaError_t be_check_device_range(uint64_t p, uint64_t len);
/* The bytes from p to the end of the allocation that holds it when the
 * driver types it device memory; 0 when p is in none, or the driver
 * cannot tell. */
uint64_t be_device_left(uint64_t p);

struct apigen_call;
/* A device-to-host piece's reply (the range checked, the call entered):
 * i32 result, then on success u32 len and the len bytes from device
 * address src, copied with cudaMemcpy, or on *s and the stream waited
 * for.  From 1 MiB the bytes are DMAed into the lane's pinned staging
 * (stage_d2h) and sent from there as the reply's tail, the lane's next
 * piece read ahead meanwhile (stage_d2h_next); below, or without one,
 * CUDA stages them into the reply.  The handler's result. */
int be_reply_d2h(struct gvs_call *call, struct apigen_call *c, uint64_t src,
                 uint64_t len, const cudaStream_t *s);

/* The module with this id, or NULL if there is none or it was unloaded
 * (a protocol violation: the frontend only sends ids it was given).
 * Thread-safe. */
struct be_module *be_module_get(struct be_session *s, uint32_t id);

/* Releases every module of the session. */
void be_modules_free(struct be_session *s);

/* module.c, for library.c: a library loaded through the library API is
 * a module of the same table. */
/* Releases what m holds (its library too) and zeroes it. */
void be_module_release(struct be_module *m);
/* Enters m (a copy is made) in the table and gives its id; GVS_E_RANGE
 * past BE_MAX_MODULES, GVS_E_NOMEM.  On failure m is left to the
 * caller. */
int be_module_add(struct be_session *s, const struct be_module *m,
                  uint32_t *id);
/* Learns f->kernel's parameter layout while f->status is cudaSuccess;
 * a failure becomes f->status and leaves no parameters. */
void be_learn_params(struct be_func *f);
/* Appends f's layout: i32 status, u32 nparams, nparams x {u32 offset,
 * u32 size}. */
void be_put_layout(struct apigen_call *c, const struct be_func *f);

#endif
