/* Between the mock files (cudart.mock_e2e): streams and the device. */
#ifndef CUDART_MOCK_STREAMS_H
#define CUDART_MOCK_STREAMS_H

#include <cuda.h>

/* mock_cudart.c: the calling thread's current device. */
int mock_current_device(void);

/* mock_cudart.c: the driver's cuPointerGetAttributes, which the backend
 * reaches through cudaGetDriverEntryPointByVersion (mock_kernels.c). */
CUresult mock_cuPointerGetAttributes(unsigned n, CUpointer_attribute *which,
                                     void **data, CUdeviceptr p);

/* mock_kernels.c: the primary context of device (0 or 1) of the mock
 * driver's answers (a stream's is the current device's). */
CUcontext mock_context(int device);

/* mock_pinned.c: frees (unmaps) every page-locked allocation, as a
 * device reset does. */
void mock_pinned_reset(void);

/* mock_streams.c: waits until every stream has done its work. */
void mock_streams_drain(void);

/* mock_cudart.c: whether the GPU could touch [p, p + len) without a
 * fault: p in no "device" allocation (the worker's own memory), or the
 * range inside p's.  The backend lets a range across allocations pass
 * when both ends are device memory, as CUDA's calls do; the mock's
 * allocations have gaps between them, where a GPU faults:
 * cudaErrorIllegalAddress. */
int mock_dev_ok(const void *p, size_t len);

/* mock_pinned.c: whether p lies in page-locked memory of cudaHostAlloc. */
int mock_host_pinned(const void *p);

/* mock_streams.c: the copies cudaMemcpyAsync took from device memory
 * into page-locked memory (the worker's reads ahead, among others). */
unsigned long long mock_d2h_pinned_copies(void);

#endif
