// cudaLaunchKernelEx with launch attributes: clusters given at launch
// (each block reports its rank in its cluster), a priority, programmatic
// stream serialization on a stream, a completion event, the cooperative
// attribute; and the codes of a cluster that does not divide the grid and
// of an attribute CUDA does not know.  Clusters need sm_90 or later: on
// an older GPU the cluster launches are left out.
#include "check.h"
#include <cooperative_groups.h>
#include <cstring>
#include <vector>

namespace cg = cooperative_groups;

__global__ void ranks(int *out, int tag)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    cg::cluster_group c = cg::this_cluster();
    if (threadIdx.x == 0)
        out[blockIdx.x] = tag * 1000 + (int)c.block_rank() * 10 +
                          (int)c.num_blocks();
#endif
}

__global__ void add(int *out, int v)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] += v;
}

static void print_ranks(const char *what, int *d, int n)
{
    std::vector<int> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    printf("%s:", what);
    for (int v : h)
        printf(" %d", v);
    printf("\n");
}

int main()
{
    const int n = 8;
    int *d;
    CHECK(cudaMalloc(&d, 1024 * sizeof(int)));
    CHECK(cudaMemset(d, 0, 1024 * sizeof(int)));

    cudaLaunchAttribute attrs[4];
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(n);
    cfg.blockDim = dim3(32);
    cfg.attrs = attrs;
    cudaError_t e;
    if (built_for_clusters((const void *)ranks)) {
        for (unsigned x : {1u, 2u, 4u, 8u}) {
            attrs[0].id = cudaLaunchAttributeClusterDimension;
            attrs[0].val.clusterDim.x = x;
            attrs[0].val.clusterDim.y = 1;
            attrs[0].val.clusterDim.z = 1;
            cfg.numAttrs = 1;
            CHECK(cudaLaunchKernelEx(&cfg, ranks, d, (int)x));
            char what[32];
            snprintf(what, sizeof(what), "clusters of %u", x);
            print_ranks(what, d, n);
        }
        cfg.gridDim = dim3(6);
        attrs[0].val.clusterDim.x = 4;
        e = cudaLaunchKernelEx(&cfg, ranks, d, 0);
        printf("cluster of 4 over 6 blocks: %s\n", cudaGetErrorName(e));
        printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    } else {
        printf("clusters: not in the code this GPU runs\n");
    }

    // Each attribute alone, on a stream of the program's: what CUDA
    // accepts adds 1, what it refuses says why.
    int lo = 0, hi = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t s;
    cudaEvent_t done;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&done));
    CHECK(cudaMemset(d, 0, 1024 * sizeof(int)));
    CHECK(cudaDeviceSynchronize()); // s does not wait for the legacy stream
    cudaLaunchAttribute one[6];
    memset(one, 0, sizeof(one));
    one[0].id = cudaLaunchAttributePriority;
    one[0].val.priority = hi;
    one[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    one[1].val.programmaticStreamSerializationAllowed = 1;
    one[2].id = cudaLaunchAttributeLaunchCompletionEvent;
    one[2].val.launchCompletionEvent.event = done;
    one[3].id = cudaLaunchAttributeMemSyncDomain;
    one[3].val.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    one[4].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
    one[4].val.sharedMemCarveout = 50;
    one[5].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
    one[5].val.clusterSchedulingPolicyPreference =
        cudaClusterSchedulingPolicySpread;
    cfg.gridDim = dim3(4);
    cfg.blockDim = dim3(64);
    cfg.stream = s;
    cfg.numAttrs = 1;
    for (int i = 0; i < 6; i++) {
        cfg.attrs = &one[i];
        e = cudaLaunchKernelEx(&cfg, add, d, 1);
        printf("attribute %d alone: %s\n", (int)one[i].id,
               cudaGetErrorName(e));
        cudaGetLastError();
    }
    // The same pair five times: after the first, gvs posts them.
    cfg.attrs = one;
    cfg.numAttrs = 2;
    for (int i = 0; i < 5; i++)
        e = cudaLaunchKernelEx(&cfg, add, d, 1);
    printf("priority and serialization, 5 times: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    CHECK(cudaStreamSynchronize(s));
    std::vector<int> h(256);
    CHECK(cudaMemcpy(h.data(), d, 256 * sizeof(int), cudaMemcpyDeviceToHost));
    int same = 0;
    for (int v : h)
        same += v == h[0];
    printf("launches that ran: %d, on all 256 threads: %s\n", h[0],
           same == 256 ? "yes" : "NO");
    cfg.attrs = attrs;

    // The cooperative attribute, through the same entry point.
    attrs[0].id = cudaLaunchAttributeCooperative;
    attrs[0].val.cooperative = 1;
    cfg.numAttrs = 1;
    cfg.stream = 0;
    CHECK(cudaMemset(d, 0, 1024 * sizeof(int)));
    CHECK(cudaLaunchKernelEx(&cfg, add, d, 10));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), d, sizeof(int), cudaMemcpyDeviceToHost));
    printf("cooperative attribute: %d\n", h[0]);

    attrs[0].id = (cudaLaunchAttributeID)99;
    e = cudaLaunchKernelEx(&cfg, add, d, 1);
    printf("unknown attribute: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    cfg.dynamicSmemBytes = 1 << 20;
    cfg.numAttrs = 0;
    e = cudaLaunchKernelEx(&cfg, add, d, 1);
    printf("1 MiB of dynamic shared memory: %s\n", cudaGetErrorName(e));
    cudaGetLastError();

    CHECK(cudaEventDestroy(done));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    return 0;
}
