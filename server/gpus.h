/*
 * The host's GPUs for `gvs status`, as NVML sees them: read in the worker
 * that serves STATUS, never in the parent, and without CUDA (NVML makes
 * no context; the library is opened only when asked, so gvsd runs and
 * answers STATUS on a host without it).
 */
#ifndef GVSD_GPUS_H
#define GVSD_GPUS_H

#include <stddef.h>
#include <stdint.h>

#define GVSD_GPUS_MAX 64
#define GVSD_GPU_NAME_MAX 96

struct gvsd_gpu {
    char name[GVSD_GPU_NAME_MAX]; /* "NVIDIA H100 80GB HBM3" */
    char uuid[GVSD_GPU_NAME_MAX]; /* "GPU-..." */
    uint64_t memory_total;
    uint64_t memory_used; /* by every process, gvs's and others' */
};

/* Fills out[0..n) with up to max GPUs in NVML's order and returns n, or
 * a negative GVS_E_* code with why (a line for the user: no NVML
 * library, no driver) when the list is unknown. */
int gvsd_gpus_query(struct gvsd_gpu *out, int max, char *why, size_t len);

#endif
