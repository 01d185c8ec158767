/*
 * Functions the frontend does not implement are generated stubs
 * (tools/apigen/gvs_unsupported.py): each fails with
 * cudaErrorNotSupported (or its return type's failure value), records it
 * as the thread's last error like any failing call, and says so once on
 * stderr, which run_unsupported.py checks.  Graphics interop and the
 * undocumented entry points below are ones gvs has no plan to forward.
 */
#include <pthread.h>
#include <stdio.h>

#include <cuda_runtime_api.h>
#include <cuda_egl_interop.h>
#include <cuda_gl_interop.h>
#include <cuda_vdpau_interop.h>

/* No toolkit header declares these. */
void *__cudaGetProcAddress(void);
void __cudaRegisterUnifiedTable(void **fatCubinHandle, void *arg1, void *arg2,
                                void *arg3, void *arg4);

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                    \
            return 1;                                                         \
        }                                                                     \
    } while (0)

static void *register_buffer(void *out)
{
    struct cudaGraphicsResource *res = NULL;
    *(cudaError_t *)out = cudaGraphicsGLRegisterBuffer(&res, 1, 0);
    return NULL;
}

int main(void)
{
    int n = 0;
    EXPECT(cudaGetDeviceCount(&n) == cudaSuccess && n > 0);
    EXPECT(cudaGetLastError() == cudaSuccess);

    struct cudaGraphicsResource *res = NULL;
    EXPECT(cudaGraphicsGLRegisterBuffer(&res, 1, 0) == cudaErrorNotSupported);
    EXPECT(res == NULL);
    EXPECT(cudaPeekAtLastError() == cudaErrorNotSupported);
    EXPECT(cudaGetLastError() == cudaErrorNotSupported);
    EXPECT(cudaGetLastError() == cudaSuccess);

    /* Said once per function, whichever thread calls it again. */
    pthread_t t;
    cudaError_t r = cudaSuccess;
    EXPECT(pthread_create(&t, NULL, register_buffer, &r) == 0);
    EXPECT(pthread_join(t, NULL) == 0);
    EXPECT(r == cudaErrorNotSupported);
    /* The last error is per thread. */
    EXPECT(cudaGetLastError() == cudaSuccess);

    int dev = -1;
    EXPECT(cudaVDPAUGetDevice(&dev, 0, NULL) == cudaErrorNotSupported);
    EXPECT(dev == -1);
    cudaEglStreamConnection conn = NULL;
    EXPECT(cudaEGLStreamConsumerDisconnect(&conn) == cudaErrorNotSupported);
    EXPECT(cudaGetLastError() == cudaErrorNotSupported);

    /* Other return types: their failure value, and the last error. */
    EXPECT(__cudaGetProcAddress() == NULL);
    EXPECT(cudaGetLastError() == cudaErrorNotSupported);
    __cudaRegisterUnifiedTable(NULL, NULL, NULL, NULL, NULL);
    EXPECT(cudaGetLastError() == cudaErrorNotSupported);

    /* Nothing sticky: the session goes on. */
    EXPECT(cudaGetDeviceCount(&n) == cudaSuccess);
    EXPECT(cudaGetLastError() == cudaSuccess);
    printf("ok\n");
    return 0;
}
