/*
 * Private contracts between the files of the CUDA driver frontend
 * (libcuda.so.1).  The library is built with hidden visibility; the
 * driver's declarations below get default visibility so that the
 * functions defined against them are exported, and the version script
 * keeps everything else out of the dynamic symbol table.
 *
 * cuda.h maps the names a program writes to the current ABI
 * (cuMemAlloc is cuMemAlloc_v2, or a _ptds/_ptsz variant per thread).
 * The library exports every ABI under its own name, the legacy ones
 * included, so it sees cuda.h as NVIDIA's driver build does, with
 * __CUDA_API_VERSION_INTERNAL: each export declared under its exported
 * name.  tools/apigen/gvs_unsupported.py reads the headers the same way.
 *
 * Must be included before any CUDA header.
 */
#ifndef CUDA_FE_H
#define CUDA_FE_H

#define __CUDA_API_VERSION_INTERNAL
#pragma GCC visibility push(default)
#include <cuda.h>
#include <cudaProfiler.h>
#pragma GCC visibility pop

/* rdc.c: what nvcc emits for a unit's device code, the fatbinC wrapper
 * (a version 2 one is an -rdc program's device-linked image, its units'
 * images listed after it).  cuda_fe_rdc_relink: the units to link again
 * when code is such a wrapper and its linked image holds no cubin a GPU
 * of compute capability cc() (major * 10 + minor, asked of such a
 * wrapper alone) runs, else NULL.
 * cuda_fe_rdc_link: their link, whose cubin lives until
 * cuLinkDestroy(*link) (nothing to destroy when it fails). */
struct cuda_fe_fatbinc {
    uint32_t magic;
    uint32_t version;
    const void *fatbin;
    const void *filename_or_fatbins;
};
#define CUDA_FE_FATBINC_MAGIC 0x466243b1u
const void *const *cuda_fe_rdc_relink(const void *code, unsigned (*cc)(void));
CUresult cuda_fe_rdc_link(const void *const *units, CUlinkState *link,
                          void **cubin, size_t *size);

#endif
