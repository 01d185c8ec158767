/*
 * The JIT options cuda.mock_jit_link (jit_link.c) and cuda.mock_modules
 * (modules.c) give the driver: both logs with their sizes, the wall time
 * and verbose output, in static arrays the driver writes into (a link
 * keeps them until cuLinkDestroy).  reset_options() before each use.
 */
#ifndef GVS_CUDA_JIT_OPTIONS_H
#define GVS_CUDA_JIT_OPTIONS_H

#include <cuda.h>
#include <stdint.h>
#include <string.h>

static char info[256], error[256];
static CUjit_option opts[] = {
    CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
    CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    CU_JIT_WALL_TIME,        CU_JIT_LOG_VERBOSE,
};
static void *vals[6];

static void reset_options(void)
{
    memset(info, 0, sizeof(info));
    memset(error, 0, sizeof(error));
    vals[0] = info;
    vals[1] = (void *)(uintptr_t)sizeof(info);
    vals[2] = error;
    vals[3] = (void *)(uintptr_t)sizeof(error);
    vals[4] = NULL;
    vals[5] = (void *)(uintptr_t)1;
}

#endif
