// printf in kernels: formats, output flushed at each kind of
// synchronization point and written between what the host printed before
// and after it, output larger than a pipe holds, and a printf FIFO size
// set by the program.
#include "check.h"

__global__ void hello(int tag)
{
    printf("kernel %d: int %d unsigned %u hex %x long %lld char %c\n", tag,
           -42, 42u, 0xbeefu, -1234567890123ll, 'g');
    printf("kernel %d: float %.3f double %.6e string %s %5d|%-5d|\n", tag,
           3.14159f, 2.718281828, "text", 7, 8);
}

// One thread prints its lines in order.
__global__ void many(int lines)
{
    for (int i = 0; i < lines; i++)
        printf("line %05d of a long run of device output\n", i);
}

__global__ void bump(int *p) { p[0]++; }

int main()
{
    size_t fifo = 0;
    CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4 << 20));
    CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
    printf("printf FIFO: %zu bytes\n", fifo);

    printf("host: before the first kernel\n");
    hello<<<1, 1>>>(1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("host: after cudaDeviceSynchronize\n");

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    hello<<<1, 1, 0, s>>>(2);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    printf("host: after cudaStreamSynchronize\n");

    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    hello<<<1, 1, 0, s>>>(3);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(ev, s));
    CHECK(cudaEventSynchronize(ev));
    printf("host: after cudaEventSynchronize\n");

    int *d, h = 0;
    CHECK(cudaMalloc(&d, sizeof(int)));
    CHECK(cudaMemset(d, 0, sizeof(int)));
    hello<<<1, 1>>>(4);
    bump<<<1, 1>>>(d);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
    printf("host: after a blocking cudaMemcpy (%d)\n", h);

    many<<<1, 1>>>(3000);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("host: after 3000 lines\n");

    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    return 0;
}
