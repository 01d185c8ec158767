/*
 * Private contracts between the files of the CUDA driver backend plugin
 * (gvs-cuda.so).  Handlers run in a session's worker process on several
 * threads at once (include/gvs/plugin.h).
 *
 * The plugin never links the driver: a gvsd on a machine without one
 * still loads it (and answers as a machine with no device).  The driver
 * functions it calls are resolved once, at the first call that needs
 * them, from the worker's libcuda.so.1 (driver.c); the generated handlers
 * call them through CUDA_DRV(NAME), and their prototypes are cuda.h's
 * own (__typeof__).
 */
#ifndef CUDA_BE_H
#define CUDA_BE_H

/* Every name as the driver exports it (cuDeviceGetUuid is not
 * cuDeviceGetUuid_v2 here), as the frontend sees them (frontend/fe.h). */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <cudaProfiler.h>

#include "cuda_be_gen.h"
#include "gvs/plugin.h"
#include "remote_be.h"

/* The driver functions the hand-written handlers call, beside those of
 * the generated ones (CUDA_BE_CALLED). */
#define CUDA_BE_CALLED_BY_HAND(X)                                            \
    X(cuDeviceGetName)                                                       \
    X(cuDeviceTotalMem_v2)                                                   \
    X(cuDeviceGetPCIBusId)                                                   \
    X(cuDeviceGetByPCIBusId)                                                 \
    X(cuDevicePrimaryCtxRetain)                                              \
    X(cuCtxCreate_v2)                                                        \
    X(cuCtxDestroy_v2)                                                       \
    X(cuCtxGetCurrent)                                                       \
    X(cuCtxGetDevice)                                                        \
    X(cuCtxSetCurrent)                                                       \
    X(cuCtxSynchronize)                                                      \
    X(cuMemAlloc_v2)                                                         \
    X(cuMemFree_v2)                                                          \
    X(cuMemAllocPitch_v2)                                                    \
    X(cuMemAllocManaged)                                                     \
    X(cuLibraryGetManaged)                                                   \
    X(cuMemAdvise_v2)                                                        \
    X(cuMemPrefetchAsync_v2)                                                 \
    X(cuMemRangeGetAttribute)                                                \
    X(cuMemAllocAsync)                                                       \
    X(cuMemAllocFromPoolAsync)                                               \
    X(cuMemFreeAsync)                                                        \
    X(cuMemPoolCreate)                                                       \
    X(cuMemPoolDestroy)                                                      \
    X(cuMemPoolSetAttribute)                                                 \
    X(cuMemPoolGetAttribute)                                                 \
    X(cuDeviceGetDefaultMemPool)                                             \
    X(cuDeviceGetMemPool)                                                    \
    X(cuDeviceSetMemPool)                                                    \
    X(cuMemGetDefaultMemPool)                                                \
    X(cuMemGetMemPool)                                                       \
    X(cuMemSetMemPool)                                                       \
    X(cuMemcpyBatchAsync_v2)                                                 \
    X(cuMemPoolSetAccess)                                                    \
    X(cuMemPoolGetAccess)                                                    \
    X(cuMemAddressReserve)                                                   \
    X(cuMemAddressFree)                                                      \
    X(cuMemCreate)                                                           \
    X(cuMemRelease)                                                          \
    X(cuMemMap)                                                              \
    X(cuMemUnmap)                                                            \
    X(cuMemSetAccess)                                                        \
    X(cuMemGetAccess)                                                        \
    X(cuMemGetAllocationGranularity)                                         \
    X(cuMemGetAllocationPropertiesFromHandle)                                \
    X(cuMemRetainAllocationHandle)                                           \
    X(cuMemExportToShareableHandle)                                          \
    X(cuIpcGetMemHandle)                                                     \
    X(cuIpcOpenMemHandle_v2)                                                 \
    X(cuIpcCloseMemHandle)                                                   \
    X(cuIpcOpenEventHandle)                                                  \
    X(cuMemGetAddressRange_v2)                                               \
    X(cuDeviceGetHostAtomicCapabilities)                                     \
    X(cuDeviceGetP2PAtomicCapabilities)                                      \
    X(cuLogsDumpToMemory)                                                    \
    X(cuStreamGetAttribute)                                                  \
    X(cuStreamSetAttribute)                                                          \
    X(cuMemGetInfo_v2)                                                       \
    X(cuPointerGetAttribute)                                                 \
    X(cuMemHostRegister_v2)                                                  \
    X(cuMemHostAlloc)                                                        \
    X(cuMemFreeHost)                                                         \
    X(cuMemHostUnregister)                                                   \
    X(cuMemHostGetDevicePointer_v2)                                          \
    X(cuMemcpyHtoD_v2)                                                       \
    X(cuMemcpyHtoDAsync_v2)                                                  \
    X(cuMemcpyDtoH_v2)                                                       \
    X(cuMemcpyDtoHAsync_v2)                                                  \
    X(cuMemcpyDtoD_v2)                                                       \
    X(cuMemcpyDtoDAsync_v2)                                                  \
    X(cuMemcpy2D_v2)                                                         \
    X(cuMemcpy2DAsync_v2)                                                    \
    X(cuMemsetD2D8_v2)                                                       \
    X(cuMemsetD2D16_v2)                                                      \
    X(cuMemsetD2D32_v2)                                                      \
    X(cuMemsetD2D8Async)                                                     \
    X(cuMemsetD2D16Async)                                                    \
    X(cuMemsetD2D32Async)                                                    \
    X(cuMemsetD8_v2)                                                         \
    X(cuMemsetD16_v2)                                                        \
    X(cuMemsetD32_v2)                                                        \
    X(cuMemsetD8Async)                                                       \
    X(cuMemsetD16Async)                                                      \
    X(cuMemsetD32Async)                                                      \
    X(cuLibraryLoadData)                                                     \
    X(cuLibraryUnload)                                                       \
    X(cuLibraryGetKernelCount)                                               \
    X(cuLibraryEnumerateKernels)                                             \
    X(cuLibraryGetGlobal)                                                    \
    X(cuKernelGetName)                                                       \
    X(cuKernelGetParamInfo)                                                  \
    X(cuKernelGetFunction)                                                   \
    X(cuKernelGetAttribute)                                                  \
    X(cuKernelSetAttribute)                                                  \
    X(cuModuleLoadDataEx)                                                    \
    X(cuModuleUnload)                                                        \
    X(cuModuleGetFunctionCount)                                              \
    X(cuModuleEnumerateFunctions)                                            \
    X(cuModuleGetGlobal_v2)                                                  \
    X(cuFuncGetName)                                                         \
    X(cuFuncGetParamInfo)                                                    \
    X(cuFuncGetAttribute)                                                    \
    X(cuFuncSetAttribute)                                                    \
    X(cuLaunchKernel)                                                        \
    X(cuLaunchKernelEx)                                                      \
    X(cuStreamCreateWithPriority)                                            \
    X(cuStreamDestroy_v2)                                                    \
    X(cuEventCreate)                                                         \
    X(cuEventDestroy_v2)                                                     \
    X(cuStreamGetCaptureInfo_v3)                                             \
    X(cuOccupancyMaxActiveClusters)                                          \
    X(cuOccupancyMaxPotentialClusterSize)                                    \
    X(cuDevicePrimaryCtxRelease_v2)                                          \
    X(cuDevicePrimaryCtxReset_v2)                                            \
    X(cuStreamGetCtx)                                                        \
    X(cuLaunchHostFunc)                                                      \
    X(cuStreamAddCallback)                                                   \
    X(cuArrayCreate_v2)                                                      \
    X(cuArray3DCreate_v2)                                                    \
    X(cuMipmappedArrayCreate)                                                \
    X(cuArrayDestroy)                                                        \
    X(cuMipmappedArrayDestroy)                                               \
    X(cuMipmappedArrayGetLevel)                                              \
    X(cuArrayGetPlane)                                                       \
    X(cuMemcpy3D_v2)                                                         \
    X(cuMemcpy3DAsync_v2)                                                    \
    X(cuTexObjectCreate)                                                     \
    X(cuTexObjectDestroy)                                                    \
    X(cuSurfObjectCreate)                                                    \
    X(cuSurfObjectDestroy)                                                   \
    X(cuGraphCreate)                                                         \
    X(cuGraphDestroy)                                                        \
    X(cuGraphAddNode)                                                        \
    X(cuGraphNodeSetParams)                                                  \
    X(cuGraphExecNodeSetParams)                                              \
    X(cuGraphDestroyNode)                                                    \
    X(cuGraphInstantiateWithFlags)                                           \
    X(cuGraphExecDestroy)                                                    \
    X(cuGraphExecUpdate_v2)                                                  \
    X(cuStreamEndCapture)                                                    \
    X(cuGraphGetNodes)                                                       \
    X(cuGraphGetRootNodes)                                                   \
    X(cuGraphAddDependencies)                                                \
    X(cuGraphRemoveDependencies)                                             \
    X(cuGraphClone)                                                          \
    X(cuGraphNodeFindInClone)                                                \
    X(cuGraphGetEdges_v2)                                                    \
    X(cuGraphNodeGetDependencies_v2)                                         \
    X(cuGraphNodeGetDependentNodes_v2)                                       \
    X(cuUserObjectCreate)                                                    \
    X(cuUserObjectRetain)                                                    \
    X(cuUserObjectRelease)                                                   \
    X(cuGraphRetainUserObject)                                               \
    X(cuGraphReleaseUserObject)                                              \
    X(cuStreamBeginCapture_v2)                                               \
    X(cuStreamBeginCaptureToGraph)                                           \
    X(cuStreamUpdateCaptureDependencies)                                     \
    X(cuThreadExchangeStreamCaptureMode)                                     \
    X(cuGraphDebugDotPrint)                                                  \
    X(cuMemcpyPeer)                                                          \
    X(cuMemcpyPeerAsync)                                                     \
    X(cuLinkCreate_v2)                                                       \
    X(cuLinkAddData_v2)                                                      \
    X(cuLinkComplete)                                                        \
    X(cuLinkDestroy)                                                         \
    X(cuMemPrefetchBatchAsync)                                               \
    X(cuMemDiscardBatchAsync)                                                \
    X(cuMemDiscardAndPrefetchBatchAsync)                                     \
    X(cuGraphKernelNodeGetParams_v2)                                         \
    X(cuGraphMemcpyNodeGetParams)                                            \
    X(cuGraphMemsetNodeGetParams)                                            \
    X(cuGraphHostNodeGetParams)                                              \
    X(cuGraphChildGraphNodeGetGraph)                                         \
    X(cuGraphEventRecordNodeGetEvent)                                        \
    X(cuGraphEventWaitNodeGetEvent)                                          \
    X(cuGraphMemAllocNodeGetParams)                                          \
    X(cuGraphMemFreeNodeGetParams)                                           \
    X(cuGraphKernelNodeGetAttribute)                                         \
    X(cuGraphKernelNodeSetAttribute)                                         \
    X(cuDeviceGetGraphMemAttribute)                                          \
    X(cuDeviceSetGraphMemAttribute)                                          \
    X(cuGraphConditionalHandleCreate)                                        \
    X(cuStreamWaitValue32)                                                   \
    X(cuStreamWaitValue32_v2)                                                \
    X(cuStreamWriteValue32)                                                  \
    X(cuStreamWriteValue32_v2)                                               \
    X(cuStreamWaitValue64)                                                   \
    X(cuStreamWaitValue64_v2)                                                \
    X(cuStreamWriteValue64)                                                  \
    X(cuStreamWriteValue64_v2)                                               \
    X(cuStreamBatchMemOp)                                                    \
    X(cuStreamBatchMemOp_v2)                                                 \
    X(cuGraphBatchMemOpNodeGetParams)                                        \
    X(cuTensorMapEncodeTiled)                                                \
    X(cuTensorMapEncodeIm2col)                                               \
    X(cuTensorMapEncodeIm2colWide)                                           \
    X(cuTensorMapReplaceAddress)

