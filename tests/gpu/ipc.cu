// CUDA IPC (CUDA Programming Guide, "Interprocess Communication"): the
// process forks before any CUDA call; the parent allocates and fills
// device memory, records an interprocess event, and sends both handles
// through a pipe; the child opens them, waits on the event, reads the
// memory and answers a checksum.  Only the parent prints, after the
// child has exited, so the output is deterministic.
#include "check.h"

#include <sys/wait.h>
#include <unistd.h>

struct handles {
    cudaIpcMemHandle_t mem;
    cudaIpcEventHandle_t ev;
};

static const int N = 1024;

// The child's answer: its first failing call's error, or the sum.
struct answer {
    int error;
    long sum;
};

static int child(int in, int out)
{
    handles h;
    answer a = {0, 0};
    if (read(in, &h, sizeof(h)) != (ssize_t)sizeof(h))
        return 1; // the parent failed before sending
    int *p = NULL;
    cudaEvent_t ev;
    cudaError_t e = cudaIpcOpenMemHandle((void **)&p, h.mem,
                                         cudaIpcMemLazyEnablePeerAccess);
    if (e == cudaSuccess)
        e = cudaIpcOpenEventHandle(&ev, h.ev);
    if (e == cudaSuccess)
        e = cudaEventSynchronize(ev);
    static int host[N];
    if (e == cudaSuccess)
        e = cudaMemcpy(host, p, sizeof(host), cudaMemcpyDeviceToHost);
    for (int i = 0; e == cudaSuccess && i < N; i++)
        a.sum += host[i];
    if (e == cudaSuccess)
        e = cudaEventDestroy(ev);
    if (e == cudaSuccess)
        e = cudaIpcCloseMemHandle(p);
    a.error = e;
    return write(out, &a, sizeof(a)) == (ssize_t)sizeof(a) ? 0 : 1;
}

__global__ void fill(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = i;
}

// Runs the parent's side; the first failing call's error.
static cudaError_t parent(int out, int in, answer *a)
{
    int *p;
    cudaEvent_t ev;
    handles h;
    cudaError_t e = cudaMalloc(&p, N * sizeof(int));
    if (e != cudaSuccess)
        return e;
    e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming |
                                          cudaEventInterprocess);
    if (e != cudaSuccess)
        return e;
    fill<<<N / 256, 256>>>(p, N);
    if ((e = cudaEventRecord(ev, 0)) != cudaSuccess ||
        (e = cudaIpcGetMemHandle(&h.mem, p)) != cudaSuccess ||
        (e = cudaIpcGetEventHandle(&h.ev, ev)) != cudaSuccess)
        return e;
    if (write(out, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
        read(in, a, sizeof(*a)) != (ssize_t)sizeof(*a))
        return cudaErrorUnknown;
    if ((e = cudaEventDestroy(ev)) != cudaSuccess)
        return e;
    return cudaFree(p);
}

int main()
{
    int down[2], up[2];
    EXPECT(pipe(down) == 0 && pipe(up) == 0);
    fflush(stdout);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        _exit(child(down[0], up[1]));
    }
    close(down[0]);
    close(up[1]);
    answer a = {-1, 0};
    cudaError_t e = parent(down[1], up[0], &a);
    close(down[1]);
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid);
    CHECK(e);
    printf("child: %s, sum %ld (expected %ld)\n",
           cudaGetErrorName((cudaError_t)a.error), a.sum,
           (long)N * (N - 1) / 2);
    printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
