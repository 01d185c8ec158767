// User objects: destructors run once the last reference goes, whether
// the program, a graph or an executable graph held it.
#include "check.h"
#include <unistd.h>

static volatile int destroyed;

static void CUDART_CB on_destroy(void *arg)
{
    destroyed += *(int *)arg;
}

// The destructor may run asynchronously: wait for it a while.
static void wait_for(int want, const char *what)
{
    for (int i = 0; i < 400 && destroyed != want; i++) {
        CHECK(cudaDeviceSynchronize());
        usleep(5000);
    }
    printf("%-36s %d\n", what, destroyed);
    EXPECT(destroyed == want);
}

__global__ void nop() {}

int main()
{
    int one = 1, ten = 10, hundred = 100;
    cudaUserObject_t o;
    CHECK(cudaUserObjectCreate(&o, &one, on_destroy, 2,
                               cudaUserObjectNoDestructorSync));
    CHECK(cudaUserObjectRetain(o, 2));
    CHECK(cudaUserObjectRelease(o, 3));
    usleep(20000);
    printf("%-36s %d\n", "one reference left", destroyed);
    CHECK(cudaUserObjectRelease(o, 1));
    wait_for(1, "released by the program");

    // Moved into a graph: goes with the graph.
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaUserObjectCreate(&o, &ten, on_destroy, 1,
                               cudaUserObjectNoDestructorSync));
    CHECK(cudaGraphRetainUserObject(g, o, 1, cudaGraphUserObjectMove));
    CHECK(cudaGraphRetainUserObject(g, o, 2, 0));
    CHECK(cudaGraphReleaseUserObject(g, o, 2));
    CHECK(cudaUserObjectRelease(o, 2));
    cudaGraphNode_t k;
    cudaKernelNodeParams kp = {};
    kp.func = (void *)nop;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    CHECK(cudaGraphAddKernelNode(&k, g, NULL, 0, &kp));
    // The executable graph holds its own reference.
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphDestroy(g));
    usleep(20000);
    printf("%-36s %d\n", "graph gone, executable graph kept", destroyed);
    CHECK(cudaGraphLaunch(x, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGraphExecDestroy(x));
    wait_for(11, "executable graph destroyed");

    // Through capture: a graph retains an object for a captured launch.
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaUserObjectCreate(&o, &hundred, on_destroy, 1,
                               cudaUserObjectNoDestructorSync));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    nop<<<1, 1, 0, s>>>();
    cudaGraph_t cg;
    CHECK(cudaStreamEndCapture(s, &cg));
    CHECK(cudaGraphRetainUserObject(cg, o, 1, cudaGraphUserObjectMove));
    CHECK(cudaGraphInstantiate(&x, cg, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(cg));
    wait_for(111, "captured graph and its exec gone");

    printf("null destructor %s\n",
           cudaGetErrorName(cudaUserObjectCreate(
               &o, &one, NULL, 1, cudaUserObjectNoDestructorSync)));
    cudaGetLastError();
    CHECK(cudaStreamDestroy(s));
    printf("done\n");
    return 0;
}