/* Deprecated functions are forwarded all the same: programs call them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct cuda_be_driver {
#define CUDA_BE_DRIVER_FIELD(name) __typeof__(name) *name;
    CUDA_BE_CALLED(CUDA_BE_DRIVER_FIELD)
    CUDA_BE_CALLED_BY_HAND(CUDA_BE_DRIVER_FIELD)
#undef CUDA_BE_DRIVER_FIELD
};
#pragma GCC diagnostic pop

/* Filled by cuda_be_enter's first success; read only after it. */
extern struct cuda_be_driver cuda_be_drv;
#define CUDA_DRV(name) (cuda_be_drv.name)

/* driver.c: fills cuda_be_drv once.  0, or -1 when the worker has no
 * driver (or one that lacks a function): every call then answers
 * CUDA_ERROR_NO_DEVICE.  The tests' mock backend defines its own. */
int cuda_be_driver_load(void);

/* The remoting layer's backend (remote_be.h), set at session open: the
 * lanes, posted failures, handle table and quota are the layer's. */
extern const struct gvs_remote_be *cuda_be_remote;

/* Every op's first step (cuda.api): the driver is there, and the lane's
 * current context is the calling thread's. */
CUresult cuda_be_enter(struct gvs_call *call);
/* The layer's name for the context of call's lane (remote_be.h,
 * device_code): the context, 0 for none. */
