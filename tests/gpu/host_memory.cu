// Page-locked host memory: allocation flags, registration, the flags
// CUDA reports, and the errors of misuse.  (Device pointers of mapped
// memory are not compared: through gvs the GPU cannot reach client
// memory, docs/cudart.md.)
#include "check.h"
#include <cstdlib>
#include <cstring>

int main()
{
    void *p = (void *)1;
    unsigned flags = 0;
    CHECK(cudaMallocHost(&p, 0));
    printf("zero bytes: %s\n", p == NULL ? "null" : "not null");
    printf("null pointer: %s\n", cudaGetErrorName(cudaMallocHost(NULL, 16)));
    printf("bad flags: %s\n",
           cudaGetErrorName(cudaHostAlloc(&p, 16, 0x10)));
    const unsigned sets[] = {cudaHostAllocDefault, cudaHostAllocPortable,
                             cudaHostAllocMapped, cudaHostAllocWriteCombined,
                             cudaHostAllocPortable | cudaHostAllocMapped |
                                 cudaHostAllocWriteCombined};
    for (unsigned f : sets) {
        CHECK(cudaHostAlloc(&p, 4096, f));
        memset(p, 1, 4096);
        CHECK(cudaHostGetFlags(&flags, p));
        unsigned inner = 0;
        CHECK(cudaHostGetFlags(&inner, (char *)p + 100));
        printf("alloc flags %u: reported %u, inside %u\n", f, flags, inner);
        CHECK(cudaFreeHost(p));
    }
    CHECK(cudaMallocHost(&p, 100));
    CHECK(cudaHostGetFlags(&flags, p));
    printf("cudaMallocHost flags: %u\n", flags);
    printf("free inside: %s\n", cudaGetErrorName(cudaFreeHost((char *)p + 8)));
    CHECK(cudaFreeHost(p));
    CHECK(cudaFreeHost(NULL));

    char *q = (char *)malloc(1 << 20);
    printf("free malloc'd: %s\n", cudaGetErrorName(cudaFreeHost(q)));
    printf("flags of malloc'd: %s\n", cudaGetErrorName(cudaHostGetFlags(&flags, q)));
    printf("unregister unknown: %s\n", cudaGetErrorName(cudaHostUnregister(q)));
    printf("register 0 bytes: %s\n", cudaGetErrorName(cudaHostRegister(q, 0, 0)));
    printf("register null: %s\n",
           cudaGetErrorName(cudaHostRegister(NULL, 4096, 0)));
    printf("register bad flags: %s\n",
           cudaGetErrorName(cudaHostRegister(q, 4096, 0x100)));
    printf("register I/O memory: %s\n",
           cudaGetErrorName(cudaHostRegister(q, 4096, cudaHostRegisterIoMemory)));
    EXPECT(cudaGetLastError() != cudaSuccess);
    CHECK(cudaHostRegister(q, 1 << 20, 0));
    CHECK(cudaHostGetFlags(&flags, q));
    printf("registered flags: %u\n", flags);
    printf("register again: %s\n",
           cudaGetErrorName(cudaHostRegister(q, 1 << 20, 0)));
    printf("register inside: %s\n",
           cudaGetErrorName(cudaHostRegister(q + 4096, 4096, 0)));
    printf("unregister inside: %s\n",
           cudaGetErrorName(cudaHostUnregister(q + 8)));
    EXPECT(cudaGetLastError() != cudaSuccess);

    // Registered memory is a copy's end like any host memory.
    int *d;
    CHECK(cudaMalloc(&d, 1 << 20));
    memset(q, 9, 1 << 20);
    CHECK(cudaMemcpy(d, q, 1 << 20, cudaMemcpyDefault));
    memset(q, 0, 1 << 20);
    CHECK(cudaMemcpyAsync(q, d, 1 << 20, cudaMemcpyDefault, 0));
    CHECK(cudaStreamSynchronize(0));
    printf("copies through registered memory: %s\n",
           q[0] == 9 && q[(1 << 20) - 1] == 9 ? "ok" : "WRONG");
    CHECK(cudaFree(d));
    CHECK(cudaHostUnregister(q));
    printf("unregister twice: %s\n", cudaGetErrorName(cudaHostUnregister(q)));
    CHECK(cudaHostRegister(q + 3, 100, cudaHostRegisterMapped |
                                           cudaHostRegisterPortable));
    CHECK(cudaHostGetFlags(&flags, q + 3));
    printf("unaligned registration flags: %u\n", flags);
    CHECK(cudaHostRegister(q + 8192, 4096, cudaHostRegisterReadOnly));
    CHECK(cudaHostGetFlags(&flags, q + 8192));
    printf("read-only registration flags: %u\n", flags);
    CHECK(cudaHostUnregister(q + 3));
    CHECK(cudaHostUnregister(q + 8192));
    free(q);
    EXPECT(cudaGetLastError() != cudaSuccess);
    printf("done\n");
    return 0;
}
