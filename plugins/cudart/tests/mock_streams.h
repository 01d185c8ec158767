/* Between the mock files (cudart.mock_e2e): streams and the device. */
#ifndef CUDART_MOCK_STREAMS_H
#define CUDART_MOCK_STREAMS_H

/* mock_cudart.c: the calling thread's current device. */
int mock_current_device(void);

/* mock_streams.c: waits until every stream has done its work. */
void mock_streams_drain(void);

/* mock_pinned.c: whether p lies in page-locked memory of cudaHostAlloc. */
int mock_host_pinned(const void *p);

#endif
