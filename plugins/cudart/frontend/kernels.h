/*
 * Contracts between the frontend's kernel files: kernel.c (lookup and
 * parameter packing, shared with launch.c), launchex.c, funcattr.c,
 * occupancy.c and launch_attr.c.
 */
#ifndef CUDART_FE_KERNELS_H
#define CUDART_FE_KERNELS_H

#include "fe.h"

#include "launch_attr_wire.h"

/* What --default-stream per-thread compiles these launches to. */
#pragma GCC visibility push(default)
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
                                     const void *func, void **args);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
                                             dim3 blockDim, void **args,
                                             size_t sharedMem,
                                             cudaStream_t stream);
#pragma GCC visibility pop

/* More launch attributes than this in one configuration are refused with
 * cudaErrorInvalidValue before anything is sent. */
#define FE_MAX_LAUNCH_ATTRS 64u

/* The kernel func names (its host stub, or the handle __cudaGetKernel
 * gave), with its module uploaded: *module is the module's remote id.
 * cudaErrorInvalidResourceHandle when func is no kernel registered here
 * (what CUDA 13 answers a launch of, or a query about, one); otherwise
 * the upload's failure, or the reason the backend could not find the
 * kernel in its module. */
cudaError_t fe_kernel_resolve(const void *func, struct fe_func **out,
                              uint32_t *module);

/* Packs args[i] at the kernel's parameter offsets into params (at least
 * f->param_bytes long), padding with zeros.  cudaErrorInvalidValue when
 * the kernel takes parameters and args, or one args[i], is NULL. */
cudaError_t fe_kernel_pack(const struct fe_func *f, void **args,
                           uint8_t *params);

/* Appends the kernel's wire name: u32 module, u32 index. */
void fe_put_kernel(struct apigen_call *c, const struct fe_func *f,
                   uint32_t module);

/* launch_attr.c: appends a launch configuration: u32 grid x/y/z, u32
 * block x/y/z, u64 dynamic shared memory, u64 stream (fe_stream_wire;
 * per_thread for the _ptsz entry points), u32 count, then each
 * attribute as u32 id and its value's fields (docs/cudart.md).
 * cudaErrorInvalidValue, with nothing appended, for a NULL attribute
 * list with a count, or more than FE_MAX_LAUNCH_ATTRS. */
cudaError_t fe_put_launch_config(struct apigen_call *c,
                                 const cudaLaunchConfig_t *cfg,
                                 int per_thread);

/* Appends one attribute: u32 id, then its value's fields, events as
 * their wire ids (for the stream and graph-node attribute calls, which
 * take the same union). */
void fe_put_launch_attr(struct apigen_call *c, cudaLaunchAttributeID id,
                        const cudaLaunchAttributeValue *v);

/* Decodes one attribute value as the backend appends it (u32 id, then its
 * fields) into *v, the union member the id names; the id must be want.
 * Event fields come back NULL.  Negative GVS_E_* when malformed. */
int fe_get_launch_attr(struct apigen_call *c, cudaLaunchAttributeID want,
                       cudaLaunchAttributeValue *v);

#endif
