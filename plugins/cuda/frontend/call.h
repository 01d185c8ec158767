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

#endif
