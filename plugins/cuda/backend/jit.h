/*
 * JIT options of a load (LOAD) or a link (LINK_*), cuda.api's "options"
 * and "report": the driver's option arrays made from a request's, with
 * log buffers of the backend's own, and the report of what the driver
 * wrote into them.
 */
#ifndef CUDA_BE_JIT_H
#define CUDA_BE_JIT_H

#include "be.h"

#include "apigen_rt.h"

#define CUDA_BE_JIT_MAX_OPTIONS 64u

/* The options as a request holds them.  Plain values are the driver's
 * to check. */
struct cuda_be_jit_request {
    uint32_t n;
    int32_t opt[CUDA_BE_JIT_MAX_OPTIONS];
    uint64_t val[CUDA_BE_JIT_MAX_OPTIONS];
};

/* The driver's option arrays, which it keeps (a link's until
 * cuLinkDestroy) and writes its outputs into. */
struct cuda_be_jit {
    unsigned n;
    CUjit_option opt[CUDA_BE_JIT_MAX_OPTIONS];
    void *val[CUDA_BE_JIT_MAX_OPTIONS];
    char *log[2]; /* info, error: NUL-terminated, log_size[i] + 1 bytes */
    size_t log_size[2];
};

/* Decodes u32 n (at most CUDA_BE_JIT_MAX_OPTIONS), n x {i32 option, u64
 * value} into o; c->rc says whether it could. */
void cuda_be_jit_get(struct apigen_call *c, struct cuda_be_jit_request *o);

/* 0 for an info log option (buffer or size), 1 for an error log's, -1
 * for any other. */
int cuda_be_jit_log_of(int32_t opt);

/* The driver's arrays of o in j (zeroed by the caller): log sizes at most
 * 64 KiB, log buffers j's own, the wall time the driver's to write.  An
 * option that points into the client's memory is CUDA_ERROR_NOT_SUPPORTED;
 * one the driver does not know is its to refuse, with no value. */
CUresult cuda_be_jit_fill(struct cuda_be_jit *j,
                          const struct cuda_be_jit_request *o);

/* The report of j: u32 n, n x u64 the values as the driver left them (0
 * for a log buffer), blob the info log, blob the error log. */
void cuda_be_jit_put_report(struct apigen_call *c, const struct cuda_be_jit *j);

/* Frees j's log buffers. */
void cuda_be_jit_free(struct cuda_be_jit *j);

#endif
