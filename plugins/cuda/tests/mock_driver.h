/*
 * The parts of the mock driver (mock_driver.c) that live in files of
 * their own, which fill cuda_be_drv.
 */
#ifndef CUDA_MOCK_DRIVER_H
#define CUDA_MOCK_DRIVER_H

/* A stream created with this priority carries a persistent error,
 * CUDA_ERROR_LAUNCH_FAILED, which its stream callbacks get as status and
 * its stream-ordered copies to the device return. */
#define MOCK_BROKEN_PRIORITY (-99)

/* mock_callbacks.c: fills cuda_be_drv's host functions and stream
 * callbacks, and the stream synchronization and query, which wait for
 * them or see them. */
void mock_callbacks_fill(void);
/* Returns once every host function enqueued has returned. */
CUresult mock_callbacks_wait(void);
/* mock_arrays.c: arrays, mipmapped arrays, 3D copies, texture and
 * surface objects. */
void mock_arrays_fill(void);
/* mock_peer.c: peer access and peer copies. */
void mock_peer_fill(void);
/* mock_link.c: JIT linking. */
void mock_link_fill(void);
/* mock_link.c: writes msg into the log buffer buf_opt names among n
 * options, cut to the size size_opt gives, which then says the bytes
 * written with the NUL, as the driver does. */
void mock_jit_log(unsigned n, const CUjit_option *opt, void **val,
                  CUjit_option buf_opt, CUjit_option size_opt,
                  const char *msg);
/* mock_batch.c: batched prefetches, discards and copies; the copies'
 * batches so far and the copies they held. */
void mock_batch_fill(void);
void mock_batch_counts(unsigned long long *calls, unsigned long long *copies);

/* mock_vmm.c: the virtual memory API.  mock_vmm_range: whether p is
 * mapped, and (base not NULL) its mapping's range. */
void mock_vmm_fill(void);
int mock_vmm_range(CUdeviceptr p, CUdeviceptr *base, size_t *size);
/* mock_memops.c: stream memory operations and tensor maps.  check: the
 * driver's checks of one operation; run: it, done at once. */
void mock_memops_fill(void);
CUresult mock_memop_check(const CUstreamBatchMemOpParams *op);
void mock_memop_run(const CUstreamBatchMemOpParams *op);

/* Text starting so is a module (or library) image (mock_driver.c). */
#define MOCK_IMAGE "//gvs-mock"

#endif
