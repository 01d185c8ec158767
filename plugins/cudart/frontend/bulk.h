/*
 * Chunked transfers between the program's memory and device memory,
 * shared by the synchronous copies (memcpy.c: MEMCPY_H2D/D2H) and the
 * stream-ordered ones (memasync.c: MEMCPY_ASYNC_H2D/D2H).  The two op
 * pairs differ only in a leading u64 stream on the wire.
 */
#ifndef CUDART_FE_BULK_H
#define CUDART_FE_BULK_H

#include "fe.h"

/* Where a transfer's requests go: op, and the stream to put first when
 * has_stream is set. */
struct fe_bulk_op {
    uint16_t op;
    int has_stream;
    uint64_t stream;
    /* gvs_remote_h2d's post_op: 0, or the op a one-piece copy the
     * frontend proved valid is posted as. */
    uint16_t post_op;
};

/* Host to device: request (stream), u64 dst, u32 len, the bytes.  Every
 * chunk but the last is posted; the backend latches the first failure,
 * which the last chunk's reply reports.  The bytes are sent before the
 * call returns, so src is free again, as CUDA stages pageable memory. */
cudaError_t fe_bulk_h2d(const struct fe_bulk_op *o, uint64_t dst,
                        const void *src, size_t count);
/* Device to host: request (stream), u64 src, u64 len; reply i32, blob.
 * A window of chunk requests is in flight; the client's receiver thread
 * reads each chunk's bytes straight into dst (gvs_client_expect_into).
 * Every reply sent for is collected, even after a failure, and the first
 * failure is the result; dst may then hold part of the bytes. */
cudaError_t fe_bulk_d2h(const struct fe_bulk_op *o, void *dst, uint64_t src,
                        size_t count);

#endif