uintptr_t cuda_be_context_key(struct gvs_call *call);

struct cuda_be_session {
    const struct gvs_host_api *host;
    struct gvs_session *session;
};

/* Largest kernel parameter block (CUDA 12.1+ on Volta and later). */
#define CUDA_BE_PARAM_MAX 32764u
/* Most kernels one module may list in its load reply. */
#define CUDA_BE_MAX_KERNELS 65536u

/* A context the session retained or created (GVS_RH_CONTEXT). */
struct cuda_be_ctx {
    CUcontext ctx;
    CUdevice dev;
    int primary;
};

struct cuda_be_param {
    uint32_t offset;
    uint32_t size;
};

/* A kernel of a library (GVS_RH_KERNEL: handle is a CUkernel) or a
 * function of a module or context (GVS_RH_FUNCTION: a CUfunction), with
 * its parameter layout. */
struct cuda_be_kernel {
    void *handle;
    CUresult status; /* why the layout is unknown, or CUDA_SUCCESS */
    uint32_t nparams;
    uint32_t param_bytes; /* end of the last parameter */
    struct cuda_be_param *params;
};

/* A library (GVS_RH_LIBRARY) or module (GVS_RH_MODULE) the session
 * loaded, with the image it was loaded from. */
struct cuda_be_library {
    void *handle; /* CUlibrary or CUmodule */
    int kind;     /* 0 library, 1 module */
    uint8_t *image;
    uint32_t nkernels;
    uint64_t *kernels; /* their ids */
};

