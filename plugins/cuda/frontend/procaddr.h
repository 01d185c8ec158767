/*
 * cuGetProcAddress's answers (procaddr.c): the table
 * tools/apigen/gvs_procaddr.py generates at build time from what NVIDIA's
 * driver answered to the probe (plugins/cuda/probe/results/.../procaddr.txt,
 * docs/driver.md, "cuGetProcAddress").
 *
 * What a name answers is a step function of cudaVersion: one for flags 0
 * and 1 (legacy stream), one for flag 2, with or without flag 1
 * (per-thread default stream).  The steps are cuGetProcAddress_v2's
 * answers; cuGetProcAddress (v1) answers alike, except that where v2
 * finds nothing it returns CUDA_ERROR_NOT_FOUND and leaves *pfn as it was.
 * The generator stops the build where the data disagrees with this.
 */
#ifndef CUDA_PROCADDR_H
#define CUDA_PROCADDR_H

#include <stddef.h>
#include <stdint.h>

/* A step's answer: an index of procaddr_fns (found: rc 0, status 0, that
 * function), or one of these. */
enum {
    PROCADDR_INVALID = 0xfffd,   /* CUDA_ERROR_INVALID_VALUE, nothing written */
    PROCADDR_TOO_OLD = 0xfffe,   /* rc 0, VERSION_NOT_SUFFICIENT, *pfn NULL */
    PROCADDR_NOT_FOUND = 0xffff, /* rc 0, SYMBOL_NOT_FOUND, *pfn NULL */
};

/* The answer from cudaVersion `from` up to the next step's from. */
struct procaddr_step {
    int32_t from;
    uint16_t answer;
};

/* procaddr_steps[first .. first + count): from ascending, the first
 * from INT32_MIN. */
struct procaddr_series {
    uint16_t first;
    uint16_t count;
};

enum { PROCADDR_LEGACY, PROCADDR_PER_THREAD };

struct procaddr_name {
    uint32_t name; /* offset of the NUL-terminated name in procaddr_text */
    struct procaddr_series series[2]; /* [PROCADDR_LEGACY], [PROCADDR_PER_THREAD] */
};

/* Private to the library: referred to directly, not through the GOT. */
#pragma GCC visibility push(hidden)
extern const char procaddr_text[];
/* The names the driver resolves, in strcmp order. */
extern const struct procaddr_name procaddr_names[];
extern const size_t procaddr_nnames;
/* Every other name's series. */
extern const struct procaddr_series procaddr_unknown[2];
extern const struct procaddr_step procaddr_steps[];
/* The frontend's exports the driver's answers name. */
extern void *const procaddr_fns[];
#pragma GCC visibility pop

#endif
