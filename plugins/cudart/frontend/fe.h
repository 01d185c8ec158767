/*
 * Private contracts between the files of the cudart frontend
 * (libcudart.so.13).  The library is built with hidden visibility; the
 * CUDA declarations below are given default visibility so that the
 * functions defined against them are exported, and the version script
 * keeps everything else out of the dynamic symbol table.
 *
 * Must be included before any CUDA header.
 */
#ifndef CUDART_FE_H
#define CUDART_FE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#pragma GCC visibility push(default)
#include <cuda_runtime_api.h>

/* Entry points nvcc-generated host code calls (crt/host_runtime.h and
 * crt/device_functions.h declare them for C++ only). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);
void __cudaRegisterFunction(void **handle, const char *hostFun,
                            char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress,
                       const char *deviceName, int ext, size_t size,
                       int constant, int global);
void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress,
                              char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global);
void __cudaRegisterHostVar(void **handle, const char *deviceName,
                           char *hostVar, size_t size);
char __cudaInitModule(void **handle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                     size_t sharedMem,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                       size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
                               dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                    dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream);

/* What --default-stream per-thread compiles the slice's calls to
 * (cuda_runtime_api.h declares them only under that option). */
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind);
cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
                                    size_t count, size_t offset,
                                    enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol,
                                      size_t count, size_t offset,
                                      enum cudaMemcpyKind kind);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim,
                                  dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream);
#pragma GCC visibility pop

#include "apigen_rt.h"
#include "gvs/client.h"

/* Largest reply of a call that moves no bulk data. */
#define FE_SMALL_REPLY_MAX ((size_t)64 << 10)
/* Largest kernel parameter block (CUDA 12.1+ on Volta and later). */
#define FE_PARAM_MAX 32764u

/* call.c: the connection and round trips --------------------------------
 *
 * Results of hand-written and generated calls alike: a backend that was
 * never reached gives cudaErrorInsufficientDriver, one that went away
 * mid-session cudaErrorDevicesUnavailable, an undecodable reply
 * cudaErrorUnknown. */

/* The process's connected client, connecting and initializing the
 * session's runtime on first use.  Returns the sticky failure code once
 * the connection or the initialization has failed. */
cudaError_t fe_client(struct gvs_client **out);
/* Devices the backend shows, known once fe_client has succeeded. */
int fe_device_count(void);
/* The code for a failed gvs_client_* call. */
cudaError_t fe_transport_error(int rc);
/* The connection's failure code once it has failed, else cudaSuccess.
 * Never connects. */
cudaError_t fe_dead_code(void);
/* Whether a connection has been made: calls that merely release backend
 * resources use it so that they never connect (at exit, say). */
int fe_connected(void);

/* Caller holds the client lock.  Sends one request of the calling
 * thread's lane; with APIGEN_DEVICE in flags, first brings the lane's
 * device on the backend in line with the thread's (device.c).  id may be
 * NULL for a noreply request; otherwise the caller releases the lock and
 * collects the reply with gvs_client_wait. */
int fe_send_locked(struct gvs_client *cl, uint16_t op, unsigned flags,
                   int noreply, const struct iovec *iov, int n,
                   uint64_t *id);

/* Hooks of the generated stubs (tools/apigen/README.md).  begin takes
 * this thread's request and reply buffers; run sends and waits, and
 * returns the transport error or the reply's leading result; end checks
 * that the reply was read exactly and turns a decoding failure into
 * cudaErrorUnknown. */
cudaError_t cudart_fe_begin(struct apigen_call *c);
cudaError_t cudart_fe_run(struct apigen_call *c, uint16_t op,
                          unsigned flags);
cudaError_t cudart_fe_post(struct apigen_call *c, uint16_t op,
                           unsigned flags);
cudaError_t cudart_fe_end(struct apigen_call *c, cudaError_t r);

/* Reads a reply's leading result; cudaErrorUnknown if absent. */
cudaError_t fe_reply_result(struct apigen_call *c);
/* The result of a reply that is a result alone; cudaErrorUnknown if it
 * is not exactly that. */
cudaError_t fe_reply_result_only(struct gvs_buf *rep);


/* errors.c: per-thread last error ---------------------------------------- */

/* Records r as this thread's last error when it is a failure; returns r.
 * Every public function returns through it. */
cudaError_t cudart_fe_ret(cudaError_t r);

/* device.c: per-thread current device ------------------------------------ */

/* The backend keeps a current device per lane; cudaSetDevice posts
 * SET_DEVICE for the calling thread's lane when the device changes. */
int fe_thread_device(void);
/* Caller holds the client lock: posts SET_DEVICE when the lane's device
 * on the backend is not the thread's (a forked child's new session
 * starts every lane on device 0). */
int fe_device_sync_locked(struct gvs_client *cl);
/* fork(), in the child: the new session's lanes are on device 0. */
void fe_device_forget_session(void);

/* memory.c: device allocations made through us --------------------------- */

/* Records a device allocation made by another call (pitched, 3D,
 * stream-ordered) so that cudaMemcpyDefault classifies it; 0 when it
 * could not be recorded.  untrack forgets the allocation at base. */
int fe_mem_track(const void *base, size_t size);
void fe_mem_untrack(const void *base);
/* Whether p lies inside an allocation or a module global known here. */
int fe_is_device_ptr(const void *p);
/* The device of the allocation known here that holds all of [p, p+n),
 * or -1 when none does. */