/* What the plugin keeps per lane (client thread), in the slot of the
 * layer's lane (remote_be.h): a lane's own requests never overlap, so
 * its handlers use it without a lock. */
struct cuda_be_lane {
    /* copy.c: the first failure of the posted pieces of the lane's
     * current copy. */
    CUresult copy_failed;
};

/* lanes.c: the lane of call, created on first use; NULL when out of
 * memory. */
struct cuda_be_lane *cuda_be_lane(struct gvs_call *call);

/* session_close: what each file keeps for the session goes (the GPU
 * objects go with the worker). */
void cuda_be_contexts_free(void);
void cuda_be_modules_free(void);
/* link.c: the session's link states go. */
void cuda_be_links_free(void);
/* vmm.c: the session's reservations, physical allocations and mappings
 * go from the tables (the driver's go with the worker). */
void cuda_be_vmm_free(void);
void cuda_be_lanes_free(void);

struct apigen_call;
/* contexts.c: the reply of an op that makes an object, i32 r, then u64
 * its id on success. */
void cuda_be_reply_id(struct apigen_call *c, CUresult r, uint64_t id);

/* contexts.c: the context of a GVS_RH_CONTEXT id (0: none, the current
 * one where a call takes NULL so), or CUDA_ERROR_INVALID_CONTEXT. */
CUresult cuda_be_ctx(uint64_t wire, CUcontext *out);
/* The id of a context the session retained or created, else 0. */
uint64_t cuda_be_ctx_id_of(CUcontext ctx);
/* shared.c: how the driver pins, copies and stages for the layer's
 * shared host memory and pinned staging (remote_be.h). */
extern const struct gvs_remote_pinner cuda_be_pinner;
/* The regions and staging buffers the driver pinned go (session
 * close). */
void cuda_be_shared_free(void);
/* streams.c: a destroying op.  Request: u64 id.  Reply: i32.  The
 * object of type leaves the table and is destroyed;
 * CUDA_ERROR_INVALID_HANDLE for an id the table does not hold so. */
int cuda_be_destroy_object(struct gvs_call *call, uint16_t type,
                           CUresult (*destroy)(void *));
