// Stream attributes: set, read back, copied to another stream, on
// created and default streams.
#include "check.h"

int main()
{
    int *d;
    CHECK(cudaMalloc(&d, 1 << 20));
    cudaStream_t s, t;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamCreate(&t));

    cudaStreamAttrValue v = {};
    v.syncPolicy = cudaSyncPolicyYield;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy,
                                 &v));
    v = {};
    v.accessPolicyWindow.base_ptr = d;
    v.accessPolicyWindow.num_bytes = 1 << 16;
    v.accessPolicyWindow.hitRatio = 0.5f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow,
                                 &v));
    v = {};
    v.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomain, &v));

    cudaStreamAttrValue got = {};
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy,
                                 &got));
    printf("sync policy %d\n", (int)got.syncPolicy);
    got = {};
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow,
                                 &got));
    printf("window same base %d bytes %zu hit %.2f props %d %d\n",
           got.accessPolicyWindow.base_ptr == d,
           got.accessPolicyWindow.num_bytes,
           got.accessPolicyWindow.hitRatio,
           (int)got.accessPolicyWindow.hitProp,
           (int)got.accessPolicyWindow.missProp);
    got = {};
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeMemSyncDomain, &got));
    printf("mem sync domain %d\n", (int)got.memSyncDomain);

    CHECK(cudaStreamCopyAttributes(t, s));
    got = {};
    CHECK(cudaStreamGetAttribute(t, cudaStreamAttributeSynchronizationPolicy,
                                 &got));
    printf("copied sync policy %d\n", (int)got.syncPolicy);
    got = {};
    CHECK(cudaStreamGetAttribute(t, cudaStreamAttributeAccessPolicyWindow,
                                 &got));
    printf("copied window bytes %zu\n", got.accessPolicyWindow.num_bytes);

    // A stream created with a priority reports it as an attribute.
    int least, greatest;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t hi;
    CHECK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest));
    got = {};
    CHECK(cudaStreamGetAttribute(hi, cudaStreamAttributePriority, &got));
    printf("priority is greatest %d\n", got.priority == greatest);


    // Work still runs on the streams.
    CHECK(cudaMemsetAsync(d, 1, 1 << 20, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned char h = 0;
    CHECK(cudaMemcpy(&h, d + 1000, 1, cudaMemcpyDeviceToHost));
    printf("memset on the stream %d\n", h);

    v = {};
    v.accessPolicyWindow.num_bytes = 0;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow,
                                 &v));
    CHECK(cudaStreamDestroy(hi));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(t));
    CHECK(cudaFree(d));
    printf("done\n");
    return 0;
}
