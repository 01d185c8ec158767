/*
 * Contracts between the backend's kernel files: kernel.c (finding a
 * kernel, argument vectors), launch_attr.c, launchex.c, funcattr.c,
 * occupancy.c.
 */
#ifndef CUDART_BE_KERNELS_H
#define CUDART_BE_KERNELS_H

#include "be.h"

#include "apigen_rt.h"
#include "launch_attr_wire.h"

/* Most launch attributes one configuration may carry; a request with
 * more is malformed (the frontend refuses them itself). */
#define BE_MAX_LAUNCH_ATTRS 64u

/* Decodes a kernel's wire name (u32 module, u32 index) and finds it:
 * GVS_E_RANGE for a module or index the session does not have (the
 * frontend only names kernels it was told of), c->rc when the request is
 * short. */
int be_get_kernel(struct gvs_call *call, struct apigen_call *c,
                  const struct be_func **out);

/* An argument vector for f: argv[i] points at parameter i inside params,
 * an aligned copy of the parameter block.  Heap-allocated past a few
 * hundred parameters: NULL when that fails.  Release with
 * be_kernel_argv_free (NULL included). */
#define BE_ARGV_ON_STACK 256u
void **be_kernel_argv(const struct be_func *f, void *params,
                      void *stack[BE_ARGV_ON_STACK]);
void be_kernel_argv_free(void **argv, void *stack[BE_ARGV_ON_STACK]);

/* launch_attr.c: decodes one attribute as fe_put_launch_attr encodes it.
 * Negative GVS_E_* when malformed; *e becomes
 * cudaErrorInvalidResourceHandle when an event id is unknown (the value
 * is then unusable but the request goes on decoding). */
int be_get_launch_attr(struct apigen_call *c, cudaLaunchAttribute *out,
                       cudaError_t *e);

/* Decodes a launch configuration (grid, block, dynamic shared memory,
 * stream, attributes) into cfg, its attributes into attrs (room for
 * BE_MAX_LAUNCH_ATTRS).  The stream's wire value lands in *stream, for
 * the caller to turn into cfg->stream with be_stream once the lane's
 * device is current.  Negative GVS_E_* when malformed; *e becomes CUDA's
 * code for an unknown event or a size this host cannot hold. */
int be_get_launch_config(struct apigen_call *c, cudaLaunchConfig_t *cfg,
                         cudaLaunchAttribute *attrs, uint64_t *stream,
                         cudaError_t *e);

#endif
