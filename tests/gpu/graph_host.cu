// Graph memcpy nodes of host memory (issue 11, item 2): a graph copies
// host memory in, runs a kernel on it and copies it back out, at each
// launch reading and writing the host memory as it is then, for
// page-locked and for pageable memory, launched on two streams in turn,
// through a clone, and with its output node moved to other memory in
// the executable graph.  Natively and through gvs over every transport
// (page-locked memory shared with the worker over shm and unix, the
// bytes moved around each launch otherwise).  Prints checksums.
#include <cstdlib>
#include <cstring>

#include "check.h"

__global__ void twice(unsigned *p, size_t n, unsigned add)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * 2u + add;
}

static unsigned long long sum(const unsigned *p, size_t n)
{
    unsigned long long s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31 + p[i];
    return s;
}

static void run(const char *what, unsigned *in, unsigned *out, unsigned *out2,
                size_t n)
{
    unsigned *d;
    CHECK(cudaMalloc(&d, n * sizeof(unsigned)));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t up, k, down;
    CHECK(cudaGraphAddMemcpyNode1D(&up, g, NULL, 0, d, in, n * sizeof(unsigned),
                                   cudaMemcpyHostToDevice));
    unsigned add = 7;
    size_t count = n;
    void *args[] = {&d, &count, &add};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)twice;
    kp.gridDim = dim3((unsigned)((n + 255) / 256));
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&k, g, &up, 1, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&down, g, &k, 1, out, d,
                                   n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    cudaMemcpy3DParms p = {};
    CHECK(cudaGraphMemcpyNodeGetParams(down, &p));
    printf("%s: output node names the program's memory: %s\n", what,
           p.dstPtr.ptr == out && p.kind == cudaMemcpyDeviceToHost ? "yes" : "no");
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    cudaStream_t s[2];
    CHECK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
    for (unsigned round = 0; round < 4; round++) {
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned)(i * 13 + round);
        memset(out, 0, n * sizeof(unsigned));
        CHECK(cudaGraphLaunch(x, s[round % 2]));
        CHECK(cudaStreamSynchronize(s[round % 2]));
        printf("%s: launch %u: %llx\n", what, round, sum(out, n));
    }
    CHECK(cudaGraphExecMemcpyNodeSetParams1D(x, down, out2, d,
                                             n * sizeof(unsigned),
                                             cudaMemcpyDeviceToHost));
    memset(out2, 0, n * sizeof(unsigned));
    CHECK(cudaGraphLaunch(x, s[0]));
    CHECK(cudaStreamSynchronize(s[0]));
    printf("%s: moved output: %llx\n", what, sum(out2, n));
    cudaGraph_t c;
    cudaGraphExec_t cx;
    CHECK(cudaGraphClone(&c, g));
    CHECK(cudaGraphInstantiate(&cx, c, 0));
    for (size_t i = 0; i < n; i++)
        in[i] = (unsigned)(i * 5 + 1);
    CHECK(cudaGraphLaunch(cx, s[1]));
    CHECK(cudaDeviceSynchronize());
    printf("%s: clone: %llx\n", what, sum(out, n));
    CHECK(cudaGraphExecDestroy(cx));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(c));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s[0]));
    CHECK(cudaStreamDestroy(s[1]));
    CHECK(cudaFree(d));
}

int main()
{
    const size_t n = (size_t)3 << 20;
    unsigned *in, *out, *out2;
    CHECK(cudaMallocHost((void **)&in, n * sizeof(unsigned)));
    CHECK(cudaMallocHost((void **)&out, n * sizeof(unsigned)));
    CHECK(cudaMallocHost((void **)&out2, n * sizeof(unsigned)));
    run("page-locked", in, out, out2, n);
    CHECK(cudaFreeHost(in));
    CHECK(cudaFreeHost(out));
    CHECK(cudaFreeHost(out2));
    unsigned *pin = (unsigned *)malloc(n * sizeof(unsigned));
    unsigned *pout = (unsigned *)malloc(n * sizeof(unsigned));
    unsigned *pout2 = (unsigned *)malloc(n * sizeof(unsigned));
    if (pin == NULL || pout == NULL || pout2 == NULL)
        return 1;
    run("pageable", pin, pout, pout2, n);
    free(pin);
    free(pout);
    free(pout2);
    return 0;
}