/* hostfunc.c: the parameters of a graph host node that runs the client's
 * callback id each time the graph does (its record kept), or
 * CUDA_ERROR_OUT_OF_MEMORY. */
CUresult cuda_be_host_node(uint64_t id, CUDA_HOST_NODE_PARAMS_v2 *out);
/* Hands a record CUDA took for a node of g to g (remote_be.h,
 * callback_give; NULL: an executable graph's node, whose record stays
 * until the worker exits), and clears *record. */
void cuda_be_host_give(struct gvs_remote_callback **record, CUgraph g);
/* The client's callback id of a host node's parameters as CUDA reports
 * them; 0 for a function not ours. */
uint64_t cuda_be_host_node_id(const CUDA_HOST_NODE_PARAMS *h);
/* streams.c: the stream of a wire value (0 the legacy default stream,
 * CU_STREAM_LEGACY, CU_STREAM_PER_THREAD the lane's own in its current
 * context, the layer's (ptds_stream), else a GVS_RH_STREAM id), or CUDA_ERROR_INVALID_HANDLE.
 * Caller has entered the lane (cuda_be_enter). */
CUresult cuda_be_stream(struct gvs_call *call, uint64_t wire, CUstream *out);
/* pools.c: the pool of a GVS_RH_MEMPOOL id, or
 * CUDA_ERROR_INVALID_VALUE. */
CUresult cuda_be_pool(uint64_t wire, CUmemoryPool *out);
/* The most entries one access list may have (cuMemPoolSetAccess,
 * cuMemSetAccess). */
#define CUDA_BE_ACCESS_MAX 1024u
/* An access list off the wire: u32 count (at most CUDA_BE_ACCESS_MAX;
 * exactly 1 unless set), count x {i32 location type, i32 location id,
 * i32 flags}, into the calling thread's own array (*out), valid until
 * its next call.  0, or c->rc (GVS_E_PROTO for a bad count). */
int cuda_be_get_access(struct apigen_call *c, int set, CUmemAccessDesc **out,
                       uint32_t *n);
/* The event of a GVS_RH_EVENT id, or CUDA_ERROR_INVALID_HANDLE. */
CUresult cuda_be_event(uint64_t wire, CUevent *out);
/* Enters an event the session made in the table, its id in *id: 0, or
 * -1 when out of memory. */
int cuda_be_event_enter(CUevent e, uint64_t *id);
/* The id of one of the session's events, 0 for none. */
uint64_t cuda_be_event_id_of(CUevent e);
/* memory.c: the device of the lane's current context, for the quota's
 * records; named to gvsd by its UUID the first time it holds an
 * allocation. */
int cuda_be_quota_device(void);
/* The same for device dev (-1, none: host memory), which it returns. */
int cuda_be_quota_name(int dev);
/* CUDA_ERROR_INVALID_VALUE unless [p, p + len) starts and
 * ends in device memory: a host address here would be the worker's. */
CUresult cuda_be_check_device_range(uint64_t p, uint64_t len);
struct apigen_call;
/* The stream and ordering every copy and memset request starts with,
 * u64 stream and u8 flags (bit 0: stream-ordered, which a copy or
 * memset on the per-thread stream always is), read from c; enters the
 * lane and finds the stream.  The first failure (nothing is checked
 * once c failed). */
CUresult cuda_be_enter_stream(struct gvs_call *call, struct apigen_call *c,
                              CUstream *s, uint8_t *flags);
/* CUDA_ERROR_INVALID_VALUE unless every row of a rectangle of rows rows
 * of width bytes, pitch apart from p, is device memory. */
CUresult cuda_be_check_device_rect(uint64_t p, uint64_t pitch,
                                   uint64_t width, uint64_t rows);

/* copy.c: the pieces of a copy with the program's memory.  A piece's
 * flags (after its stream): stream-ordered, and the last piece of its
 * copy. */
#define CUDA_BE_PIECE_ASYNC 1u
#define CUDA_BE_PIECE_LAST 2u
/* A D2H read (MEMCPY_D2H) that may enter the library context. */
#define CUDA_BE_PIECE_ANY_CONTEXT 4u
/* modules.c: with no context current, makes the first device's primary
 * context current (libraries and managed memory need one, which NVIDIA's
 * runtime has not made yet when it asks); whether it did, for the
 * caller to make none current again. */
