/*
 * 2D/3D copies on the backend side: the wire form of a copy's sides and
 * box (the layer's, remote_box.h) turned into a checked
 * cudaMemcpy3DParms, shared by the copy ops and graph memcpy nodes.
 */
#ifndef CUDART_BE_MEM3D_H
#define CUDART_BE_MEM3D_H

#include "be.h"

#include "apigen_rt.h"
#include "remote_box.h"

/* cudaErrorInvalidValue unless the rows of a non-empty box on a device
 * side lie in device memory (cudaErrorInvalidPitchValue if the pitch
 * cannot hold a row). */
cudaError_t be_check_linear(const struct gvs_remote_side *s,
                            const struct gvs_remote_box *b);

/* Builds the CUDA parameters of copying box from src to dst, checking
 * what CUDA would not: array ids, that device rows lie in device memory,
 * and that array offsets and widths are whole elements (CUDA counts an
 * array's x and width in elements).  Host sides are worker buffers laid
 * out by the caller. */
cudaError_t be_copy_params(const struct gvs_remote_side *dst,
                           const struct gvs_remote_side *src,
                           const struct gvs_remote_box *b,
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
