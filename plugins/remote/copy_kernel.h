/*
 * The layer's copy kernel (backend/copy_kernel.cu, built into the layer's
 * backend as a fat binary: copy_kernel_image.c) and the parameters it
 * takes, shared by the kernel, the layer (backend/copy_kernel.c) and the
 * mock driver of the tests.
 * One launch makes up to GVS_COPY_KERNEL_MAX copies between device
 * memory, copy i by the blocks of row i (blockIdx.y); or, ordered, one
 * block makes them one after the other, each done before the next
 * begins (a copy may read or write what an earlier one wrote).
 */
#ifndef GVS_COPY_KERNEL_H
#define GVS_COPY_KERNEL_H

#define GVS_COPY_KERNEL_NAME "gvs_copies"
#define GVS_COPY_KERNEL_MAX 16

/* The kernel's one parameter, passed by value. */
struct gvs_copy_params {
    unsigned long long dst[GVS_COPY_KERNEL_MAX];
    unsigned long long src[GVS_COPY_KERNEL_MAX];
    unsigned long long len[GVS_COPY_KERNEL_MAX];
    unsigned n;
    /* Nonzero: launched as one block (a grid of 1 x 1), in order. */
    unsigned ordered;
};

#ifndef __CUDACC__
#include <stddef.h>
/* The fat binary (copy_kernel_image.c, generated). */
extern const unsigned char gvs_copy_kernel_image[];
extern const size_t gvs_copy_kernel_image_size;
#endif

#endif
