/*
 * Private contracts between the files of the cudart backend plugin
 * (gvs-cudart.so).  Handlers run in a session's worker process, one
 * request at a time, on the thread whose CUDA current device the
 * session's SET_DEVICE requests move.
 *
 * Every client-supplied value is bounded before use; device pointers are
 * u64 values handed only to CUDA, after be_check_device_range where CUDA
 * would not check them itself.
 */
#ifndef CUDART_BE_H
#define CUDART_BE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "gvs/plugin.h"

/* Largest kernel parameter block (CUDA 12.1+ on Volta and later). */
#define BE_PARAM_MAX 32764u
/* Per-session bounds on what a client may make us hold. */
#define BE_MAX_MODULES 4096u
#define BE_MAX_NAMES 65536u
#define BE_NAME_MAX_LEN 65536u

struct be_param {
    uint32_t offset;
    uint32_t size;
};

struct be_func {
    cudaKernel_t kernel;
    cudaError_t status; /* why the kernel is unusable, or cudaSuccess */
    uint32_t nparams;
    uint32_t param_bytes;
    struct be_param *params;
};

struct be_module {
    cudaLibrary_t lib; /* NULL once unloaded */
    void *image;       /* the fat binary, kept while the library lives */
    uint32_t nfuncs;
    struct be_func *funcs;
    uint32_t nvars;
    char **vars; /* global names */
};

struct be_session {
    struct be_module *mods; /* ids index this table, never reused */
    uint32_t nmods, cap_mods;
    /* First failure of a bulk transfer's posted chunks, reported by its
     * final chunk. */
    cudaError_t latched;
    /* Fat binary pieces of the next MODULE_LOAD. */
    uint8_t *stage;
    size_t stage_len;
};

/* cudaErrorInvalidValue unless [p, p + len) starts and ends in device
 * (or managed) memory: CUDA's behaviour on a host pointer passed where a
 * device one is expected is undefined, and a host address here would be
 * one of the worker's. */
cudaError_t be_check_device_range(uint64_t p, uint64_t len);

/* The module with this id, or NULL if there is none (a protocol
 * violation: the frontend only sends ids it was given). */
struct be_module *be_module_get(struct be_session *s, uint32_t id);

/* Releases every module of the session. */
void be_modules_free(struct be_session *s);

#endif
