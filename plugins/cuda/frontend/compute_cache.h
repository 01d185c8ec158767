/*
 * The driver's compute cache: export table DA9151D3 (exports.c), which
 * the libraries that compile kernels while a program runs (cuDNN's
 * runtime-compiled engines: NVVM IR to PTX, and to a cubin) ask for what
 * they compiled before, under a key of their input, their options and
 * their build, and give what they compiled on a miss.  NVIDIA's driver
 * keeps it on disk (~/.nv/ComputeCache), so that a second process, and a
 * first one at a shape an earlier one saw, compiles nothing; without it
 * cuDNN compiles at every new shape (GPT-2's decode ran 7x slower
 * natively with slot 1 failed: docs/performance.md).
 *
 * gvs keeps it where the program runs, as a local GPU's driver does, and
 * needs no round trip: one file per entry, named by a hash of its key and
 * holding the whole key, which a lookup compares byte for byte (a file
 * written by someone else, truncated or flipped is a miss, never another
 * key's code).  Files are written whole under a temporary name and
 * renamed, so processes sharing the directory never read half an entry.
 *
 * Environment, as NVIDIA's driver reads it:
 *   CUDA_CACHE_DISABLE=1  no cache: open fails, the library compiles
 *   CUDA_CACHE_PATH       the directory (else $XDG_CACHE_HOME/gvs/
 *                         ComputeCache, else ~/.cache/gvs/ComputeCache)
 *   CUDA_CACHE_MAXSIZE    bytes the directory may hold (default 1 GiB,
 *                         at most 4 GiB): a larger entry is not kept, the
 *                         least recently used go to make room
 *
 * The slots' arguments (seen on driver 580 with cuDNN 9 under
 * tools/probe/api_trace.c) are the functions' below.  Thread-safe: a
 * handle belongs to the thread that opened it, as the caller uses it.
 */
#ifndef CUDA_FE_COMPUTE_CACHE_H
#define CUDA_FE_COMPUTE_CACHE_H

#include <cuda.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* [1] A handle for one entry's key: what kind of output (1 a cubin, 2
 * PTX), the input's key_len bytes, the compiler's options and a build
 * string of the caller.  CUDA_ERROR_NOT_SUPPORTED when the cache is
 * disabled or has no directory; CUDA_ERROR_INVALID_VALUE on NULLs. */
CUresult cuda_fe_cc_open(void **handle, unsigned int kind, const void *key,
                         size_t key_len, const char *options, const char *build);

/* [2] Forgets the handle. */
CUresult cuda_fe_cc_close(void *handle);

/* [3] The entry's bytes, in a buffer for [6] to free, and their size;
 * CUDA_ERROR_NOT_FOUND (*data NULL, *size 0) where there is none. */
CUresult cuda_fe_cc_lookup(void *handle, unsigned int flags, void **data,
                           unsigned int *size);

/* [4] Keeps size bytes at data as the entry (a miss compiled them). */
CUresult cuda_fe_cc_store(void *handle, unsigned int flags, const void *data,
                          size_t size);

/* [6] Frees what [3] gave; CUDA_ERROR_INVALID_VALUE for anything else. */
CUresult cuda_fe_cc_free(void *data);

#pragma GCC visibility pop

#endif
