// Stream memory operations on page-locked memory the GPU reaches (shm://
// only: the client's memory is shared with the backend, which pins it):
// a write lands in the host's memory; a wait on it holds a stream until
// the host itself writes the value.
#include "../check.h"
#include "../driver_api.h"

__global__ void read_flag(const volatile unsigned *flag, unsigned *out)
{
    *out = *flag * 100;
}

int main()
{
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    if (driver_use_primary(0))
        return 1;
    volatile unsigned *h;
    unsigned *d, *out, got = 0;
    CHECK(cudaHostAlloc((void **)&h, 4096, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer((void **)&d, (void *)h, 0));
    CHECK(cudaMalloc(&out, sizeof(unsigned)));
    h[0] = 0;
    h[1] = 0;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // Loaded before any stream waits: CUDA loads a kernel at its first
    // launch (lazy loading), which would wait for the blocked stream.
    read_flag<<<1, 1, 0, s>>>(d, out);
    CHECK(cudaStreamSynchronize(s));

    CUresult r = DRIVER(cuStreamWriteValue32)(s, (CUdeviceptr)(d + 1),
                                              0xfeed, 0);
    CHECK(cudaStreamSynchronize(s));
    printf("write into host memory: %s, reads %x\n", driver_error_name(r),
           h[1]);

    r = DRIVER(cuStreamWaitValue32)(s, (CUdeviceptr)d, 1,
                                    CU_STREAM_WAIT_VALUE_EQ);
    read_flag<<<1, 1, 0, s>>>(d, out);
    CHECK(cudaGetLastError());
    printf("wait on host memory: %s, before the host's write: %s\n",
           driver_error_name(r), cudaGetErrorName(cudaStreamQuery(s)));
    h[0] = 1;
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
    printf("released by the host: %u\n", got);

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(out));
    CHECK(cudaFreeHost((void *)h));
    printf("done\n");
    return 0;
}