int fe_mem_range_device(const void *p, size_t n);
void fe_mem_forget_device(int dev);
/* fork(): lock before, unlock in the parent; the child forgets every
 * allocation (its session is new) and unlocks. */
void fe_mem_fork_lock(void);
void fe_mem_fork_unlock(void);
void fe_mem_fork_child(void);

/* hostmem.c: whether p lies in host memory allocated or registered
 * through the frontend (the client's own, page-locked in name only). */
int fe_host_contains(const void *p);

/* managed.c: managed memory (docs/cudart.md, "Managed memory") ---------- */

/* Caller holds the client lock, before a device-dependent request:
 * posts the pages of managed memory the program wrote since the last
 * push. */
int fe_managed_push_locked(struct gvs_client *cl);
/* call.c: the runtime as the layer's round trips know it. */
extern const struct gvs_remote_api fe_remote_api;
/* After a successful op: when it synchronized (device, stream or event),
 * pulls managed memory from the device. */
cudaError_t fe_managed_synced(uint16_t op);
/* cudaFree of managed memory drops its shadow. */
void fe_managed_forget(const void *p);
/* __cudaRegisterManagedVar records a variable; once its module is
 * uploaded, vars_ready gives each one its shadow and sets the host
 * code's pointer to it. */
void fe_managed_var_register(void **handle, void **ptr, const char *name,
                             size_t size);
cudaError_t fe_managed_vars_ready(void **handle, uint32_t module);

/* memcpy.c: bulk transfers, shared with the symbol copies ---------------- */

/* cudaMemcpy's copy, on the legacy default stream or (per_thread) the
 * calling thread's. */
cudaError_t fe_copy(void *dst, const void *src, size_t count,
                    enum cudaMemcpyKind kind, int per_thread);

/* module.c: registered modules ------------------------------------------- */

struct fe_param {
    uint32_t offset;
    uint32_t size;
};

struct fe_module;

/* A kernel; its address is the cudaKernel_t handed to the program. */
struct fe_func {
    uint32_t index; /* in its module, as uploaded */
    struct fe_module *mod;
    const void *host; /* the host stub nvcc registered */
    char *name;
    /* Valid once the module is uploaded. */
    cudaError_t status;
    uint32_t nparams;
    uint32_t param_bytes; /* end of the last parameter */
    struct fe_param *params;
    /* The last launch configuration the backend accepted, packed by
     * launch.c (0: none): launches within it are posted without waiting. */
    _Atomic uint64_t ok_config;
};

/* Launches of f are checked by the backend again before any is posted
 * (its attributes changed, or its device was reset). */
static inline void fe_kernel_forget_config(struct fe_func *f)
{
    f->ok_config = 0;
}

/* Finds the kernel registered for a host stub, or whose handle is p. */
struct fe_func *fe_func_lookup(const void *p);
/* The kernel the backend names by its module's remote id and its index
 * in it, or NULL. */
struct fe_func *fe_func_remote(uint32_t module, uint32_t index);
/* Uploads the kernel's module if needed; returns its remote id in *id. */
cudaError_t fe_module_ready(struct fe_module *m, uint32_t *id);

/* Caller holds the client lock: posts image in the layer's STAGE pieces, for
 * a MODULE_LOAD or LIBRARY_LOAD that says staged. */
int fe_stage_locked(struct gvs_client *cl, const uint8_t *image,
                    size_t image_len);

/* Libraries (library.c): a library is a module of the list, uploaded
 * from the start and without host stubs; its address is the
 * cudaLibrary_t.  More kernels than this in one reply are malformed. */
#define FE_LIBRARY_MAX_KERNELS 65536u
/* Decodes LIBRARY_LOAD's successful reply after its result (u32 id, u32
 * count, the layouts) into a new library, entered in the list. */
cudaError_t fe_library_decode(struct apigen_call *c, struct fe_module **out);
/* Whether lib is a loaded library of this session; its remote id and
 * kernel count. */
int fe_library_info(const struct fe_module *lib, uint32_t *id,
                    uint32_t *nkernels);
/* The library's kernel at index, or NULL. */
struct fe_func *fe_library_kernel(struct fe_module *lib, uint32_t index);
/* Records a global of the library so that cudaMemcpyDefault sees it as
 * device memory of the calling thread's device. */
void fe_library_note_global(struct fe_module *lib, uint64_t addr,
                            uint64_t size);
/* Forgets lib: 1 and its remote id when the backend holds it, -1 when
 * it was this session's parent's (fork), 0 when lib is no library. */
int fe_library_remove(struct fe_module *lib, uint32_t *id);

/* A module global resolved for the calling thread's device. */
struct fe_symbol {
    uint64_t addr;
    uint64_t size;
};
cudaError_t fe_symbol_resolve(const void *symbol, struct fe_symbol *out);
/* Whether p lies inside a resolved module global. */
int fe_symbol_contains(const void *p);
/* Global addresses of dev are stale after a reset. */
void fe_modules_forget_device(int dev);
/* fork(): as for memory; the child's session has no uploaded module. */
void fe_modules_fork_lock(void);
void fe_modules_fork_unlock(void);
void fe_modules_fork_child(void);

#endif
