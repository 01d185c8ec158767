/*
 * 2D/3D copies on the frontend side (frontend/copy3d.c): every pitched,
 * 3D and array copy of the API comes down to one box of rows moved
 * between two "sides".  Host sides are the program's memory: their rows
 * are packed into (or unpacked from) the requests, never sent as
 * pointers.  Device and array sides travel as the wire form of
 * plugins/cudart/api/50-arrays.api.
 */
#ifndef CUDART_FE_MEM3D_H
#define CUDART_FE_MEM3D_H

#include "fe.h"

/* Per-thread default stream entry points of the calls here
 * (cuda_runtime_api.h declares them only under that option). */
#pragma GCC visibility push(default)
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                   size_t spitch, size_t width, size_t height,
                                   enum cudaMemcpyKind kind,
                                   cudaStream_t stream);
cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t wOffset,
                                     size_t hOffset, const void *src,
                                     size_t spitch, size_t width,
                                     size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset,
                                          size_t hOffset, const void *src,
                                          size_t spitch, size_t width,
                                          size_t height,
                                          enum cudaMemcpyKind kind,
                                          cudaStream_t stream);
cudaError_t cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch,
                                       cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width,
                                       size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch,
                                            cudaArray_const_t src,
                                            size_t wOffset, size_t hOffset,
                                            size_t width, size_t height,
                                            enum cudaMemcpyKind kind,
                                            cudaStream_t stream);
cudaError_t cudaMemcpy2DArrayToArray_ptds(
    cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
    cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t width,
    size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p);
cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                   cudaStream_t stream);
cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value,
                              size_t width, size_t height);
cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
                                   size_t width, size_t height,
                                   cudaStream_t stream);
cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                              struct cudaExtent extent);
cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr,
                                   int value, struct cudaExtent extent,
                                   cudaStream_t stream);
#pragma GCC visibility pop

enum fe_side_kind {
    FE_SIDE_DEVICE = 0, /* wire values */
    FE_SIDE_ARRAY = 1,
    FE_SIDE_HOST = 2,
    FE_SIDE_SHARED = 3, /* host memory shared with the backend: graph
                         * copy nodes only (remote_box.h) */
};

/* Row r of slice s starts at addr + (z + s) * ysize * pitch +
 * (y + r) * pitch + x: x in bytes, also for arrays. */
struct fe_side {
    enum fe_side_kind kind;
    uint64_t addr; /* host or device address, or array id */
    uint64_t pitch;
    uint64_t ysize; /* rows per slice */
    uint64_t x, y, z;
};

/* Width in bytes, height in rows, depth in slices. */
struct fe_box {
    uint64_t w, h, d;
};

/* Copies box from src to dst.  async: in stream (a wire value), as the
 * *Async calls; else synchronously.  An empty box copies nothing. */
cudaError_t fe_copy3d(const struct fe_side *dst, const struct fe_side *src,
                      const struct fe_box *box, int async, uint64_t stream);

/* The side of a pointer for a copy of the given kind, dst or not:
 * cudaMemcpyDefault asks the allocation map (frontend/memory.c). */
enum fe_side_kind fe_ptr_side(const void *p, enum cudaMemcpyKind kind,
                              int is_dst);

/* Checks a copy's direction against what the CUDA call accepts. */
int fe_kind_valid(enum cudaMemcpyKind kind);

/* frontend/arrays.c: the array id of a cudaArray_t given to the program
 * and its element size in bytes; cudaErrorInvalidResourceHandle for an
 * array we did not hand out. */
cudaError_t fe_array_lookup(cudaArray_const_t a, uint64_t *id, size_t *elem);

/* frontend/arrays.c: an array's row in bytes and its rows (1 for a 1D
 * array), from the backend; cudaErrorInvalidValue for an array whose
 * elements are not whole bytes. */
cudaError_t fe_array_rows(cudaArray_const_t a, size_t *row_bytes,
                          size_t *rows);

/* The wire form of a device or array side (put on c). */
void fe_put_side(struct apigen_call *c, const struct fe_side *s);
void fe_put_box(struct apigen_call *c, const struct fe_box *b);

/* Turns a cudaMemcpy3DParms into sides and a box in bytes: elements of
 * an array side are converted with its element size.  Host sides are
 * client memory. */
cudaError_t fe_copy3d_params(const struct cudaMemcpy3DParms *p,
                             struct fe_side *dst, struct fe_side *src,
                             struct fe_box *box);

#endif