int cuda_be_enter_library_context(void);
/* Pieces of one copy to device memory (MEMCPY_H2D, MEMCPY3D_TO), every
 * piece but the last posted, the last too when the frontend proved the
 * copy valid.  The lane's first failure of its current copy's pieces,
 * NULL when out of memory: a piece does its work only while it is
 * CUDA_SUCCESS, and keeps its result there. */
CUresult *cuda_be_piece_failed(struct gvs_call *call);
/* After a piece's work: the last piece, or any piece waited for, replies
 * the first failure, which is then forgotten; a posted last piece keeps
 * it for the lane's next synchronizing call. */
void cuda_be_piece_report(struct gvs_call *call, struct apigen_call *c,
                          CUresult *failed, uint8_t flags);
/* A host piece's rectangle: one slice of rows rows of width bytes (the
 * pieces of a copy's box), fitting in a request. */
int cuda_be_piece_fits(uint64_t width, uint64_t rows);
/* The reply of a copy into it: CUDA_SUCCESS and a blob of len bytes,
 * which fill(rows, arg) copies on stream s, waited for when async (the
 * bytes leave with the reply); fill's failure alone when it fails.  The
 * rows go into the lane's pinned staging when it has or can have one
 * (the layer's stage_d2h: one DMA, sent from there as the reply's
 * tail), else into the reply. */
int cuda_be_reply_rows(struct gvs_call *call, struct apigen_call *c,
                       uint64_t len,
                       CUresult (*fill)(uint8_t *rows, void *arg), void *arg,
                       CUstream s, int async);

/* arrays.c: the array (mipmapped array) of a GVS_RH_ARRAY
 * (GVS_RH_MIPMAPPED_ARRAY) id, either API's, or CUDA_ERROR_INVALID_HANDLE. */
CUresult cuda_be_array(uint64_t wire, CUarray *out);
CUresult cuda_be_mipmap(uint64_t wire, CUmipmappedArray *out);

/* modules.c: the kernel or function of id (kind 1 kernel, 0 function),
 * or NULL. */
struct cuda_be_kernel *cuda_be_kernel_get(int kind, uint64_t id);
/* The function, or kernel (which the driver takes where it takes a
 * function), of id; CUDA_ERROR_INVALID_HANDLE for neither. */
CUresult cuda_be_func(uint64_t wire, CUfunction *out);
/* The kernel of id; CUDA_ERROR_INVALID_HANDLE if it is none. */
CUresult cuda_be_kernel_handle(uint64_t wire, CUkernel *out);
/* The id of the session's kernel (kernel != NULL) or function, its
 * record in *k; 0 when the session has none.  A function that is a
 * library kernel (which the driver takes as a function), or its
 * function in the current context, answers the kernel. */
uint64_t cuda_be_kernel_id_of(CUkernel kernel, CUfunction func,
                              struct cuda_be_kernel **k);

/* launch.c: n launch attributes off the wire (cuda.api, LAUNCH), events
 * made the session's own: the first failure CUDA would report (an
 * attribute that carries a pointer is refused); malformed: c->rc. */
CUresult cuda_be_get_launch_attrs(struct apigen_call *c,
                                  CUlaunchAttribute *a, uint32_t n);

/* graphs.c: the executable graph or graph node of a layer's id (remote_be.h,
 * "Graphs"); CUDA_ERROR_INVALID_VALUE for an id that is none. */
CUresult cuda_be_graph_exec(uint64_t wire, CUgraphExec *out);
CUresult cuda_be_graph_node(uint64_t wire, CUgraphNode *out);

/* memops.c: stream memory operations (cuda.api, STREAM_MEMOP).  get
 * reads u32 count (at most CUDA_BE_MEMOPS_MAX) and the operations into
 * *ops, gvs_malloc'd (the caller frees it): 0, or a negative GVS_E_*
 * code, nothing kept.  check: CUDA_ERROR_INVALID_VALUE for a type the
 * driver does not know, or an address that is neither device memory nor
 * the device mapping of host memory the client shared. */
#define CUDA_BE_MEMOPS_MAX 256u
int cuda_be_get_memops(struct apigen_call *c, CUstreamBatchMemOpParams **ops,
                       uint32_t *count);
CUresult cuda_be_check_memops(const CUstreamBatchMemOpParams *ops,
                              uint32_t count);

#endif
