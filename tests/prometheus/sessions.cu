// One session of the Prometheus test (run_prometheus.py): memory, a
// launch and copies both ways through gvs, on the CUDA runtime mock of
// plugins/cudart/tests (whose kernels are known by name: empty() is one).
// With the argument "hold" it keeps its memory until its standard input
// ends.  Prints "ok".
#include <stdio.h>
#include <string.h>

__global__ void empty() {}

#define OK(call)                                                            \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) {                                            \
            printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e_));        \
            return 1;                                                       \
        }                                                                   \
    } while (0)

int main(int argc, char **argv)
{
    static int h[4096], back[4096];
    int *d;
    for (int i = 0; i < 4096; i++)
        h[i] = i * 7;
    OK(cudaMalloc(&d, sizeof(h)));
    OK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    empty<<<1, 32>>>();
    OK(cudaGetLastError());
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(back, d, sizeof(back), cudaMemcpyDeviceToHost));
    if (argc > 1 && strcmp(argv[1], "hold") == 0) {
        printf("holding\n");
        fflush(stdout);
        while (getchar() != EOF)
            ;
    }
    OK(cudaFree(d));
    if (memcmp(h, back, sizeof(h)) != 0) {
        printf("FAIL: the copy came back different\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
