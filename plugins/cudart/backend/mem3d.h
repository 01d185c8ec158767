/*
 * 2D/3D copies on the backend side: the wire form of a copy's sides and
 * box (plugins/cudart/api/50-arrays.api) turned into a checked
 * cudaMemcpy3DParms, shared by the copy ops and graph memcpy nodes.
 */
#ifndef CUDART_BE_MEM3D_H
#define CUDART_BE_MEM3D_H

#include "be.h"

#include "apigen_rt.h"

enum be_side_kind {
    BE_SIDE_DEVICE = 0, /* wire values */
    BE_SIDE_ARRAY = 1,
    BE_SIDE_HOST = 2, /* the worker's own buffer: never from the wire */
};

/* Row r of slice s starts at addr + ((z + s) * ysize + y + r) * pitch +
 * x; x in bytes, also for arrays. */
struct be_side {
    uint8_t kind;
    uint64_t addr; /* device address, array id, or worker buffer */
    uint64_t pitch;
    uint64_t ysize;
    uint64_t x, y, z;
};

/* Width in bytes, height in rows, depth in slices. */
struct be_box {
    uint64_t w, h, d;
};

/* Decode a side (kind 0 or 1 only; anything else fails c with
 * GVS_E_PROTO) and a box. */
void be_get_side(struct apigen_call *c, struct be_side *s);
void be_get_box(struct apigen_call *c, struct be_box *b);

/* Bytes of a box, or 0 when it overflows (callers refuse that). */
uint64_t be_box_bytes(const struct be_box *b);

/* cudaErrorInvalidValue unless the rows of a non-empty box on a device
 * side lie in device memory (cudaErrorInvalidPitchValue if the pitch
 * cannot hold a row). */
cudaError_t be_check_linear(const struct be_side *s, const struct be_box *b);

/* Builds the CUDA parameters of copying box from src to dst, checking
 * what CUDA would not: array ids, that device rows lie in device memory,
 * and that array offsets and widths are whole elements (CUDA counts an
 * array's x and width in elements).  Host sides are worker buffers laid
 * out by the caller. */
cudaError_t be_copy_params(const struct be_side *dst,
                           const struct be_side *src, const struct be_box *b,
                           struct cudaMemcpy3DParms *p);

/* backend/arrays.c: the array of a BE_H_ARRAY id, or
 * cudaErrorInvalidResourceHandle. */
cudaError_t be_array(uint64_t id, cudaArray_t *out);
/* The mipmapped array of a BE_H_MIPMAPPED_ARRAY id, or
 * cudaErrorInvalidResourceHandle. */
cudaError_t be_mipmapped(uint64_t id, cudaMipmappedArray_t *out);
/* An array's element size in bytes (cudaErrorInvalidValue for formats without
 * whole-byte elements). */
cudaError_t be_array_elem(cudaArray_t a, size_t *elem);

#endif
