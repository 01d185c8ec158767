/*
 * Between link.c and modules.c: the JIT options of a link or a load
 * (cuda.api, "options" and "report").  The driver writes its outputs
 * into the program's option arrays and log buffers; here they are
 * written from the report the backend sends after its driver ran.
 */
#ifndef CUDA_FE_JIT_H
#define CUDA_FE_JIT_H

#include "fe.h"

#include "apigen_rt.h"

/* The program's options, as the driver keeps them (a link's until
 * cuLinkDestroy): the arrays are the program's. */
struct cuda_fe_jit {
    unsigned n;
    CUjit_option *opt;
    void **val;
    char *log[2]; /* the info and error log buffers, and their sizes */
    size_t log_size[2];
};

/* j for the program's n options opt with values val, its log buffers
 * found among them. */
void cuda_fe_jit_init(struct cuda_fe_jit *j, unsigned n, CUjit_option *opt,
                      void **val);

/* Puts the options on the wire: CUDA_ERROR_INVALID_VALUE for arrays
 * missing, CUDA_ERROR_NOT_SUPPORTED for more than 64. */
CUresult cuda_fe_jit_put(struct apigen_call *c, unsigned n,
                         const CUjit_option *opt, void *const *val);

/* Reads a report into j's log buffers and output options; with j NULL
 * (a link gone meanwhile), only reads it.  A report of other options
 * than j's is c->rc = GVS_E_PROTO. */
void cuda_fe_jit_take_report(struct apigen_call *c, struct cuda_fe_jit *j);

#endif
